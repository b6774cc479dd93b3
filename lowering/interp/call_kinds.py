"""What kind of callable a call is, for the cases `TorchCalls.call` tells apart by the
object alone: a C method of a plain Python object, `super().forward` of a module, a
method that reads the module tree; and the Python object behind an interpreter wrapper."""

from __future__ import annotations

import inspect
import types

import torch

from lowering.graph import Value
from lowering.interp.values import BoundUserMethod


def _is_method_of_python_object(func, owner) -> bool:
    """A C method bound to a plain Python object (not a module namespace, not a tensor's,
    not one of torch's C types)."""
    if not isinstance(func, (types.BuiltinMethodType, types.MethodWrapperType)) or owner is None:
        return False
    if isinstance(owner, (types.ModuleType, type, torch.Tensor, torch.nn.Module, Value)):
        return False
    if (type(owner).__module__ or "").partition(".")[0] not in ("torch", "numpy"):
        return True
    from lowering.interp.functions import _is_library_python

    return _is_library_python(type(owner))  # an object of torch's pure-Python classes (a Distribution)


def _as_python(value):
    """What Python itself holds where the interpreter holds a wrapper: a bound method."""
    return value.function.__get__(value.obj) if isinstance(value, BoundUserMethod) else value


def _inherited_forward(func) -> type | None:
    """For `super().forward` bound to a module: the base class whose forward it is."""
    if not (inspect.ismethod(func) and isinstance(func.__self__, torch.nn.Module) and func.__name__ == "forward"):
        return None
    if func.__func__ is type(func.__self__).forward:
        return None
    return next((c for c in type(func.__self__).__mro__ if c.__dict__.get("forward") is func.__func__), None)
