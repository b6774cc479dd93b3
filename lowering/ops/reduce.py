"""Reductions: sum / mean / prod, max / min / argmax, all / any, var / std, logsumexp
(norms are in ``norms``, softmax in ``softmax``, cumsum / cummax / cummin in ``scans``).

dtype rules follow torch: ``sum``/``prod``/``cumsum`` of bool and integer tensors give
int64; ``mean``/``var``/``std``/``softmax`` of integer tensors are refused (torch raises)
unless a floating ``dtype=`` is given; ``max``/``min``/``amax``/``amin``/``argmax``
propagate NaN like torch (ONNX leaves NaN to the runtime, so it is made explicit).
``dim=None`` or ``dim=()`` reduces every dimension; a 0-d input accepts ``dim`` 0/-1.
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import check_out, normalize_dim, normalize_dims, require_value, where
from lowering.ops.registry import register

MinMax = namedtuple("MinMax", ["values", "indices"])
MinMaxPair = namedtuple("MinMaxPair", ["min", "max"])


def _reduce(g: GraphBuilder, op_type: str, x: Value, dims: list[int] | None, keepdim: bool) -> Value:
    if x.rank == 0:
        dims = None
    return g.reduce(op_type, x, dims, keepdim)


def _accumulate(g: GraphBuilder, op_type: str, x: Value, dtype: torch.dtype | None, name: str, dims, keepdim) -> Value:
    """sum/prod-like reduction: in ``dtype`` if given, else bool/ints in int64 (torch).
    A bool accumulator (dtype=torch.bool) is an int64 reduction made boolean."""
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise g.error(f"{name}: dtype must be a torch.dtype")
    out_dtype = dtype or (x.dtype if is_float(x.dtype) or x.dtype.is_complex else torch.int64)
    work = torch.int64 if is_bool(out_dtype) else out_dtype
    x = g.cast(g.cast(x, out_dtype), work)
    if op_type == "CumSum":
        r = x if x.rank == 0 else g.op("CumSum", x, g.const(dims[0], torch.int64))
    else:
        r = _reduce(g, op_type, x, dims, keepdim)
    return g.cast(r, out_dtype)


def _float_input(g: GraphBuilder, x: Value, dtype: torch.dtype | None, name: str) -> Value:
    if dtype is not None:
        x = g.cast(x, dtype)
    if not is_float(x.dtype):
        raise g.error(
            f"{name}() of a {x.dtype} tensor: torch needs a floating point input or dtype= (torch raises)",
            hint="call .float() first, or pass dtype=torch.float32",
        )
    return x


def _reduced_count(g: GraphBuilder, x: Value, dims: list[int] | None) -> int | Value:
    """How many elements each reduction output covers (int when static)."""
    if x.rank == 0:
        return 1
    if dims is None:
        return g.numel(x)
    sizes = [g.size(x, d) for d in dims]
    if builtins.all(isinstance(s, int) for s in sizes):
        return math.prod(sizes)
    total: Value | None = None
    static = 1
    for s in sizes:
        if isinstance(s, int):
            static *= s
        else:
            total = s if total is None else g.op("Mul", total, s)
    return g.op("Mul", total, g.const(static, torch.int64)) if static != 1 else total


def _count_as(g: GraphBuilder, n: int | Value, dtype: torch.dtype) -> Value:
    return g.const(n, dtype) if isinstance(n, int) else g.cast(n, dtype)


def _check_dim_arg(g: GraphBuilder, dim: Any, name: str) -> None:
    if isinstance(dim, Value):
        raise g.error(f"{name}: dim must be known at export time, not a graph value")


# ---------------------------------------------------------------------------- sum / mean / prod


@register("torch.sum", "Tensor.sum")
def sum(g, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "sum")
    x = require_value(g, input, "sum")
    if isinstance(dim, torch.dtype):  # sum(x, torch.float64)
        dim, dtype = None, dim
    _check_dim_arg(g, dim, "sum")
    return _accumulate(g, "ReduceSum", x, dtype, "sum", normalize_dims(g, dim, x.rank, "sum"), keepdim)


@register("torch.nansum", "Tensor.nansum")
def nansum(g, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "nansum")
    x = require_value(g, input, "nansum")
    if is_float(x.dtype):
        x = where(g, g.op("IsNaN", x), g.const(0.0, x.dtype), x)
    return sum(g, x, dim, keepdim, dtype=dtype)


@register("torch.mean", "Tensor.mean")
def mean(g, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "mean")
    x = _float_input(g, require_value(g, input, "mean"), dtype, "mean")
    _check_dim_arg(g, dim, "mean")
    dims = normalize_dims(g, dim, x.rank, "mean")
    return _mean(g, x, dims, keepdim)


def _mean(g: GraphBuilder, x: Value, dims: list[int] | None, keepdim: bool) -> Value:
    """ReduceMean, except over possibly empty dims: there onnxruntime gives 0 where torch
    gives NaN, so it is sum / count."""
    n = _reduced_count(g, x, dims)
    if isinstance(n, int) and n > 0:
        return _reduce(g, "ReduceMean", x, dims, keepdim)
    return g.op("Div", _reduce(g, "ReduceSum", x, dims, keepdim), _count_as(g, n, x.dtype))


@register("torch.nanmean", "Tensor.nanmean")
def nanmean(g, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "nanmean")
    x = _float_input(g, require_value(g, input, "nanmean"), dtype, "nanmean")
    dims = normalize_dims(g, dim, x.rank, "nanmean")
    isnan = g.op("IsNaN", x)
    total = _reduce(g, "ReduceSum", where(g, isnan, g.const(0.0, x.dtype), x), dims, keepdim)
    count = _reduce(g, "ReduceSum", g.cast(g.op("Not", isnan), x.dtype), dims, keepdim)
    return g.op("Div", total, count)


@register("torch.prod", "Tensor.prod")
def prod(g, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "prod")
    x = require_value(g, input, "prod")
    if isinstance(dim, torch.dtype):
        dim, dtype = None, dim
    if isinstance(dim, (list, tuple)):
        raise g.error("prod: dim must be a single int (torch raises)")
    _check_dim_arg(g, dim, "prod")
    return _accumulate(g, "ReduceProd", x, dtype, "prod", normalize_dims(g, dim, x.rank, "prod"), keepdim)


@register("torch.count_nonzero", "Tensor.count_nonzero")
def count_nonzero(g, input, dim=None):
    """count_nonzero(Tensor self, int[]? dim=None) -> Tensor(int64)"""
    x = require_value(g, input, "count_nonzero")
    _check_dim_arg(g, dim, "count_nonzero")
    nz = g.cast(g.cast(x, torch.bool), torch.int64)
    return _reduce(g, "ReduceSum", nz, normalize_dims(g, dim, x.rank, "count_nonzero"), False)


# ---------------------------------------------------------------------------- max / min


def _comparable(g: GraphBuilder, x: Value) -> Value:
    # onnxruntime has no bool ReduceMax/ArgMax kernels.
    return g.cast(x, torch.int32) if is_bool(x.dtype) else x


def _extreme(g: GraphBuilder, op_type: str, x: Value, dims: list[int] | None, keepdim: bool) -> Value:
    """ReduceMax/ReduceMin with torch's NaN propagation."""
    orig = x.dtype
    x = _comparable(g, x)
    r = _reduce(g, op_type, x, dims, keepdim)
    if is_float(x.dtype):
        nan = _reduce(g, "ReduceMax", g.cast(g.op("IsNaN", x), torch.int32), dims, keepdim)
        r = g.op("Where", g.cast(nan, torch.bool), g.const(float("nan"), x.dtype), r)
    return g.cast(r, orig)


