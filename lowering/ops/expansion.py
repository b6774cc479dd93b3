"""Broadcasting and tiling: expand / broadcast_to / expand_as, repeat, tile."""

from __future__ import annotations

import numpy as np

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import known_rank, size_list


# ---------------------------------------------------------------------------- expand / repeat


@register("Tensor.expand")
def expand(g, self, *size, implicit=False):
    """expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"""
    x = require_value(g, self, "expand")
    sizes = size_list(g, size, "expand")
    if isinstance(sizes, Value):
        return g.op("Expand", x, sizes)
    rank = known_rank(g, x, "expand")
    if len(sizes) < rank:
        raise g.error(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({rank}) (torch raises)"
        )
    lead = len(sizes) - rank
    target: list[int | Value] = []
    for i, s in enumerate(sizes):
        if isinstance(s, int) and s == -1:
            if i < lead:
                raise g.error("expand: -1 is not allowed in a leading, non-existing dimension (torch raises)")
            target.append(1)  # Expand broadcasts: 1 keeps the input's dim
        else:
            if isinstance(s, int) and i >= lead:
                d = x.shape[i - lead]
                if isinstance(d, int) and d != 1 and d != s:
                    raise g.error(f"expand: size {s} does not match the existing size {d} at dim {i} (torch raises)")
            target.append(s)
    if x.static_shape is not None and all(isinstance(s, int) for s in target):
        if tuple(np.broadcast_shapes(x.static_shape, tuple(target))) == x.static_shape:
            return x
    return g.op("Expand", x, g.shape_tensor(target))


@register("torch.broadcast_to", "Tensor.broadcast_to")
def broadcast_to(g, input, size):
    """broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return expand(g, input, size)


@register("Tensor.expand_as")
def expand_as(g, self, other):
    """expand_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    x = require_value(g, self, "expand_as")
    o = require_value(g, other, "expand_as", "other")
    if o.static_shape is not None:
        return expand(g, x, list(o.static_shape))
    return g.op("Expand", x, g.shape_of(o))


def _tile(g: GraphBuilder, x: Value, reps: list[int | Value], name: str) -> Value:
    rank = known_rank(g, x, name)
    if len(reps) > rank:
        x = g.unsqueeze(x, list(range(len(reps) - rank)))
    if all(isinstance(r, int) and r == 1 for r in reps):
        return x
    return g.op("Tile", x, g.shape_tensor(reps))


@register("Tensor.repeat")
def repeat(g, self, *sizes):
    """repeat(Tensor self, SymInt[] repeats) -> Tensor"""
    x = require_value(g, self, "repeat")
    reps = size_list(g, sizes, "repeat", allow_minus_one=False)
    if isinstance(reps, Value):
        raise g.error("repeat: repeats must be a sequence of ints")
    rank = known_rank(g, x, "repeat")
    if len(reps) < rank:
        raise g.error(
            "repeat: number of repeat dims can not be smaller than number of dimensions of tensor (torch raises)"
        )
    return _tile(g, x, reps, "repeat")


@register("torch.tile", "Tensor.tile")
def tile(g, input, dims):
    """tile(Tensor self, SymInt[] dims) -> Tensor"""
    x = require_value(g, input, "tile")
    reps = size_list(g, (dims,), "tile", allow_minus_one=False)
    if isinstance(reps, Value):
        raise g.error("tile: dims must be a sequence of ints")
    rank = known_rank(g, x, "tile")
    reps = [1] * (rank - len(reps)) + list(reps)
    return _tile(g, x, reps, "tile")



@register("torch.broadcast_tensors")
def broadcast_tensors(g, *tensors):
    """broadcast_tensors(Tensor[] tensors) -> Tensor[]"""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    xs = [require_value(g, t, "broadcast_tensors") for t in tensors]
    shapes = [x.static_shape for x in xs]
    if all(s is not None for s in shapes):
        target = tuple(np.broadcast_shapes(*shapes))
        return tuple(x if x.static_shape == target else g.op("Expand", x, g.shape_tensor(list(target))) for x in xs)
    out = []
    for x in xs:
        for other in xs:  # Expand broadcasts both ways: against every other shape in turn
            if other is not x:
                x = g.op("Expand", x, g.shape_of(other))
        out.append(x)
    return tuple(out)
