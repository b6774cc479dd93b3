"""Searching and counting: ``bucketize``, ``searchsorted``, ``histc``, ``bincount``,
``isin``.

``bucketize``/``searchsorted`` count the boundaries below each value (``<``, or ``<=``
for ``right``) instead of a binary search: on a sorted sequence the count *is* the
insertion index torch's binary search finds; a NaN value goes after every boundary, as
in torch (NaN sorts last).  NaN *boundaries* count as larger than every value; torch's
binary search over them depends on where its probes land (a sequence with NaN is not
sorted in the sense the op requires).  The cost is a (values x boundaries)
comparison, fine for the bucket tables models use.  ``histc`` bins by
``(x - min) * bins / (max - min)`` as torch rounds it (the value at ``max`` in the last bin, values outside
or NaN dropped) and adds with ScatterElements; ``min == max`` takes the data's range as
torch does.  ``bincount``'s length is data (``max(input) + 1`` or ``minlength``): a
ConstantOfShape of that length and one ScatterElements(add), so it runs for any input.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float, is_int
from lowering.ops._common import _tensor_attr, check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import INT64_MAX, known_rank, reshape


def _zeros(g: GraphBuilder, length: Value, dtype: torch.dtype) -> Value:
    """1-d zeros of a 0-d int64 ``length``."""
    return g.op("ConstantOfShape", g.unsqueeze(length, [0]), value=_tensor_attr(torch.zeros((), dtype=dtype)))


def _count_below(g: GraphBuilder, seq: Value, values: Value, right: bool) -> Value:
    """For the last axis of ``seq`` (already broadcast against ``values[..., None]``): how
    many entries are < value (<= with ``right``), int64."""
    v = g.unsqueeze(values, [-1])
    below = g.op("LessOrEqual" if right else "Less", seq, v)
    if is_float(values.dtype):
        below = g.op("Or", below, g.op("IsNaN", v))  # torch: a NaN value goes after every boundary
    rank = max(seq.rank or 0, v.rank or 0)
    return g.reduce("ReduceSum", g.cast(below, torch.int64), [rank - 1], False)


def _search_operands(g: GraphBuilder, seq: Value, values: Any, name: str) -> tuple[Value, Value, bool]:
    scalar = not isinstance(values, Value)
    if scalar:
        if not isinstance(values, (bool, int, float)):
            raise g.error(f"{name}: the values must be a tensor or a number, got {values!r}")
        v = g.as_value(values, seq)
    else:
        v = values
    if seq.dtype.is_complex or v.dtype.is_complex:
        raise g.error(f"{name} of complex tensors is not supported")
    dt = g.result_type(seq, v) if not scalar else seq.dtype
    if is_bool(dt):
        dt = torch.int64
    return g.cast(seq, dt), g.cast(v, dt), scalar


@register("torch.bucketize")
def bucketize(g, input, boundaries, *, out_int32=False, right=False, out=None):
    """bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor |
    bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor"""
    check_out(g, out, "bucketize")
    b = require_value(g, boundaries, "bucketize", "boundaries")
    if b.rank != 1:
        raise g.error(f"bucketize: boundaries tensor must be 1 dimension, but got dim({b.rank}) (torch raises)")
    b, v, _ = _search_operands(g, b, input, "bucketize")
    r = _count_below(g, b, v, bool(right))
    return g.cast(r, torch.int32) if out_int32 else r


@register("torch.searchsorted")
def searchsorted(g, sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False,
    str? side=None, Tensor? sorter=None) -> Tensor | searchsorted.Scalar(Tensor sorted_sequence, Scalar self, ...)"""
    check_out(g, out, "searchsorted")
    seq = require_value(g, sorted_sequence, "searchsorted", "sorted_sequence")
    if side not in (None, "left", "right"):
        raise g.error(f"searchsorted: side can only be 'left' or 'right' but got {side!r} (torch raises)")
    if side == "left" and right:
        raise g.error("searchsorted: side and right can't be set to opposites, got side of left while right was True (torch raises)")
    right = bool(right) or side == "right"
    rank = known_rank(g, seq, "searchsorted")
    if rank == 0:
        raise g.error("searchsorted: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                      "tensor and input value tensor must match (torch raises)")
    if sorter is not None:
        s = require_value(g, sorter, "searchsorted", "sorter")
        if not is_int(s.dtype) or s.dtype == torch.uint8:
            raise g.error("searchsorted: sorter must be a tensor of long dtype (torch raises)")
        seq = g.op("GatherElements", seq, g.cast(s, torch.int64), axis=rank - 1)
    seq, v, scalar = _search_operands(g, seq, input, "searchsorted")
    if rank > 1:
        lead_ok = v.rank == rank and all(
            not (isinstance(a, int) and isinstance(b, int)) or a == b for a, b in zip(seq.shape[:-1], v.shape[:-1])
        )
        if scalar or not lead_ok:
            raise g.error("searchsorted: the first N-1 dimensions of boundaries tensor and input value tensor must match (torch raises)")
        # (..., M) against (..., K): compare (..., 1, M) with (..., K, 1).
        seq = g.unsqueeze(seq, [rank - 1])
    r = _count_below(g, seq, v, right)
    return g.cast(r, torch.int32) if out_int32 else r


@register("torch.histc", "Tensor.histc")
def histc(g, input, bins=100, min=0, max=0, *, out=None):
    """histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor"""
    check_out(g, out, "histc")
    x = require_value(g, input, "histc")
    if not is_float(x.dtype):
        raise g.error(f"histc: \"histogram_cpu\" not implemented for {x.dtype} (torch raises)",
                      hint="call .float() first")
    if isinstance(bins, Value) or not isinstance(bins, int) or isinstance(bins, bool):
        raise g.error("histc: bins must be a Python int known at export time")
    if bins <= 0:
        raise g.error("histc: bins must be > 0 (torch raises)")
    for b in (min, max):
        if isinstance(b, Value) or not isinstance(b, (int, float)):
            raise g.error("histc: min and max must be Python numbers known at export time")
    if min > max:
        raise g.error("histc: max must be larger than min (torch raises)")
    flat = reshape(g, x, [-1])
    lo: Value = g.const(float(min), x.dtype)
    hi: Value = g.const(float(max), x.dtype)
    if min == max:
        # torch: the data's range (an empty input keeps min == max), then widened by 1.
        n = g.numel(flat)
        if not (isinstance(n, int) and n == 0):
            lo, hi = g.reduce("ReduceMin", flat, [0], False), g.reduce("ReduceMax", flat, [0], False)
            if not isinstance(n, int):
                empty = g.op("Equal", n, g.const(0, torch.int64))
                lo = g.op("Where", empty, g.const(float(min), x.dtype), lo)
                hi = g.op("Where", empty, g.const(float(max), x.dtype), hi)
        same = g.op("Equal", lo, hi)
        lo = g.op("Where", same, g.op("Sub", lo, g.const(1.0, x.dtype)), lo)
        hi = g.op("Where", same, g.op("Add", hi, g.const(1.0, x.dtype)), hi)
    inside = g.op("And", g.op("GreaterOrEqual", flat, lo), g.op("LessOrEqual", flat, hi))
    # torch's order of operations (HistogramKernel, LINEAR_INTERPOLATION): (x - min) * bins / (max - min).
    pos = g.op("Div", g.op("Mul", g.op("Sub", flat, lo), g.const(float(bins), x.dtype)), g.op("Sub", hi, lo))
    pos = g.op("Where", inside, pos, g.const(0.0, x.dtype))
    idx = g.op("Min", g.cast(g.op("Floor", pos), torch.int64), g.const(bins - 1, torch.int64))
    idx = g.op("Max", idx, g.const(0, torch.int64))
    # Counts are exact in float32 up to 2**24 per bin; onnxruntime has no half-precision ScatterElements(add).
    work = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    counts = g.op("Expand", g.const(torch.zeros(bins, dtype=work)), g.const([bins], torch.int64))
    return g.cast(g.op("ScatterElements", counts, idx, g.cast(inside, work), axis=0, reduction="add"), x.dtype)


@register("torch.bincount", "Tensor.bincount")
def bincount(g, input, weights=None, minlength=0):
    """bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor"""
    x = require_value(g, input, "bincount")
    if not is_int(x.dtype):
        raise g.error(f"bincount: \"bincount_cpu\" not implemented for {x.dtype} (torch raises)")
    if x.rank != 1:
        raise g.error("bincount only supports 1-d non-negative integral inputs (torch raises)")
    if isinstance(minlength, Value) or not isinstance(minlength, int) or isinstance(minlength, bool):
        raise g.error("bincount: minlength must be a Python int known at export time")
    if minlength < 0:
        raise g.error("bincount: minlength should be >= 0 (torch raises)")
    x = g.cast(x, torch.int64)
    # max(input) + 1, at least minlength (ReduceMax of an empty input is INT64_MIN).
    top = g.op("Add", g.reduce("ReduceMax", x, [0], False), g.const(1, torch.int64))
    length = g.op("Max", top, g.const(minlength, torch.int64))
    if weights is None:
        upd = g.op("Expand", g.const(1, torch.int64), g.shape_of(x))
        dt = torch.int64
    else:
        w = require_value(g, weights, "bincount", "weights")
        if w.rank != 1:
            raise g.error("bincount: weights should be 1-d and have the same length as input (torch raises)")
        dt = torch.float32 if w.dtype == torch.float32 else torch.float64
        upd = g.cast(w, dt)
    # ScatterElements would wrap a negative value (torch raises): out of range instead, so onnxruntime fails too.
    idx = g.op("Where", g.op("Less", x, g.const(0, torch.int64)), g.const(INT64_MAX, torch.int64), x)
    return g.op("ScatterElements", _zeros(g, length, dt), idx, upd, axis=0, reduction="add")


@register("torch.isin")
def isin(g, elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) -> Tensor
    (and the Scalar_Tensor / Tensor_Scalar forms)"""
    check_out(g, out, "isin")
    if not isinstance(elements, Value) and not isinstance(test_elements, Value):
        raise g.error("isin: neither argument is a tensor")
    for v in (elements, test_elements):
        if isinstance(v, Value) and v.dtype.is_complex:
            raise g.error("isin of complex tensors is not supported (torch raises)")
    like = elements if isinstance(elements, Value) else test_elements
    e = g.as_value(elements, like)
    t = g.as_value(test_elements, like)
    dt = g.result_type(e, t)
    e, t = g.cast(e, dt), g.cast(t, dt)
    flat_t = reshape(g, t, [-1])
    eq = g.op("Equal", g.unsqueeze(e, [-1]), flat_t)
    hits = g.reduce("ReduceSum", g.cast(eq, torch.int64), [e.rank or 0], False)
    found = g.op("Greater", hits, g.const(0, torch.int64))
    return g.op("Not", found) if invert else found