def _arg_extreme(g: GraphBuilder, op_type: str, x: Value, dim: int, keepdim: bool) -> Value:
    """ArgMax/ArgMin along ``dim``: the first extreme, or the first NaN (torch)."""
    x = _comparable(g, x)
    idx = g.op(op_type, x, axis=dim, keepdims=int(bool(keepdim)), select_last_index=0)
    if is_float(x.dtype):
        nan = g.cast(g.op("IsNaN", x), torch.int32)
        nan_idx = g.op("ArgMax", nan, axis=dim, keepdims=int(bool(keepdim)), select_last_index=0)
        any_nan = g.cast(g.reduce("ReduceMax", nan, [dim], keepdim), torch.bool)
        idx = g.op("Where", any_nan, nan_idx, idx)
    return idx


def _max_min(g, op_name: str, reduce_op: str, arg_op: str, input, dim, keepdim, other):
    x = require_value(g, input, op_name)
    if other is not None or isinstance(dim, Value):
        from lowering.ops.elementwise import maximum, minimum

        y = other if other is not None else dim
        return (maximum if op_name == "max" else minimum)(g, x, y)
    if dim is None:
        if keepdim:
            raise g.error(f"{op_name}(input, keepdim=True) needs dim")
        return _extreme(g, reduce_op, x, None, False)
    d = normalize_dim(g, dim, x.rank, op_name)
    if x.rank == 0:
        return MinMax(x, g.const(0, torch.int64))
    values = _extreme(g, reduce_op, x, [d], keepdim)
    indices = _arg_extreme(g, arg_op, x, d, keepdim)
    return MinMax(values, indices)


