"""Reductions, scans (cumsum, cummax/cummin) and softmax.

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


@register("torch.any", "Tensor.any")
def any(g, input, dim=None, keepdim=False, *, out=None):
    """any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor(bool)"""
    check_out(g, out, "any")
    return _all_any(g, "any", input, dim, keepdim)


# ---------------------------------------------------------------------------- norms


def _vector_norm(g: GraphBuilder, x: Value, p: Any, dims: list[int] | None, keepdim: bool, name: str) -> Value:
    if isinstance(p, Value) or not isinstance(p, (int, float)) or isinstance(p, bool):
        raise g.error(f"{name}: unsupported norm order {p!r}")
    ax = g.op("Abs", x)
    if p == math.inf:
        return _extreme(g, "ReduceMax", ax, dims, keepdim)
    if p == -math.inf:
        return _extreme(g, "ReduceMin", ax, dims, keepdim)
    if p == 0:
        return _reduce(g, "ReduceSum", g.cast(g.op("Not", g.op("Equal", x, g.const(0.0, x.dtype))), x.dtype), dims, keepdim)
    if p == 1:
        return _reduce(g, "ReduceSum", ax, dims, keepdim)
    if p == 2:
        return g.op("Sqrt", _reduce(g, "ReduceSum", g.op("Mul", x, x), dims, keepdim))
    powed = g.op("Pow", ax, g.const(float(p), x.dtype))
    return g.op("Pow", _reduce(g, "ReduceSum", powed, dims, keepdim), g.const(1.0 / p, x.dtype))


@register("torch.norm", "Tensor.norm")
def norm(g, input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """norm(Tensor self, Scalar|str? p="fro", int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "norm")
    x = _float_input(g, require_value(g, input, "norm"), dtype, "norm")
    _check_dim_arg(g, dim, "norm")
    dims = normalize_dims(g, dim, x.rank, "norm")
    if p is None or p == "fro":
        return _vector_norm(g, x, 2, dims, keepdim, "norm")
    if isinstance(p, str):
        raise g.error(f"norm: p={p!r} (a matrix norm) is not supported", hint="nuclear norms need an SVD; not in ONNX")
    return _vector_norm(g, x, p, dims, keepdim, "norm")


@register("torch.linalg.vector_norm")
def vector_norm(g, x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    check_out(g, out, "vector_norm")
    x = _float_input(g, require_value(g, x, "vector_norm"), dtype, "vector_norm")
    _check_dim_arg(g, dim, "vector_norm")
    return _vector_norm(g, x, ord, normalize_dims(g, dim, x.rank, "vector_norm"), keepdim, "vector_norm")


_SVD_HINT = ("ONNX has no singular value decomposition; for a matrix fixed at export time (a parameter or "
             "buffer) compute the norm once outside forward and register it as a buffer, or bound it with "
             "ord='fro' (>= the spectral norm) where an upper bound is enough")


def _norm_input(g: GraphBuilder, input: Any, dtype: Any, name: str) -> Value:
    """torch.linalg's norms: a floating input, cast to ``dtype`` if that does not narrow it."""
    x = require_value(g, input, name)
    if not is_float(x.dtype):
        raise g.error(f"{name}: expected a floating point tensor as input, got {x.dtype} (torch raises)",
                      hint="call .float() first")
    if dtype is not None:
        if not isinstance(dtype, torch.dtype) or not is_float(dtype):
            raise g.error(f"{name}: dtype must be a floating point torch.dtype, got {dtype!r}")
        if torch.promote_types(x.dtype, dtype) != dtype:
            raise g.error(f"{name}: the dtype of the input ({x.dtype}) should be convertible without narrowing "
                          f"to the specified dtype ({dtype}) (torch raises)")
        x = g.cast(x, dtype)
    return x


def _matrix_dims(g: GraphBuilder, x: Value, dim: Any, name: str) -> list[int]:
    if not isinstance(dim, (list, tuple)) or len(dim) != 2:
        raise g.error(f"{name}: dim must be a 2-tuple, got {dim!r} (torch raises)")
    if x.rank is None or x.rank < 2:
        raise g.error(f"{name}: the input must have at least 2 dimensions, got rank {x.rank} (torch raises)")
    dims = [normalize_dim(g, d, x.rank, name) for d in dim]
    if dims[0] == dims[1]:
        raise g.error(f"{name}: dims must be different, got {tuple(dim)} (torch raises)")
    return dims


def _matrix_norm(g: GraphBuilder, x: Value, ord: Any, dims: list[int], keepdim: bool, name: str) -> Value:
    """torch's matrix_norm: 'fro' = 2-norm of the entries; 1 / -1 = max / min absolute column
    sum (over dims[0]), inf / -inf = max / min absolute row sum (over dims[1])."""
    if ord == "fro":
        return _vector_norm(g, x, 2, sorted(dims), keepdim, name)
    if ord == "nuc" or (not isinstance(ord, str) and not isinstance(ord, Value) and ord in (2, -2)):
        what = "the nuclear norm (sum of singular values)" if ord == "nuc" else \
            f"ord={ord} (the {'largest' if ord == 2 else 'smallest'} singular value)"
        raise g.error(f"{name}: {what} needs a singular value decomposition", hint=_SVD_HINT)
    if isinstance(ord, str) or isinstance(ord, (Value, bool)) or not isinstance(ord, (int, float)) \
            or ord not in (1, -1, math.inf, -math.inf):
        raise g.error(f"{name}: matrix norm order {ord!r} not supported (torch raises)")
    summed, extreme = dims if abs(ord) == 1 else dims[::-1]
    sums = _reduce(g, "ReduceSum", g.op("Abs", x), [summed], True)
    r = _extreme(g, "ReduceMax" if ord > 0 else "ReduceMin", sums, [extreme], True)
    return r if keepdim else g.squeeze(r, sorted(dims))


@register("torch.linalg.norm")
def linalg_norm(g, input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """linalg_norm(Tensor self, Scalar|str? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)
    -> Tensor: a vector norm over an int dim (or of a 1-D input; ord=None and dim=None flatten to the 2-norm),
    a matrix norm over a 2-tuple dim (or of a 2-D input): 'fro'/None, 1, -1, inf, -inf.  'nuc', 2, -2 refused."""
    name = "linalg.norm"
    check_out(g, out, name)
    x = _norm_input(g, input, dtype, name)
    _check_dim_arg(g, dim, name)
    if isinstance(dim, (list, tuple)):
        if len(dim) not in (1, 2):
            raise g.error(f"{name}: If dim is specified, it must be of length 1 or 2. Got {list(dim)} (torch raises)")
        dim = list(dim)
    elif dim is not None:
        dim = [dim]
    elif ord is not None and x.rank not in (1, 2):
        raise g.error(f"{name}: If dim is not specified but ord is, the input must be 1D or 2D. "
                      f"Got {x.rank}D (torch raises)")
    if isinstance(ord, str):
        return _matrix_norm(g, x, ord, _matrix_dims(g, x, dim if dim is not None else [0, 1], name), keepdim, name)
    if ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and x.rank == 2)):
        return _matrix_norm(g, x, ord, _matrix_dims(g, x, dim if dim is not None else [0, 1], name), keepdim, name)
    return _vector_norm(g, x, 2 if ord is None else ord, normalize_dims(g, dim, x.rank, name), keepdim, name)


