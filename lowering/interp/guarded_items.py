"""Iterating over a sequence whose length is known only at run time but bounded at export
time: the pieces `chunk` makes along a dynamic axis (`DynamicChunks`: at most `chunks` of
them, fewer when the axis is short), and `zip` / `enumerate` of such pieces.

Eager yields `count` items. The graph unrolls the bound: the items that always exist run
as Python runs them, every later item's body runs under an ONNX `If` on `i < count`, so
what it assigns, and what it appends to a list, is merged as after any data-dependent
`if` (the list's items are then present where their guard held). An item past `count` is
built so that computing it cannot fail (an empty slice), since the graph builds it on
both sides.

A `for` statement over them is lowered so. A comprehension, `list()`, `len()` and the
like see the tuple of `chunks` pieces, or zip / enumerate of it, as before (fixed arity:
where eager makes fewer pieces, onnxruntime fails; see `lowering.ops.shape.chunk`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable

import torch

from analyzer.frontend import ir
from lowering.graph import Value
from lowering.ops.shape import DynamicChunks

if TYPE_CHECKING:
    from lowering.interpreter import Interpreter


@dataclasses.dataclass(eq=False)
class GuardedItems:
    """At most `bound` items; the first `always` exist, the others where `i < count`;
    `make(interp, i)` builds item i."""

    bound: int
    always: int
    count: Value
    make: Callable[[Any, int], Any]
    fixed: list  # the items as the tuple of `chunks` pieces gives them

    def __iter__(self):
        # Any consumer but a `for` statement (`run_for`): the fixed-arity items, as before.
        return iter(self.fixed)


def guarded(iterable) -> GuardedItems | None:
    if isinstance(iterable, GuardedItems):
        return iterable
    if isinstance(iterable, DynamicChunks):
        return GuardedItems(len(iterable), 1, iterable.count, lambda interp, i: iterable.piece(interp.g, i),
                            list(iterable))
    return None


def guarded_zip(interp: Interpreter, args, kwargs) -> GuardedItems | None:
    """zip() of pieces (and static sequences): None when no argument is such pieces."""
    parts = [guarded(a) for a in args]
    if not any(parts) or kwargs:
        return None
    args = list(args)
    for n, (a, part) in enumerate(zip(args, parts)):
        if part is not None or isinstance(a, (list, tuple)):
            continue
        if isinstance(a, Value) and a.rank and isinstance(a.shape[0], int):
            args[n] = list(interp.iterate(a))  # the rows of a static first axis
            continue
        raise interp.error("zip() of the pieces `chunk` makes along a dynamic axis with "
                           f"{type(a).__name__}: untrace zips them with lists, tuples, tensors of a static first "
                           "axis and other pieces only", "chunk every operand, or index by position in the loop",
                           construct="call")
    bound = min(len(a) if p is None else p.bound for a, p in zip(args, parts))
    counts = [p.count for p in parts if p is not None]
    count = counts[0]
    for other in counts[1:]:
        count = interp.g.op("Min", count, other)
    always = min(p.always for p in parts if p is not None)

    def make(interp, i):
        return tuple(a[i] if p is None else p.make(interp, i) for a, p in zip(args, parts))

    return GuardedItems(bound, always, count, make, list(zip(*(a if p is None else p.fixed for a, p in zip(args, parts)))))


def guarded_enumerate(interp: Interpreter, args, kwargs) -> GuardedItems | None:
    part = guarded(args[0]) if args else None
    if part is None:
        return None
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if not isinstance(start, int) or isinstance(start, bool):
        return None
    return GuardedItems(part.bound, part.always, part.count, lambda interp, i: (start + i, part.make(interp, i)),
                        list(enumerate(part.fixed, start)))


def run_for(interp: Interpreter, s: ir.Loop, frame, items: GuardedItems) -> None:
    """`for target in items: body`: unrolled, each item past `always` under an If."""
    for i in range(items.bound):
        item = items.make(interp, i)
        if i < items.always:
            interp.assign(s.target, item, frame)
            interp.exec_block(s.body, frame)
            continue
        exists = interp.g.op("Less", interp.g.const(i, torch.int64), items.count)
        frame.env["$guarded_item"] = item
        guard = ir.If(test=ir.Name("$guarded_item_exists", s.span), span=s.span, synthetic=True,
                      body=[ir.Assign(targets=[s.target], value=ir.Name("$guarded_item", s.span), span=s.span),
                            *s.body],
                      orelse=[], results=tuple(dict.fromkeys((*s.carried, *_target_names(s.target)))))
        frame.env["$guarded_item_exists"] = exists
        try:
            interp.emit_if(guard, exists, frame)
        finally:
            frame.env.pop("$guarded_item", None)
            frame.env.pop("$guarded_item_exists", None)
    interp.exec_block(s.orelse, frame)


def _target_names(target) -> list[str]:
    if isinstance(target, ir.Name):
        return [target.id]
    if isinstance(target, (ir.Tuple, ir.List)):
        return [n for t in target.elts for n in _target_names(t)]
    return []
