"""Conversions: np.asarray/np.array/astype/copy/item."""

from __future__ import annotations

import numpy as np

from lowering.graph import Value
from lowering.numpy_arrays.table import lowers, refuse_given
from lowering.numpy_arrays.values import EAGER_RAISES, NUMPY_OF_TORCH, USE_TORCH, NDArray, array_value, torch_dtype


def from_tensor(interp, value: Value, copy: bool) -> NDArray:
    """`np.asarray(t)` / `t.numpy()` (the same memory: the same graph value) or `np.array(t)` (a copy)."""
    if value.dtype not in NUMPY_OF_TORCH:
        raise interp.error(f"NumPy has no {value.dtype} (eager raises)", construct="numpy", hint=EAGER_RAISES)
    if value.rank is None:
        raise interp.error("NumPy on a tensor of unknown rank", construct="numpy",
                           hint="reshape it to a known rank first")
    return NDArray(interp.fresh_copy(value) if copy else value)


@lowers(np.asarray, converts=True)
def _asarray(interp, like, a, dtype=None, order=None, *, device=None, copy=None):
    refuse_given(interp, "numpy.asarray", device=device)
    return _array_of(interp, like, a, dtype, order, copy=copy is True)


@lowers(np.array, converts=True)
def _array(interp, like, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):
    if ndmin:
        raise interp.error("numpy.array with ndmin is not supported by untrace", construct="numpy.array",
                           hint=USE_TORCH)
    return _array_of(interp, like, object, dtype, order, copy=copy is not False)


def _array_of(interp, like, a, dtype, order, copy: bool):
    if order not in (None, "K", "A", "C"):
        raise interp.error(f"a NumPy array with order={order!r} is not supported by untrace", construct="numpy",
                           hint=USE_TORCH)
    if isinstance(a, NDArray):
        source = a
    elif isinstance(a, Value):
        source = from_tensor(interp, a, copy=False)
    else:
        raise interp.error(f"numpy.asarray of a {type(a).__name__} holding tensor values is not supported by untrace",
                           "stack the tensors with torch.stack first", construct="numpy.asarray")
    if source.scalar:
        source = NDArray(source.value)  # asarray of a NumPy scalar is a 0-d array
    value = source.value
    target = torch_dtype(interp, like.dtype, "numpy.asarray")
    if target != value.dtype:
        return NDArray(interp.g.cast(value, target))
    return NDArray(interp.fresh_copy(value) if copy else value)


@lowers(methods=("astype",))
def _astype(interp, like, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if order not in ("K", "A", "C") or casting != "unsafe":
        raise interp.error("ndarray.astype with order/casting is not supported by untrace", construct="ndarray.astype",
                           hint=USE_TORCH)
    target = torch_dtype(interp, like.dtype, "ndarray.astype")
    value = a.value
    if target != value.dtype:
        return NDArray(interp.g.cast(value, target), scalar=a.scalar)
    return NDArray(value if copy is False else interp.fresh_copy(value), scalar=a.scalar)


@lowers(np.copy, methods=("copy",))
def _copy(interp, like, a, order="K", subok=False):
    return NDArray(interp.fresh_copy(array_value(interp, a, "copy")), scalar=getattr(a, "scalar", False))


@lowers(methods=("item",))
def _item(interp, like, a, *args):
    if args:
        raise interp.error("ndarray.item with an index is not supported by untrace", construct="ndarray.item",
                           hint=USE_TORCH)
    v = a.value
    if v.static_shape is None or int(np.prod(v.static_shape)) != 1:
        raise interp.error("ndarray.item of an array whose size is not 1 at export time", construct="ndarray.item",
                           hint="index one element first")
    return interp.python_number(v if v.rank == 0 else interp.call_op("Tensor.reshape", [v, []], {}))
