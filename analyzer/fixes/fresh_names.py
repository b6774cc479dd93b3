"""Names a rewrite adds to a function (`true_fn`, `loop_stop`, ...) that do not collide
with any name the function already uses."""

from __future__ import annotations

from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names


def names_in(fn: ir.FunctionDef) -> set[str]:
    """Every name ``fn`` uses: its parameters, the names its expressions read or write, the
    functions it defines and the names it assigns, nested functions included."""
    taken = {p.name for p in fn.params}
    for s in ir.walk_statements(fn.body, into_defs=True):
        for e in ir.child_expressions(s):
            taken |= {sub.id for sub in ir.walk_expression(e) if isinstance(sub, ir.Name)}
        if isinstance(s, ir.FunctionDef):
            taken.add(s.name)
        elif not isinstance(s, ir.ClassDef):
            taken |= assigned_names([s])
    return taken


def fresh_names(fn: ir.FunctionDef, names: tuple[str, ...], line: int, crowded: bool = False) -> tuple[str, ...]:
    """``names`` as they are, or each suffixed with ``line`` when ``fn`` already uses one of
    them, or when it is ``crowded``: another rewrite in it may add the same names."""
    if crowded or set(names) & names_in(fn):
        return tuple(f"{name}_{line}" for name in names)
    return names