@register("torch.linalg.matrix_norm")
def matrix_norm(g, A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """linalg_matrix_norm(Tensor self, Scalar|str ord="fro", int[] dim=[-2,-1], bool keepdim=False, *,
    ScalarType? dtype=None) -> Tensor  ('fro', 1, -1, inf, -inf; 'nuc', 2, -2 refused)"""
    name = "linalg.matrix_norm"
    check_out(g, out, name)
    x = _norm_input(g, A, dtype, name)
    _check_dim_arg(g, dim, name)
    return _matrix_norm(g, x, ord, _matrix_dims(g, x, dim, name), keepdim, name)


@register("torch.nn.functional.normalize")
def normalize(g, input, p=2.0, dim=1, eps=1e-12, out=None):
    """normalize(Tensor input, float p=2.0, int dim=1, float eps=1e-12) -> Tensor"""
    check_out(g, out, "normalize")
    x = _float_input(g, require_value(g, input, "normalize"), None, "normalize")
    d = [normalize_dim(g, dim, x.rank, "normalize")]
    n = _vector_norm(g, x, p, None if x.rank == 0 else d, True, "normalize")
    n = g.op("Max", n, g.const(eps, x.dtype))
    return g.op("Div", x, n)


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


# ---------------------------------------------------------------------------- softmax


def _softmax(g: GraphBuilder, op_type: str, input, dim, dtype, name: str) -> Value:
    x = require_value(g, input, name)
    if dtype is not None:
        x = g.cast(x, dtype)
    if not is_float(x.dtype):
        raise g.error(f"{name} of a {x.dtype} tensor is not implemented in torch", hint="pass dtype=torch.float32")
    d = normalize_dim(g, dim, x.rank, name)
    if x.rank == 0:
        return g.squeeze(g.op(op_type, g.unsqueeze(x, [0]), axis=0), [0])
    return g.op(op_type, x, axis=d)


def _implicit_softmax_dim(g: GraphBuilder, x: Any, name: str) -> int:
    # torch.nn.functional._get_softmax_dim (deprecated implicit choice)
    rank = require_value(g, x, name).rank
    if rank is None:
        raise g.error(f"{name} without dim needs the input rank")
    return 0 if rank in (0, 1, 3) else 1


@register("torch.softmax", "Tensor.softmax", "torch.special.softmax")
def softmax(g, input, dim, dtype=None):
    """softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return _softmax(g, "Softmax", input, dim, dtype, "softmax")


@register("torch.log_softmax", "Tensor.log_softmax", "torch.special.log_softmax")
def log_softmax(g, input, dim, dtype=None):
    """log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return _softmax(g, "LogSoftmax", input, dim, dtype, "log_softmax")


@register("torch.nn.functional.softmax")
def f_softmax(g, input, dim=None, _stacklevel=3, dtype=None):
    """softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor"""
    if dim is None:
        dim = _implicit_softmax_dim(g, input, "softmax")
    return _softmax(g, "Softmax", input, dim, dtype, "softmax")


@register("torch.nn.functional.log_softmax")
def f_log_softmax(g, input, dim=None, _stacklevel=3, dtype=None):
    """log_softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor"""
    if dim is None:
        dim = _implicit_softmax_dim(g, input, "log_softmax")
    return _softmax(g, "LogSoftmax", input, dim, dtype, "log_softmax")


@register("torch.nn.functional.softmin")
def softmin(g, input, dim=None, _stacklevel=3, dtype=None):
    """softmin(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor"""
    x = require_value(g, input, "softmin")
    if dim is None:
        dim = _implicit_softmax_dim(g, x, "softmin")
    if dtype is not None:
        x = g.cast(x, dtype)
    if not is_float(x.dtype):
        raise g.error(f"softmin of a {x.dtype} tensor is not implemented in torch")
    return _softmax(g, "Softmax", g.op("Neg", x), dim, None, "softmin")


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
