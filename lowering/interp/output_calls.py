"""Calls that change nothing the graph computes: output, and the type hints that return
their argument.

What a call is, is decided by the object called at export time, not by its name:

- `print(...)`, `warnings.warn(...)`, and a record-emitting method of Python's logging API
  (`debug` ... `critical`, `log`, `exception`) bound to a `logging.Logger` (any subclass,
  however it was obtained: `logging.getLogger`, a library's `get_logger`) or a
  `LoggerAdapter`, or to an object of another logging library that has the same API
  (its type defines `debug`, `info`, `warning`, `error` and `critical`): their only
  effect is output, so the call is dropped and its value is None, as theirs is. Nothing
  is printed at export time: the interpreter walks both sides of a data-dependent `if`,
  and eager would print on one only;
- any other method bound to a logger (a library's `warning_once`, `isEnabledFor`) is
  static Python: run as Python on static arguments, what it returns is what eager gets;
  with a tensor among its arguments it is refused, since what it does with the tensor
  is not known;
- `torch.jit.annotate(T, x)` and `typing.cast(T, x)` return `x`.
"""

from __future__ import annotations

import logging
import typing
import warnings

import torch

from lowering.interp.values import BoundUserMethod

NOT_HANDLED = object()

_OUTPUT_FUNCTIONS = (print, warnings.warn, warnings.warn_explicit)
_IDENTITIES = (torch.jit.annotate, typing.cast)
# Runtime checks whose message argument is only shown when the check fails.
_CHECKS = tuple(getattr(torch, name) for name in ("_assert", "_check", "_check_with", "_check_is_size")
                if hasattr(torch, name))
_LOGGERS = (logging.Logger, logging.LoggerAdapter)
# The methods of Python's logging API that emit a record and return None.
_EMITTING = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})


def _is(func, candidates) -> bool:
    return any(func is c for c in candidates)


# What makes an object a logger of a library other than `logging`: the level methods of
# Python's logging API, all of them, on its type.
_LOGGER_API = ("debug", "info", "warning", "error", "critical")


def _logger_like(owner) -> bool:
    kind = type(owner)
    return (not isinstance(owner, (type, torch.nn.Module, torch.Tensor))
            and all(callable(getattr(kind, name, None)) for name in _LOGGER_API))


def emits_a_record(func) -> bool:
    """A level method (`warning`, `log`, ...) of a logger that is not `logging`'s; bound
    by Python or, where the library's Python is read from source, by the interpreter."""
    if isinstance(func, BoundUserMethod):
        owner, name = func.obj, getattr(func.function, "__name__", "")
    else:
        owner, name = getattr(func, "__self__", None), getattr(func, "__name__", "")
    return name in _EMITTING and owner is not None and _logger_like(owner)


def takes_a_message(func) -> bool:
    """Whether the arguments of a call to `func` are a message only: an exception being
    built, output, a logger's method, a runtime check (`torch._assert(cond, message)`). An
    f-string there may show a tensor (by its name)."""
    if _is(func, _OUTPUT_FUNCTIONS + _CHECKS) or isinstance(getattr(func, "__self__", None), _LOGGERS):
        return True
    if emits_a_record(func):
        return True
    return isinstance(func, type) and issubclass(func, BaseException)


def call_without_graph_effect(interp, func, args, kwargs):
    """The call's value when `func` is output or a type hint, else NOT_HANDLED."""
    if _is(func, _OUTPUT_FUNCTIONS):
        return None
    if _is(func, _IDENTITIES):
        return args[1] if len(args) == 2 else kwargs.get("val", kwargs.get("the_value"))
    owner = getattr(func, "__self__", None)
    if not isinstance(owner, _LOGGERS):
        return None if emits_a_record(func) else NOT_HANDLED
    name = getattr(func, "__name__", "")
    if name in _EMITTING and getattr(type(owner), name, None) is getattr(logging.Logger, name, None) is not None:
        return None  # logging's own record-emitting method: output only
    if name in _EMITTING and isinstance(owner, logging.LoggerAdapter):
        return None
    if interp._has_graph(args, kwargs):
        raise interp.error(f"`{type(owner).__name__}.{name}(...)` (a method of a logger) with a tensor argument: "
                           "untrace runs a logger's own methods as Python, which cannot see tensor values",
                           "pass it static values (a shape, a string), or use the logger's `warning` / `info`, which "
                           "untrace drops", construct="call")
    try:
        return func(*args, **kwargs)
    except Exception as exc:
        raise interp.python_exception(exc, f"`{type(owner).__name__}.{name}(...)` failed at export time: "
                                           f"{exc!r}") from None
