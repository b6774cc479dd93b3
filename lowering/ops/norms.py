"""Norms: torch.norm, linalg.vector_norm / matrix_norm / norm, F.normalize."""

from __future__ import annotations

import math
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import check_out, normalize_dim, normalize_dims, require_value
from lowering.ops.reduce import _check_dim_arg, _extreme, _float_input, _reduce
from lowering.ops.registry import register


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

