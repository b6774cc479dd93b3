"""What the regions of a compound statement write: the names they bind, and the names
whose objects they change in place (the control dependence of the value-kind analysis)."""

from __future__ import annotations

from analyzer.analyses.kinds import torch_api as api
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names, target_names

_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "remove", "clear"})


def written_names(stmt) -> set[str]:
    """Names a compound statement's regions bind or mutate (`lst.append`, `d[k] = v`)."""
    blocks = ir.child_blocks(stmt)
    names = set().union(*(assigned_names(b) for b in blocks)) if blocks else set()
    names |= mutated_names(stmt)
    if isinstance(stmt, ir.Loop) and stmt.target is not None:
        names |= target_names(stmt.target)
    return names


def mutated_names(stmt) -> set[str]:
    """Names whose object a compound statement's regions change in place: `lst.append(v)`,
    `t[i] = v`, `t[i] += v`, `x.add_(1)`."""
    names: set[str] = set()
    for b in ir.child_blocks(stmt):
        for s in ir.walk_statements(b):
            for e in ir.child_expressions(s):
                for sub in ir.walk_expression(e):
                    if (isinstance(sub, ir.Call) and isinstance(sub.func, ir.Attribute)
                            and isinstance(sub.func.value, ir.Name)
                            and (sub.func.attr in _MUTATORS or api.is_inplace_method(sub.func.attr))):
                        names.add(sub.func.value.id)
            targets = s.targets if isinstance(s, ir.Assign) else [s.target] if isinstance(s, ir.AugAssign) else []
            for t in targets:
                if isinstance(t, ir.Subscript) and isinstance(t.value, ir.Name):
                    names.add(t.value.id)
    return names
