"""Views whose base nothing reads again: a write through them is traced faithfully.

`v = base[0]` makes `v` a view of `base`. The legacy tracer records a write into `v` on
`v`'s own value: later uses of `v` see it, later uses of `base` do not (measured on
onnxruntime: `base.sum(0)` after `v[:, :2] = 7` keeps the old values), which is why such a
write is UT301 while `base` lives on. When `base` is a temporary read nowhere else, no use
can observe the difference:

    freqs_thw = freq[0]
    for dim, offset in enumerate((1, 2), start=1):
        freqs_thw[..., slice(offset, length, 3)] = freq[dim, ..., slice(offset, length, 3)]
    return torch.cat((freqs_thw, freqs_thw), dim=-1)

Requires: a function's IR. Computes (`UnreadBases`): the assignments `v = <view of base>`
after which `base` is mentioned only as the source of writes into `v` (`v[...] = base[...]`:
a copy between parts of one tensor, read from the values the trace and eager agree on).
Any other use of `base` anywhere in the function (an alias, a return, a read before or
after) keeps the view a view; assignments that bind `base` are its definitions. A `base` that is the function's own parameter is
taken as the temporary its callers pass (`cos = self.recompose(cos)`).
"""

from __future__ import annotations

from collections import defaultdict

from analyzer.analyses.kinds import torch_api as api
from analyzer.frontend import ir


class UnreadBases:
    """`stmt in UnreadBases(fn)`: `stmt` is such an assignment. The function is read once,
    on the first question (most functions never ask)."""

    def __init__(self, fn: ir.FunctionDef):
        self.fn = fn
        self._mentions: dict[str, set[int]] | None = None
        self._copy_sources: dict[str, list] = defaultdict(list)  # view name -> values written into it

    def __contains__(self, stmt) -> bool:
        if not (isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ir.Name)):
            return False
        view, base = stmt.targets[0].id, view_base(stmt.value)
        if base is None or base == view:
            return False
        if self._mentions is None:
            self._read()
        sources = (stmt.value, *self._copy_sources[view], *self._disjoint_views(stmt.value, base))
        allowed = {id(n) for value in sources for n in _names(value, base)}
        return self._mentions.get(base, set()) <= allowed

    def _disjoint_views(self, value, base: str) -> list:
        """The other rows of ``base`` bound to names (`past = pe[0]; future = pe[1]`) when
        ``value`` is one row at a constant index too: rows at distinct constants share no
        element, so a write through one is not seen through the other, in eager as in the
        trace. Those views are judged as views of their own."""
        row = _constant_row(value, base)
        if row is None:
            return []
        return [v for v in self._row_views.get(base, []) if _constant_row(v, base) not in (None, row)]

    def _read(self) -> None:
        self._mentions = defaultdict(set)
        self._row_views: dict[str, list] = defaultdict(list)  # base -> `base[k]` values bound to names
        for stmt in ir.walk_statements(self.fn.body, into_defs=True):
            bound = _bound_names(stmt)
            for root in ir.child_expressions(stmt):
                for node in ir.walk_expression(root):
                    if isinstance(node, ir.Name) and id(node) not in bound:
                        self._mentions[node.id].add(id(node))
            if isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ir.Name) \
                    and isinstance(stmt.value, ir.Subscript) and isinstance(stmt.value.value, ir.Name):
                self._row_views[stmt.value.value.id].append(stmt.value)
            if isinstance(stmt, ir.Assign):
                roots = {_root(t) if not isinstance(t, ir.Name) else None for t in stmt.targets}
                if len(roots) == 1 and None not in roots:
                    self._copy_sources[roots.pop()].append(stmt.value)


def _names(root, name: str):
    return (n for n in ir.walk_expression(root) if isinstance(n, ir.Name) and n.id == name)


def _bound_names(stmt) -> set[int]:
    """ids of the names an assignment binds (`freq = ...`: a definition, not a use)."""
    out, stack = set(), list(stmt.targets) if isinstance(stmt, ir.Assign) else []
    while stack:
        t = stack.pop()
        if isinstance(t, ir.Name):
            out.add(id(t))
        elif isinstance(t, (ir.Tuple, ir.List)):
            stack.extend(t.elts)
        elif isinstance(t, ir.Starred):
            stack.append(t.value)
    return out


def _constant_row(value, base: str):
    """``k`` for `base[k]` with ``k`` an integer literal; None otherwise."""
    if isinstance(value, ir.Subscript) and isinstance(value.value, ir.Name) and value.value.id == base \
            and isinstance(value.index, ir.Const) and type(value.index.value) is int:
        return value.index.value
    return None


def _root(target) -> str | None:
    while isinstance(target, ir.Subscript):
        target = target.value
    return target.id if isinstance(target, ir.Name) else None


def view_base(expr) -> str | None:
    """The name whose storage ``expr`` views, for `y[0]`, `y.view(-1)`, `y.T[1:]`; None
    for anything else (a copy, a temporary's view)."""
    if isinstance(expr, ir.Subscript):
        inner = expr.value
    elif isinstance(expr, ir.Attribute) and expr.attr in api.VIEW_ATTRIBUTES:
        inner = expr.value
    elif (isinstance(expr, ir.Call) and isinstance(expr.func, ir.Attribute) and expr.func.attr in api.VIEW_METHODS
          and expr.func.attr not in api.TUPLE_METHODS):
        inner = expr.func.value
    else:
        return None
    return inner.id if isinstance(inner, ir.Name) else view_base(inner)
