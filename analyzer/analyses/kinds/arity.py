"""Unpacking into a fixed number of names: eager accepts only inputs with that many items.

`a, b = t` is no hazard (any input eager runs has exactly two rows, and the trace's two
selections are right for all of them); with a star the rest has as many rows as the
example's size less the names. The same holds when the items come through a
comprehension: `h, w = (int(v) for v in grid_hw)` iterates `grid_hw`, but eager raises
on any `grid_hw` without exactly two rows, so the unrolled iteration is right for every
input eager accepts (the `int(v)` escapes are findings of their own). A filter or a set
changes how many items there are, so only one plain generator counts.
"""

from __future__ import annotations

from analyzer.frontend import ir


def has_star(target) -> bool:
    return isinstance(target, (ir.Tuple, ir.List)) and any(isinstance(e, ir.Starred) for e in target.elts)


def fixed_arity_iterables(stmt) -> set[int]:
    """ids of the iterables whose items an assignment unpacks into a fixed number of names."""
    if not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, ir.Comprehension):
        return set()
    comp = stmt.value
    if comp.kind not in ("list", "generator") or len(comp.generators) != 1 or comp.generators[0].ifs:
        return set()
    if not any(isinstance(t, (ir.Tuple, ir.List)) and not has_star(t) for t in stmt.targets):
        return set()
    return {id(comp.generators[0].iter)}
