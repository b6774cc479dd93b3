"""Elementwise: ufuncs, clip, where."""

from __future__ import annotations

import numpy as np
import torch

from lowering.numpy_arrays.table import lowers, refuse_given
from lowering.numpy_arrays.values import compute_dtype, operand, wrap


def _ufunc(torch_name: str | None, name: str):
    def lower(interp, like, x, out=None, *, where=None, casting="same_kind", order="K", dtype=None, subok=True):
        refuse_given(interp, name, out=out, where=where)
        v = operand(interp, x, compute_dtype(interp, like.dtype, name))
        if torch_name is None or (name == "absolute" and v.dtype == torch.bool) or (
                name in _ROUNDING and not v.dtype.is_floating_point):  # NumPy keeps integers and bools as they are
            result = interp.fresh_copy(v)
        elif name == "square":
            result = interp.call_op("operator.mul", [v, v], {}) if v.dtype != torch.bool else interp.fresh_copy(v)
        else:
            result = interp.call_op(torch_name, [v], {})
        return wrap(interp, result, like)

    lower.__name__ = f"_{name}"
    return lower


lowers(np.absolute)(_ufunc("torch.abs", "absolute"))
lowers(np.exp)(_ufunc("torch.exp", "exp"))
lowers(np.log)(_ufunc("torch.log", "log"))
lowers(np.sqrt)(_ufunc("torch.sqrt", "sqrt"))
lowers(np.square)(_ufunc("square", "square"))
_ROUNDING = ("floor", "ceil", "trunc")
lowers(np.floor)(_ufunc("torch.floor", "floor"))
lowers(np.ceil)(_ufunc("torch.ceil", "ceil"))
lowers(np.trunc)(_ufunc("torch.trunc", "trunc"))


def _binary_ufunc(torch_name: str, name: str):
    def lower(interp, like, x1, x2, out=None, *, where=None, casting="same_kind", order="K", dtype=None, subok=True):
        refuse_given(interp, name, out=out, where=where)
        dt = compute_dtype(interp, like.dtype, name)
        return wrap(interp, interp.call_op(torch_name, [operand(interp, x1, dt), operand(interp, x2, dt)], {}), like)

    lower.__name__ = f"_{name}"
    return lower


lowers(np.maximum)(_binary_ufunc("torch.maximum", "maximum"))
lowers(np.minimum)(_binary_ufunc("torch.minimum", "minimum"))


@lowers(np.clip, methods=("clip",))
def _clip(interp, like, a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue,
          **ufunc_kwargs):
    refuse_given(interp, "clip", out=out, **{k: v for k, v in ufunc_kwargs.items()})
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    dt = compute_dtype(interp, like.dtype, "clip")
    x = operand(interp, a, dt)
    if lo is None and hi is None:
        return wrap(interp, interp.fresh_copy(x), like)
    bounds = {"min": None if lo is None else operand(interp, lo, dt),
              "max": None if hi is None else operand(interp, hi, dt)}
    return wrap(interp, interp.call_op("torch.clamp", [x], bounds), like)


@lowers(np.where)
def _where(interp, like, condition, x=None, y=None):
    if x is None or y is None:
        raise interp.error("numpy.where(condition) (the indices of nonzero elements) is not supported by untrace",
                           "use torch.nonzero on the tensor", construct="numpy.where")
    dt = compute_dtype(interp, like.dtype, "where")
    cond = operand(interp, condition, torch.bool)
    return wrap(interp, interp.call_op("torch.where", [cond, operand(interp, x, dt), operand(interp, y, dt)], {}),
                 like)