@register("torch.max", "Tensor.max")
def max(g, input, dim=None, keepdim=False, *, other=None, out=None):
    """max(Tensor self) -> Tensor; max(Tensor self, int dim, bool keepdim=False) -> (values, indices);
    max(Tensor self, Tensor other) -> Tensor"""
    check_out(g, out, "max")
    return _max_min(g, "max", "ReduceMax", "ArgMax", input, dim, keepdim, other)


@register("torch.min", "Tensor.min")
def min(g, input, dim=None, keepdim=False, *, other=None, out=None):
    """min(Tensor self) -> Tensor; min(Tensor self, int dim, bool keepdim=False) -> (values, indices);
    min(Tensor self, Tensor other) -> Tensor"""
    check_out(g, out, "min")
    return _max_min(g, "min", "ReduceMin", "ArgMin", input, dim, keepdim, other)


@register("torch.amax", "Tensor.amax")
def amax(g, input, dim=(), keepdim=False, *, out=None):
    """amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"""
    check_out(g, out, "amax")
    x = require_value(g, input, "amax")
    _check_dim_arg(g, dim, "amax")
    return _extreme(g, "ReduceMax", x, normalize_dims(g, dim, x.rank, "amax"), keepdim)


@register("torch.amin", "Tensor.amin")
def amin(g, input, dim=(), keepdim=False, *, out=None):
    """amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"""
    check_out(g, out, "amin")
    x = require_value(g, input, "amin")
    _check_dim_arg(g, dim, "amin")
    return _extreme(g, "ReduceMin", x, normalize_dims(g, dim, x.rank, "amin"), keepdim)


@register("torch.aminmax", "Tensor.aminmax")
def aminmax(g, input, *, dim=None, keepdim=False, out=None):
    """aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)"""
    check_out(g, out, "aminmax")
    x = require_value(g, input, "aminmax")
    dims = None if dim is None else [normalize_dim(g, dim, x.rank, "aminmax")]
    return MinMaxPair(_extreme(g, "ReduceMin", x, dims, keepdim), _extreme(g, "ReduceMax", x, dims, keepdim))


def _argmax_min(g, name: str, arg_op: str, input, dim, keepdim):
    x = require_value(g, input, name)
    _check_dim_arg(g, dim, name)
    if dim is None:
        flat = g.op("Reshape", x, g.const([-1], torch.int64))
        idx = _arg_extreme(g, arg_op, flat, 0, False)
        if keepdim and x.rank:
            idx = g.op("Reshape", idx, g.const([1] * x.rank, torch.int64))
        return idx
    d = normalize_dim(g, dim, x.rank, name)
    if x.rank == 0:
        return g.const(0, torch.int64)
    return _arg_extreme(g, arg_op, x, d, keepdim)


@register("torch.argmax", "Tensor.argmax")
def argmax(g, input, dim=None, keepdim=False, *, out=None):
    """argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor(int64)"""
    check_out(g, out, "argmax")
    return _argmax_min(g, "argmax", "ArgMax", input, dim, keepdim)


@register("torch.argmin", "Tensor.argmin")
def argmin(g, input, dim=None, keepdim=False, *, out=None):
    """argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor(int64)"""
    check_out(g, out, "argmin")
    return _argmax_min(g, "argmin", "ArgMin", input, dim, keepdim)


# ---------------------------------------------------------------------------- all / any


def _all_any(g, name: str, input, dim, keepdim) -> Value:
    x = require_value(g, input, name)
    _check_dim_arg(g, dim, name)
    truth = g.cast(x, torch.bool)
    if name == "all":
        truth = g.op("Not", truth)
    count = _reduce(g, "ReduceSum", g.cast(truth, torch.int64), normalize_dims(g, dim, x.rank, name), keepdim)
    zero = g.const(0, torch.int64)
    r = g.op("Equal", count, zero) if name == "all" else g.op("Greater", count, zero)
    return g.cast(r, torch.uint8) if x.dtype == torch.uint8 else r


