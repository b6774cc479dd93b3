"""Scans along a dim: cumsum (int64 for bool and integer inputs, as torch) and cummax /
cummin (values and indices)."""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import check_out, normalize_dim, require_value
from lowering.ops.reduce import MinMax, _accumulate
from lowering.ops.registry import register


@register("torch.cumsum", "Tensor.cumsum")
def cumsum(g, input, dim, *, dtype=None, out=None):
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "cumsum")
    x = require_value(g, input, "cumsum")
    d = normalize_dim(g, dim, x.rank, "cumsum")
    return _accumulate(g, "CumSum", x, dtype, "cumsum", [d], False)


@register("Tensor.cumsum_")
def cumsum_(g, self, dim, *, dtype=None):
    """cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)  (dtype, if given, must be self's)"""
    x = require_value(g, self, "cumsum_")
    if is_bool(x.dtype):
        raise g.error("cumsum_: result type Long can't be cast to the desired output type Bool (torch raises)")
    if dtype is not None and dtype != x.dtype:
        raise g.error(f"cumsum_: bad in-place call: input tensor dtype {x.dtype} and output tensor dtype {dtype} "
                      "should match (torch raises)")
    return g.cast(cumsum(g, x, dim, dtype=dtype), x.dtype)


# ---------------------------------------------------------------------------- cummax / cummin


def _cum_extreme(g: GraphBuilder, name: str, input, dim) -> MinMax:
    """values[i] = max/min of x[:i+1] along dim; indices[i] = the last j <= i holding
    it (torch updates on ties, ``>=``/``<=``); NaN, once seen, is the value and its
    index the last NaN so far (torch's rule).  No ONNX scan op does this: it is one
    masked (n x n) reduction, so the dim may be dynamic."""
    x = require_value(g, input, name)
    d = normalize_dim(g, dim, x.rank, name)
    if x.rank is None:
        raise g.error(f"{name} needs the rank of its input")
    if x.rank == 0:
        return MinMax(x, g.const(0, torch.int64))
    if x.dtype.is_complex:
        raise g.error(f"{name} of complex tensors is not supported (torch raises)")
    work = torch.int32 if x.dtype in (torch.bool, torch.int16, torch.int8, torch.uint8) else x.dtype
    xw = g.cast(x, work)
    n = g.size(xw, d)
    n_v = g.const(n, torch.int64) if isinstance(n, int) else n
    ar = g.op("Range", g.const(0, torch.int64), n_v, g.const(1, torch.int64))
    trail = x.rank - d - 1
    # axis d is i (the output position), axis d+1 is j (the prefix element).
    i_col = _reshape_to(g, ar, [-1, 1] + [1] * trail)
    j_row = _reshape_to(g, ar, [1, -1] + [1] * trail)
    prefix = g.op("LessOrEqual", j_row, i_col)  # [n, n, 1...]
    xj = g.unsqueeze(xw, [d])  # [..., 1, n, ...]
    if is_float(work):
        fill = g.const(float("-inf") if name == "cummax" else float("inf"), work)
    else:
        info = torch.iinfo(work)
        fill = g.const(info.min if name == "cummax" else info.max, work)
    masked = g.op("Where", prefix, xj, fill)
    values = g.reduce("ReduceMax" if name == "cummax" else "ReduceMin", masked, [d + 1], False)
    hit = g.op("Equal", masked, g.unsqueeze(values, [d + 1]))
    if is_float(work):
        nan_j = g.op("And", g.op("IsNaN", masked), prefix)
        any_nan = g.cast(g.reduce("ReduceMax", g.cast(nan_j, torch.int32), [d + 1], False), torch.bool)
        values = g.op("Where", any_nan, g.const(float("nan"), work), values)
        hit = g.op("Or", g.op("And", hit, g.op("Not", g.unsqueeze(any_nan, [d + 1]))), nan_j)
    hit = g.op("And", hit, prefix)
    jj = g.op("Where", hit, j_row, g.const(-1, torch.int64))
    indices = g.reduce("ReduceMax", jj, [d + 1], False)
    return MinMax(g.cast(values, x.dtype), indices)


def _reshape_to(g: GraphBuilder, x: Value, shape: list[int]) -> Value:
    return g.op("Reshape", x, g.const(shape, torch.int64))


@register("torch.cummax", "Tensor.cummax")
def cummax(g, input, dim, *, out=None):
    """cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)"""
    check_out(g, out, "cummax")
    return _cum_extreme(g, "cummax", input, dim)


@register("torch.cummin", "Tensor.cummin")
def cummin(g, input, dim, *, out=None):
    """cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)"""
    check_out(g, out, "cummin")
    return _cum_extreme(g, "cummin", input, dim)

