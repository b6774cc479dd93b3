"""The table of NumPy functions and ndarray methods untrace lowers, and the decorator that
fills it."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from lowering.numpy_arrays.values import HINT, dummy_result


def qualname(func) -> str:
    name = getattr(func, "__name__", None) or type(func).__name__
    module = getattr(func, "__module__", None)
    if isinstance(module, str) and module.startswith("numpy.linalg"):
        return f"numpy.linalg.{name}"
    return f"numpy.{name}"


FUNCTIONS: dict[Any, Callable] = {}
FUNCTION_NAMES: set[str] = set()
METHODS: dict[str, Callable] = {}
PURE_ON_KNOWN: set = set()


def lowers(*functions, methods: tuple[str, ...] = (), converts: bool = False, layout: bool = False):
    """Register `impl(interp, like, *args, **kwargs)`, called with the arguments of the
    NumPy call (an ndarray method's `self` first) and `like`, the dummy result.
    `converts`: the call takes a torch tensor (np.asarray(t)) as NumPy would its array.
    `layout`: a reshape/transpose, which keeps the dtype and whose result shape the dummy
    (all dims 1) cannot give; `like` is None and the torch op checks the shape."""

    def deco(impl):
        signature = inspect.signature(impl)

        def entry(interp, name, run_numpy, args, kwargs):
            try:
                signature.bind(None, None, *args, **kwargs)
            except TypeError as exc:
                raise interp.error(f"{name}: {exc}", construct=name,
                                   hint="call it with the arguments torch accepts") from None
            like = None if layout else dummy_result(interp, name, run_numpy, args, kwargs, converts)
            return impl(interp, like, *args, **kwargs)

        for f in functions:
            FUNCTIONS[f] = entry
            FUNCTION_NAMES.add(qualname(f))
            PURE_ON_KNOWN.add(f)
        for m in methods:
            METHODS[m] = entry
        return impl

    return deco


def refuse_given(interp, name: str, **given) -> None:
    for key, value in given.items():
        if value is not None and value is not np._NoValue:
            raise interp.error(f"{name} with `{key}=` is not supported by untrace", HINT, construct=name)