@register("torch.all", "Tensor.all")
def all(g, input, dim=None, keepdim=False, *, out=None):
    """all(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor(bool)"""
    check_out(g, out, "all")
    return _all_any(g, "all", input, dim, keepdim)


@register("torch._is_all_true", "Tensor._is_all_true")
def is_all_true(g, input):
    """_is_all_true(Tensor self) -> Tensor (a 0-d bool; torch.distributions' argument checks)"""
    return _all_any(g, "all", input, None, False)


@register("torch._is_any_true", "Tensor._is_any_true")
def is_any_true(g, input):
    """_is_any_true(Tensor self) -> Tensor"""
    return _all_any(g, "any", input, None, False)


@register("torch.any", "Tensor.any")
def any(g, input, dim=None, keepdim=False, *, out=None):
    """any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor(bool)"""
    check_out(g, out, "any")
    return _all_any(g, "any", input, dim, keepdim)


# ---------------------------------------------------------------------------- var / std


def _correction(g: GraphBuilder, unbiased: Any, correction: Any) -> float:
    if correction is not None and unbiased is not None:
        raise g.error("var/std: pass either unbiased or correction, not both")
    if correction is not None:
        if isinstance(correction, Value):
            raise g.error("var/std: correction must be known at export time")
        return float(correction)
    return 0.0 if unbiased is False else 1.0


def _var(g: GraphBuilder, name: str, input, dim, unbiased, keepdim, correction) -> tuple[Value, Value]:
    """(variance, mean) over ``dim``, as torch computes them."""
    x = _float_input(g, require_value(g, input, name), None, name)
    if isinstance(dim, bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    _check_dim_arg(g, dim, name)
    dims = normalize_dims(g, dim, x.rank, name)
    corr = _correction(g, unbiased, correction)
    mean_keep = _mean(g, x, dims, True)
    diff = g.op("Sub", x, mean_keep)
    ss = _reduce(g, "ReduceSum", g.op("Mul", diff, diff), dims, keepdim)
    n = _count_as(g, _reduced_count(g, x, dims), x.dtype)
    denom = g.op("Max", g.op("Sub", n, g.const(corr, x.dtype)), g.const(0.0, x.dtype))
    var = g.op("Div", ss, denom)
    mean = mean_keep if keepdim or x.rank == 0 else _mean(g, x, dims, False)
    return var, mean


@register("torch.var", "Tensor.var")
def var(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """var(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
    (also the legacy var(self, bool unbiased) and var(self, dim, bool unbiased, bool keepdim))"""
    check_out(g, out, "var")
    return _var(g, "var", input, dim, unbiased, keepdim, correction)[0]


@register("torch.std", "Tensor.std")
def std(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """std(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"""
    check_out(g, out, "std")
    return g.op("Sqrt", _var(g, "std", input, dim, unbiased, keepdim, correction)[0])


@register("torch.var_mean")
def var_mean(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """var_mean(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    check_out(g, out, "var_mean")
    return _var(g, "var_mean", input, dim, unbiased, keepdim, correction)


@register("torch.std_mean")
def std_mean(g, input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """std_mean(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    check_out(g, out, "std_mean")
    v, m = _var(g, "std_mean", input, dim, unbiased, keepdim, correction)
    return g.op("Sqrt", v), m


# ---------------------------------------------------------------------------- logsumexp / cumsum


@register("torch.logsumexp", "Tensor.logsumexp", "torch.special.logsumexp")
def logsumexp(g, input, dim, keepdim=False, *, out=None):
    """logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor"""
    check_out(g, out, "logsumexp")
    x = require_value(g, input, "logsumexp")
    if not is_float(x.dtype):
        x = g.cast(x, torch.get_default_dtype())
    _check_dim_arg(g, dim, "logsumexp")
    dims = normalize_dims(g, dim, x.rank, "logsumexp")
    m = _reduce(g, "ReduceMax", x, dims, True)
    m = g.op("Where", g.op("IsInf", m), g.const(0.0, x.dtype), m)
    s = _reduce(g, "ReduceSum", g.op("Exp", g.op("Sub", x, m)), dims, keepdim)
    m_out = m if keepdim or x.rank == 0 else g.squeeze(m, dims if dims is not None else list(range(x.rank)))
    return g.op("Add", g.op("Log", s), m_out)
