"""Tests of a loop's counter against the length of what the loop walks, decided by the
iteration, not by values.

    for i, chain_id in enumerate(chain_ids):      # the loop: its own finding (UT102)
        ...
        if i < len(chain_ids) - 1:                # True on every pass but the last
            parts.append(separator)

`len(chain_ids)` may be data, but within the passes the trace unrolls, the test's outcome
is fixed by the pass and the number of passes, which is the loop's finding: the trace
takes, on each pass, the branch eager takes on that pass. So is `for i in
range(len(xs))`. The counter and the sequence must not be rebound or changed in place
anywhere in the loop (a `xs.append` makes `len(xs)` another number), and `enumerate`
must count from 0."""

from __future__ import annotations

from analyzer.analyses.engine.memo import per_function_cache
from analyzer.analyses.kinds.region_writes import mutated_names
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names

_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


@per_function_cache
def counter_tests(fn: ir.FunctionDef) -> frozenset[int]:
    """Ids of the comparisons in ``fn`` of a loop counter with the length of the
    sequence that loop walks (either side shifted by an integer constant)."""
    found: set[int] = set()
    for loop in ir.walk_statements(fn.body):
        if not isinstance(loop, ir.Loop) or loop.kind != "for":
            continue
        walked = _counted(loop)
        if walked is None:
            continue
        counter, sequence = walked
        if {counter, sequence} & _changed_in_body(loop):
            continue
        for s in ir.walk_statements(loop.body):
            for e in ir.child_expressions(s):
                for sub in ir.walk_expression(e):
                    if _counter_against_length(sub, counter, sequence):
                        found.add(id(sub))
    return frozenset(found)


def _changed_in_body(loop: ir.Loop) -> set[str]:
    """What the loop's body binds or changes in place (`i = ...`, `xs.append(x)`)."""
    return assigned_names(loop.body) | mutated_names(loop)


def _counted(loop: ir.Loop) -> tuple[str, str] | None:
    """(counter, sequence) for `for i, x in enumerate(xs)` and `for i in range(len(xs))`."""
    it, target = loop.iter, loop.target
    if not isinstance(it, ir.Call) or not isinstance(it.func, ir.Name) or any(a.keyword or a.star for a in it.args):
        return None
    if it.func.id == "enumerate" and len(it.args) == 1 and isinstance(it.args[0].value, ir.Name):
        if isinstance(target, ir.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ir.Name):
            return target.elts[0].id, it.args[0].value.id
        return None
    if it.func.id == "range" and len(it.args) == 1 and isinstance(target, ir.Name):
        sequence = _length_of(it.args[0].value)
        return (target.id, sequence) if sequence is not None else None
    return None


def _counter_against_length(e, counter: str, sequence: str) -> bool:
    if not isinstance(e, ir.Compare) or len(e.ops) != 1 or e.ops[0] not in _COMPARISONS:
        return False
    sides = (_shifted(e.left), _shifted(e.comparators[0]))
    return {_is_name(sides[0], counter), _is_name(sides[1], counter)} == {True, False} and any(
        _length_of(side) == sequence for side in sides)


def _shifted(e):
    """``e`` without an integer constant added or subtracted (`len(xs) - 1` -> `len(xs)`)."""
    while isinstance(e, ir.BinOp) and e.op in ("+", "-") and isinstance(e.right, ir.Const) and type(e.right.value) is int:
        e = e.left
    return e


def _is_name(e, name: str) -> bool:
    return isinstance(e, ir.Name) and e.id == name


def _length_of(e) -> str | None:
    """``xs`` for `len(xs)`."""
    if (isinstance(e, ir.Call) and isinstance(e.func, ir.Name) and e.func.id == "len" and len(e.args) == 1
            and not e.args[0].keyword and not e.args[0].star and isinstance(e.args[0].value, ir.Name)):
        return e.args[0].value.id
    return None
