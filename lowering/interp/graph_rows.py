"""`zip`, `enumerate` and `reversed` over the rows of tensors whose first axis is dynamic.

Python pairs the rows one by one and stops at the shortest input. In the graph this is
a `GraphRows`: the tensors whose rows are paired (and enumerate's counter), iterated by
an ONNX `Loop` whose trip count is the smallest first axis (`row_count`), each item
gathered at the loop's iteration number (`row_item`). A comprehension over it is a Loop
with scan outputs (`Containers.map_rows`), a `for` over it a Loop whose target takes the
item, as for the rows of one tensor. `reversed(t)` is the rows of `t.flip(0)`.

Zipping such rows with a Python sequence (whose items cannot be picked by a graph index)
and `zip(strict=True)` (which raises on lengths only known at run time) are refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from lowering.graph import Value
from lowering.interp.guarded_items import guarded_enumerate, guarded_zip
from lowering.interp.python_state import has_varying_items
from lowering.interp.values import EnumerateIndex, GraphRows, Stacked, TensorItems, _describe

if TYPE_CHECKING:
    from lowering.interpreter import Interpreter


def refuse_python_iteration(interp: Interpreter, what: str):
    return interp.error(f"{what} the rows that `zip` / `enumerate` pair along a dynamic axis",
                        "use the pairs in a for loop or a list comprehension, or index the tensors", construct="call")


def rows_of(iterable, interp: Interpreter) -> Value | GraphRows | TensorItems | None:
    """The rows a value iterates over when their number is only known at run time: a
    tensor with a dynamic first axis, the list a graph loop appended to (its scan output),
    `.tolist()` of a 1-d tensor of dynamic length (its items Python numbers), or what
    zip / enumerate made of those; else None."""
    if isinstance(iterable, GraphRows):
        return iterable
    if isinstance(iterable, list) and len(iterable) == 1 and isinstance(iterable[0], TensorItems):
        return iterable[0]
    if isinstance(iterable, list) and len(iterable) == 1 and isinstance(iterable[0], Stacked) and iterable[0].valid is None:
        return iterable[0].value
    if isinstance(iterable, Value) and iterable.rank and isinstance(interp.g.size(iterable, 0), Value):
        return iterable
    return None


def row_count(interp: Interpreter, rows: Value | GraphRows | TensorItems):
    """How many items `rows` yields: the smallest first axis, as zip stops at the shortest."""
    if isinstance(rows, TensorItems):
        return interp.g.size(rows.value, 0)
    if isinstance(rows, Value):
        return interp.g.size(rows, 0)
    counts = [row_count(interp, part) for part in rows.parts if not isinstance(part, EnumerateIndex)]
    if all(isinstance(c, int) for c in counts):
        return min(counts)
    graph = [c if isinstance(c, Value) else interp.g.const(c, torch.int64) for c in counts]
    return interp.python_number(graph[0] if len(graph) == 1 else interp.g.op("Min", *graph))


def row_item(interp: Interpreter, rows: Value | GraphRows | TensorItems, index: Value):
    """Item `index` (a 0-d int64 graph value) of `rows`."""
    if isinstance(rows, TensorItems):
        return interp.python_number(interp.call_op("operator.getitem", [rows.value, index], {}))
    if isinstance(rows, Value):
        return interp.call_op("operator.getitem", [rows, index], {})
    return tuple(_counter(interp, index, part.start) if isinstance(part, EnumerateIndex)
                 else row_item(interp, part, index) for part in rows.parts)


def _counter(interp: Interpreter, index: Value, start: int) -> Value:
    return index if start == 0 else interp.python_number(interp.binop("+", index, start))


def _graph_rows(interp: Interpreter, args, what: str) -> list | None:
    """The rows of each argument when one of them has a run-time number of rows, else None."""
    rows = [rows_of(a, interp) for a in args]
    for a, r in zip(args, rows):
        if r is None and isinstance(a, (list, tuple)) and has_varying_items(a):
            raise interp.refuse_varying_list(a, f"`{what}()`")  # which items it holds is the graph's
    if all(r is None for r in rows):
        return None
    for a, r in zip(args, rows):
        if isinstance(a, Value) and a.rank == 0:
            raise interp.error(f"{what}() of a 0-d tensor (eager raises: iteration over a 0-d tensor)",
                               "zip tensors of at least one dimension", construct="call")
        if r is None and not (isinstance(a, Value) and a.rank):
            raise interp.error(f"{what}() of the rows of a tensor whose first axis is dynamic with "
                               f"{_describe(a)}: the graph cannot pick that sequence's items by the loop's index",
                               "zip tensors only (torch.as_tensor the sequence), or index it by position in the body",
                               construct="call")
    return [a if r is None else r for a, r in zip(args, rows)]


def graph_zip(interp: Interpreter, args, kwargs, fallback):
    pieces = guarded_zip(interp, args, kwargs)
    if pieces is not None:
        return pieces
    rows = _graph_rows(interp, args, "zip")
    if rows is None:
        return fallback(interp, args, kwargs)
    if kwargs.get("strict"):
        raise interp.error("zip(strict=True) over the rows of a tensor whose first axis is dynamic: whether it "
                           "raises depends on lengths known only at run time", "check the lengths with an assert "
                           "on the sizes and drop strict=True", construct="call")
    return GraphRows(tuple(rows))


def graph_enumerate(interp: Interpreter, args, kwargs, fallback):
    pieces = guarded_enumerate(interp, args, kwargs)
    if pieces is not None:
        return pieces
    rows = _graph_rows(interp, args[:1], "enumerate")
    if rows is None:
        return fallback(interp, args, kwargs)
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if not isinstance(start, int) or isinstance(start, bool):
        raise interp.error("enumerate() with a start that is not a Python int, over the rows of a dynamic axis",
                           "pass an int start", construct="call")
    return GraphRows((EnumerateIndex(start), rows[0]))


def graph_reversed(interp: Interpreter, args, kwargs, fallback):
    rows = _graph_rows(interp, args, "reversed") if len(args) == 1 else None
    if rows is None:
        return fallback(interp, args, kwargs)
    (rows,) = rows
    if isinstance(rows, GraphRows):
        raise interp.error("reversed() of zip() / enumerate() (Python raises: they are not reversible)",
                           "reverse the tensors first (t.flip(0))", construct="call")
    return interp.call_op("torch.flip", [rows, [0]], {})
