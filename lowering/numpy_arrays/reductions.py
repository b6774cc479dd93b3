"""Reductions: mean, sum, std/var, min/max, argmin/argmax."""

from __future__ import annotations

import numpy as np
import torch

from lowering.numpy_arrays.table import lowers, refuse_given
from lowering.numpy_arrays.values import USE_TORCH, NDArray, array_value, compute_dtype, like_dtype, operand, wrap


def reduce_axes(interp, axis, rank: int, name: str) -> list[int] | None:
    if axis is None:
        return None
    items = axis if isinstance(axis, tuple) else (axis,)
    if not items or not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
        raise interp.error(f"{name} with axis={axis!r} is not supported by untrace (an int or a tuple of ints)",
                           construct=name, hint=USE_TORCH)
    return [d % rank if rank else 0 for d in items]


def _reduce(interp, like, torch_name: str, a, axis, keepdims, name: str, **extra):
    x = operand(interp, a, compute_dtype(interp, like.dtype, name))
    rank = x.rank
    dims = reduce_axes(interp, axis, rank, name)
    if rank == 0:
        dims = None
    kwargs = dict(extra)
    if dims is not None or keepdims:
        kwargs["dim"] = dims if dims is not None else list(range(rank))
        kwargs["keepdim"] = bool(keepdims)
    return wrap(interp, interp.call_op(torch_name, [x], kwargs), like)


@lowers(np.mean, methods=("mean",))
def _mean(interp, like, a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    refuse_given(interp, "mean", out=out, where=where)
    return _reduce(interp, like, "torch.mean", a, axis, keepdims, "mean")


@lowers(np.sum, methods=("sum",))
def _sum(interp, like, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    refuse_given(interp, "sum", out=out, initial=initial, where=where)
    return _reduce(interp, like, "torch.sum", a, axis, keepdims, "sum")


def _spread(torch_name: str, name: str):
    def lower(interp, like, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
              correction=None):
        refuse_given(interp, name, out=out, where=where, mean=mean)
        if correction is not None and correction is not np._NoValue:
            ddof = correction
        if not isinstance(ddof, (int, float)) or isinstance(ddof, bool):
            raise interp.error(f"{name} with a ddof computed at run time is not supported by untrace", construct=name,
                               hint=USE_TORCH)
        return _reduce(interp, like, torch_name, a, axis, keepdims, name, correction=ddof)

    lower.__name__ = f"_{name}"
    return lower


lowers(np.std, methods=("std",))(_spread("torch.std", "std"))
lowers(np.var, methods=("var",))(_spread("torch.var", "var"))


def _extreme(torch_name: str, name: str):
    def lower(interp, like, a, axis=None, out=None, keepdims=False, initial=None, where=None):
        refuse_given(interp, name, out=out, initial=initial, where=where)
        if like.dtype == np.bool_:
            # ONNX has no ReduceMax/Min over bool: any / all.
            x = operand(interp, a, torch.uint8)
            result = _reduce(interp, like_dtype(like, np.uint8), torch_name, NDArray(x), axis, keepdims, name)
            return NDArray(interp.g.cast(result.value, torch.bool), scalar=result.scalar)
        return _reduce(interp, like, torch_name, a, axis, keepdims, name)

    lower.__name__ = f"_{name}"
    return lower


lowers(np.max, np.amax, methods=("max",))(_extreme("torch.amax", "max"))
lowers(np.min, np.amin, methods=("min",))(_extreme("torch.amin", "min"))


def _arg_extreme(torch_name: str, name: str):
    def lower(interp, like, a, axis=None, out=None, *, keepdims=False):
        refuse_given(interp, name, out=out)
        x = array_value(interp, a, name)
        if x.dtype == torch.bool:
            x = interp.g.cast(x, torch.uint8)
        if axis is None:
            # Over the flattened array; ties give the first index in NumPy, torch and ONNX alike.
            result = interp.call_op(torch_name, [x], {})
            if keepdims:
                result = interp.call_op("Tensor.reshape", [result, [1] * x.rank], {})
        else:
            (d,) = reduce_axes(interp, axis, x.rank, name)
            result = interp.call_op(torch_name, [x], {"dim": d, "keepdim": bool(keepdims)})
        return wrap(interp, result, like)

    lower.__name__ = f"_{name}"
    return lower


lowers(np.argmax, methods=("argmax",))(_arg_extreme("torch.argmax", "argmax"))
lowers(np.argmin, methods=("argmin",))(_arg_extreme("torch.argmin", "argmin"))
