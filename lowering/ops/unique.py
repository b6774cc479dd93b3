"""``torch.unique`` / ``Tensor.unique`` / ``torch.unique_consecutive``: outputs whose
length is data.

``unique`` over the flattened input (``dim=None``, or any dim of a 1-d input) is a
stable ascending sort (TopK) followed by ``unique_consecutive`` on the sorted values:
``keep = [True, s[1:] != s[:-1]]``, the values are ``Compress(s, keep)``, the group ids
``CumSum(keep) - 1`` scattered back through the sort permutation give ``return_inverse``
and the differences of the group starts ``return_counts``.  Ascending order is what
torch gives for ``sorted=False`` too on CPU (its order is unspecified there), and NaN
sorts last with every NaN its own group, as in torch -- ONNX ``Unique`` is not used for
this form because onnxruntime's merges NaNs into one.  ``unique(dim=d)`` of a tensor of
rank >= 2 is ONNX ``Unique`` with ``axis`` (slices sorted lexicographically, as torch),
for integer and bool tensors; a floating tensor is refused there, since onnxruntime's
Unique merges slices holding NaN.  ``unique_consecutive`` needs no sort and lowers for
every dim.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import INT64_MAX, known_rank, normalize_axis, reshape, slice_axis


def _consecutive_groups(g: GraphBuilder, x: Value, d: int) -> tuple[Value, Value, Value]:
    """(keep, group id, counts) along axis ``d``: keep[i] when slice i differs from
    slice i-1 (NaN differs from NaN, as in torch)."""
    rank = x.rank
    assert rank is not None
    cur = slice_axis(g, x, d, 1, INT64_MAX)
    prev = slice_axis(g, x, d, 0, -1)
    differ = g.op("Not", g.op("Equal", cur, prev))
    if rank > 1:
        others = [a for a in range(rank) if a != d]
        differ = g.cast(g.reduce("ReduceMax", g.cast(differ, torch.int32), others, False), torch.bool)
    n = g.size(x, d)
    n_v = g.const(n, torch.int64) if isinstance(n, int) else n
    # keep[0] is True unless the axis is empty (then keep is empty too).
    first = g.op("Slice", g.const([True]), g.const([0], torch.int64), g.unsqueeze(n_v, [0]))
    keep = g.op("Concat", first, differ, axis=0)
    group = g.op("Sub", g.op("CumSum", g.cast(keep, torch.int64), g.const(0, torch.int64)), g.const(1, torch.int64))
    starts = reshape(g, g.op("NonZero", keep), [-1])
    ends = g.op("Concat", slice_axis(g, starts, 0, 1, INT64_MAX), g.unsqueeze(n_v, [0]), axis=0)
    counts = g.op("Sub", ends, starts)
    return keep, group, counts


def _sortable(g: GraphBuilder, x: Value) -> Value:
    if x.dtype in (torch.bool, torch.int8, torch.int16, torch.uint8):
        return g.cast(x, torch.int32)
    return x


def _results(values: Value, inverse: Value | None, counts: Value | None):
    out = [values]
    if inverse is not None:
        out.append(inverse)
    if counts is not None:
        out.append(counts)
    return values if len(out) == 1 else tuple(out)


def _check_flags(g: GraphBuilder, name: str, *flags: Any) -> None:
    for f in flags:
        if isinstance(f, Value) or not isinstance(f, bool):
            raise g.error(f"{name}: sorted, return_inverse and return_counts must be Python bools known at export time")


@register("torch.unique", "Tensor.unique")
def unique(g, input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """unique(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False, int? dim=None)
    -> Tensor | (Tensor, Tensor) | (Tensor, Tensor, Tensor)"""
    x = require_value(g, input, "unique")
    _check_flags(g, "unique", sorted, return_inverse, return_counts)
    if x.dtype.is_complex:
        raise g.error("unique of complex tensors is not supported (torch raises)")
    rank = known_rank(g, x, "unique")
    if dim is not None:
        d = normalize_axis(g, dim, rank, "unique")
        if rank >= 2:
            return _unique_dim(g, x, d, return_inverse, return_counts)
    flat = reshape(g, x, [-1])
    n = g.numel(flat)
    work = _sortable(g, flat)
    s, perm = g.op("TopK", work, g.shape_tensor([n]), axis=0, largest=0, sorted=1, outputs=2)
    keep, group, counts = _consecutive_groups(g, s, 0)
    values = g.cast(g.op("Compress", s, keep, axis=0), x.dtype)
    inverse = None
    if return_inverse:
        inv = g.op("ScatterElements", g.op("Expand", g.const(0, torch.int64), g.shape_of(perm)), perm, group, axis=0)
        # dim given (1-d input): inverse is 1-d; dim None: input's shape.
        inverse = inv if dim is not None else reshape(g, inv, g.shape_of(x))
    return _results(values, inverse, counts if return_counts else None)


def _unique_dim(g: GraphBuilder, x: Value, d: int, return_inverse: bool, return_counts: bool):
    if is_float(x.dtype):
        raise g.error(
            "unique(dim=...) of a floating tensor is not supported: onnxruntime's Unique merges slices holding NaN, "
            "torch keeps them apart",
            hint="deduplicate an integer key (e.g. quantized coordinates) instead, or flatten with dim=None",
        )
    work = x if x.dtype in (torch.int64, torch.int8) else g.cast(x, torch.int64)
    y, _, inv, counts = g.op("Unique", work, axis=d, sorted=1, outputs=4)
    return _results(g.cast(y, x.dtype), inv if return_inverse else None, counts if return_counts else None)


@register("torch.unique_consecutive", "Tensor.unique_consecutive")
def unique_consecutive(g, input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None)
    -> Tensor | (Tensor, Tensor) | (Tensor, Tensor, Tensor)"""
    x = require_value(g, input, "unique_consecutive")
    _check_flags(g, "unique_consecutive", return_inverse, return_counts)
    if x.dtype.is_complex:
        raise g.error("unique_consecutive of complex tensors is not supported (torch raises)")
    rank = known_rank(g, x, "unique_consecutive")
    if dim is None:
        src, d = reshape(g, x, [-1]), 0
    else:
        d = normalize_axis(g, dim, rank, "unique_consecutive")
        src = g.unsqueeze(x, [0]) if rank == 0 else x
    work = _sortable(g, src) if is_bool(src.dtype) else src
    keep, group, counts = _consecutive_groups(g, work, d)
    values = g.op("Compress", src, keep, axis=d)
    inverse = None
    if return_inverse:
        inverse = reshape(g, group, g.shape_of(x)) if dim is None else group
    return _results(values, inverse, counts if return_counts else None)
