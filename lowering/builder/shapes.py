"""Shapes as graph values: `shape_of`, `size`, `numel`, shape tensors, Unsqueeze / Squeeze,
and Reduce* with axes as the opset wants them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from lowering.builder.value import Value
from lowering.errors import GraphConstructionError, LoweringError

if TYPE_CHECKING:
    from lowering.graph import GraphBuilder


class Shapes:
    def _lookup_shape(self, name: str) -> Value | None:
        b: GraphBuilder | None = self
        while b is not None:
            if name in b._shape_cache:
                return b._shape_cache[name]
            b = b.parent
        return None

    def shape_of(self, v: Value) -> Value:
        """The shape of ``v`` as a 1-d int64 Value (a constant when fully static)."""
        static = v.static_shape
        if static is not None:
            return self.const(list(static), torch.int64) if static else self.const(np.zeros((0,), np.int64))
        hit = self._lookup_shape(v.name)
        if hit is None:
            hit = self.op("Shape", v)
            self._shape_cache[v.name] = hit
        return hit

    def size(self, v: Value, dim: int) -> int | Value:
        """``v.shape[dim]``: an int when static, else a 0-d int64 Value."""
        rank = v.rank
        if rank is not None:
            if not -rank <= dim < max(rank, 1):
                raise LoweringError(f"dimension {dim} out of range for a tensor of rank {rank}")
            if rank == 0:
                raise LoweringError("a 0-d tensor has no dimensions")
            dim %= rank
            d = v.shape[dim]
            if isinstance(d, int):
                return d
        return self.op("Gather", self.shape_of(v), self.const(dim, torch.int64), axis=0)

    def numel(self, v: Value) -> int | Value:
        """The number of elements: an int when static, else a 0-d int64 Value."""
        static = v.static_shape
        if static is not None:
            return math.prod(static)
        if v.shape is not None and any(isinstance(d, int) and d == 0 for d in v.shape):
            return 0  # a static empty axis: no elements, whatever the dynamic sizes
        return self.op("ReduceProd", self.shape_of(v), keepdims=0)

    def shape_tensor(self, dims: Iterable[int | Value]) -> Value:
        """A 1-d int64 Value from ints, 0-d int Values and 1-d int Values (for Reshape,
        Expand, ConstantOfShape, ...).  Symbolic dims stay graph values, never constants."""
        items = list(dims)
        if all(isinstance(d, int) and not isinstance(d, bool) for d in items):
            return self.const(np.array(items, dtype=np.int64).reshape(len(items)))
        pieces: list[Value] = []
        run: list[int] = []
        for d in items:
            if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
                run.append(int(d))
                continue
            if isinstance(d, torch.SymInt):  # pragma: no cover - never produced here
                raise GraphConstructionError("SymInt in shape_tensor")
            if not isinstance(d, Value):
                raise LoweringError(f"a shape entry must be an int or an integer scalar, got {d!r}")
            if d.dtype.is_floating_point or d.dtype == torch.bool:
                raise LoweringError(f"a shape entry must be an integer, got a {d.dtype} value")
            if run:
                pieces.append(self.const(np.array(run, dtype=np.int64)))
                run = []
            d = self.cast(d, torch.int64)
            if d.rank == 0:
                pieces.append(self.unsqueeze(d, [0]))
            elif d.rank == 1:
                pieces.append(d)
            else:
                raise LoweringError(f"a shape entry must be a scalar, got a rank-{d.rank} value")
        if run:
            pieces.append(self.const(np.array(run, dtype=np.int64)))
        out = pieces[0] if len(pieces) == 1 else self.op("Concat", *pieces, axis=0)
        if out.name not in self.root._content and all(isinstance(d, (int, np.integer)) or d.rank == 0 for d in items):
            # What is known of each entry (an int, a symbolic dim, None), for the shapes of
            # the ConstantOfShape / Expand / Reshape that take it.
            known = [(int(d),) if isinstance(d, (int, np.integer)) else self._content_of(d) or (None,) for d in items]
            self.root._content[out.name] = tuple(k[0] for k in known)
        return out

    def unsqueeze(self, v: Value, axes: Sequence[int]) -> Value:
        return self.op("Unsqueeze", v, self.const(list(axes), torch.int64))

    def squeeze(self, v: Value, axes: Sequence[int] | None = None) -> Value:
        return self.op("Squeeze", v, None if axes is None else self.const(list(axes), torch.int64))

    # ReduceSum takes axes as an input since opset 13, the other Reduce* since 18.
    _AXES_INPUT_SINCE = {"ReduceSum": 13}

    def reduce(self, op_type: str, x: Value, axes: Sequence[int] | None, keepdims: bool) -> Value:
        """``op_type`` (ReduceSum, ReduceMean, ReduceMax, ...) over ``axes`` (None: all),
        with axes as attribute or input as the opset requires."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.op(op_type, x, keepdims=keep)
        axes = [int(a) for a in axes]
        if self.opset >= self._AXES_INPUT_SINCE.get(op_type, 18):
            return self.op(op_type, x, self.const(axes, torch.int64), keepdims=keep)
        return self.op(op_type, x, axes=axes, keepdims=keep)

