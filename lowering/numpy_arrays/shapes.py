"""Joining and shapes: concatenate, stack, reshape, flatten, transpose."""

from __future__ import annotations

import numpy as np

from lowering.graph import Value
from lowering.numpy_arrays.table import lowers, refuse_given
from lowering.numpy_arrays.values import EAGER_RAISES, USE_TORCH, NDArray, array_value, compute_dtype, operand, wrap


def _sequence(interp, arrays, name: str) -> list:
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise interp.error(f"{name} of a {type(arrays).__name__} is not supported by untrace", construct=name,
                           hint=USE_TORCH)
    return list(arrays)


@lowers(np.concatenate)
def _concatenate(interp, like, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    refuse_given(interp, "concatenate", out=out)
    dt = compute_dtype(interp, like.dtype, "concatenate")
    parts = [operand(interp, a, dt) for a in _sequence(interp, arrays, "concatenate")]
    if axis is None:
        parts = [interp.call_op("Tensor.reshape", [p, [-1]], {}) for p in parts]
        axis = 0
    return wrap(interp, interp.call_op("torch.cat", [parts], {"dim": axis}), like)


@lowers(np.stack)
def _stack(interp, like, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    refuse_given(interp, "stack", out=out)
    dt = compute_dtype(interp, like.dtype, "stack")
    parts = [operand(interp, a, dt) for a in _sequence(interp, arrays, "stack")]
    return wrap(interp, interp.call_op("torch.stack", [parts], {"dim": axis}), like)


def _shape_arg(interp, shape, name: str) -> list:
    items = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    for d in items:
        if not (isinstance(d, int) or (isinstance(d, Value) and d in interp.python_numbers)):
            raise interp.error(f"{name} with a shape of {type(d).__name__} is not supported by untrace",
                               construct=name, hint=USE_TORCH)
    return items


@lowers(np.reshape, layout=True)
def _reshape(interp, like, a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    return _reshape_impl(interp, like, a, shape, order, copy)


@lowers(methods=("reshape",), layout=True)
def _reshape_method(interp, like, a, *shape, order="C", copy=None):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    return _reshape_impl(interp, like, a, shape, order, copy)


def _reshape_impl(interp, like, a, shape, order, copy):
    if order != "C" or copy is True:
        raise interp.error("reshape with order/copy is not supported by untrace", construct="numpy.reshape",
                           hint=USE_TORCH)
    x = array_value(interp, a, "reshape")
    return NDArray(interp.call_op("Tensor.reshape", [x, _shape_arg(interp, shape, "reshape")], {}))


@lowers(methods=("flatten", "ravel"), layout=True)
def _flatten(interp, like, a, order="C"):
    if order != "C":
        raise interp.error("flatten/ravel with order is not supported by untrace", construct="ndarray.flatten",
                           hint=USE_TORCH)
    return NDArray(interp.call_op("Tensor.reshape", [array_value(interp, a, "flatten"), [-1]], {}))


@lowers(np.transpose, layout=True)
def _transpose(interp, like, a, axes=None):
    return transpose_impl(interp, a, axes)


@lowers(methods=("transpose",), layout=True)
def _transpose_method(interp, like, a, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
        axes = axes[0]
    return transpose_impl(interp, a, axes or None)


def transpose_impl(interp, a, axes):
    x = array_value(interp, a, "transpose")
    rank = x.rank
    order = list(reversed(range(rank))) if axes is None else [d % rank for d in axes]
    if sorted(order) != list(range(rank)):
        raise interp.error(f"transpose with axes={axes!r} (eager raises)", construct="numpy.transpose",
                           hint=EAGER_RAISES)
    return NDArray(interp.call_op("torch.permute", [x, order], {}), scalar=getattr(a, "scalar", False))
