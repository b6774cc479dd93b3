"""Sorting: argsort and sort (ONNX TopK, stable)."""

from __future__ import annotations

import numpy as np

from lowering.numpy_arrays.table import lowers
from lowering.numpy_arrays.values import EAGER_RAISES, USE_TORCH, array_value, wrap


def _sort_stable(interp, kind, stable, order, name: str) -> bool:
    if order is not None:
        raise interp.error(f"{name} with order= (structured arrays) is not supported by untrace", construct=name,
                           hint=USE_TORCH)
    if kind not in (None, "quicksort", "stable", "mergesort", "heapsort"):
        raise interp.error(f"{name} with kind={kind!r} (eager raises)", construct=name, hint=EAGER_RAISES)
    return stable is True or kind in ("stable", "mergesort")


@lowers(np.argsort, methods=("argsort",))
def _argsort(interp, like, a, axis=-1, kind=None, order=None, *, stable=None):
    is_stable = _sort_stable(interp, kind, stable, order, "argsort")
    x = array_value(interp, a, "argsort")
    if axis is None:
        x, axis = interp.call_op("Tensor.reshape", [x, [-1]], {}), 0
    result = interp.call_op("torch.argsort", [x], {"dim": axis, "stable": is_stable})
    return wrap(interp, result, like)


@lowers(np.sort)
def _sort(interp, like, a, axis=-1, kind=None, order=None, *, stable=None):
    is_stable = _sort_stable(interp, kind, stable, order, "sort")
    x = array_value(interp, a, "sort")
    if axis is None:
        x, axis = interp.call_op("Tensor.reshape", [x, [-1]], {}), 0
    values = interp.call_op("torch.sort", [x], {"dim": axis, "stable": is_stable})[0]
    return wrap(interp, interp.fresh_copy(values), like)
