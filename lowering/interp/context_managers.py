"""`with` statements: the context-manager protocol, as Python runs it.

`with A as a: body` is `m = A; a = type(m).__enter__(m); body; type(m).__exit__(m, ...)`,
with `__exit__` run however the body ends (an exception it may suppress by returning a
true value, a `return`, a `break`). untrace does the same at export time:

- a manager of user code (a class with `__enter__` / `__exit__` written in Python outside
  the libraries) has both methods interpreted from source like any call, so what they
  do to Python state is done and undone as in eager, and what `__enter__` returns, graph
  value or not, is bound to the `as` target;
- a library's manager (a lock, `contextlib.nullcontext`, a `@contextmanager` generator) is
  run for real when it holds no graph value, as static Python is;
- torch's grad-mode managers (`no_grad`, `enable_grad`, `set_grad_enabled`,
  `inference_mode`) decide whether autograd records, never a value: they are entered
  and left for real (`set_grad_enabled(False)` switches the mode when it is made, and
  its `__exit__` switches it back);
- `torch.autocast` changes the dtype ops compute in, for its device only: disabled, or
  for another device than the CPU the graph is checked against, it changes nothing and
  the body is lowered as written; enabled for the CPU it is refused, since the graph
  computes in the tensors' own dtypes.

A function decorated with one of torch's managers (`@torch.autocast("cuda", enabled=False)`,
`@torch.no_grad()`) is torch's wrapper around it, which runs `with manager: return
func(*args)`; untrace does the same with the function's own source (`context_decorated`).

The body runs in the region the `with` is in, so a `with` under a data-dependent `if` or
inside a graph loop is entered and left in each branch or body the interpreter builds.
"""

from __future__ import annotations

import contextlib
import inspect

import torch

from analyzer.frontend import expr_text
from lowering.errors import PythonException
from lowering.graph import Value
from lowering.interp.functions import _is_user_function
from lowering.interp.values import _contains_graph

_GRAD_MODES = (torch.no_grad, torch.enable_grad, torch.set_grad_enabled, torch.inference_mode)
# Library managers forward may make with static arguments: making one does nothing a `with`
# does not undo (no I/O, as a temporary directory or a file would do).
_MADE_AT_EXPORT = (*_GRAD_MODES, torch.amp.autocast_mode.autocast, contextlib.nullcontext, contextlib.suppress)


def is_context_manager_class(cls) -> bool:
    return inspect.isclass(cls) and callable(getattr(cls, "__enter__", None)) and callable(getattr(cls, "__exit__", None))


def made_at_export(cls) -> bool:
    """A library's context-manager class that forward may instantiate at export time."""
    return inspect.isclass(cls) and issubclass(cls, _MADE_AT_EXPORT)


def _wrapper_code(decorator):
    return decorator(lambda: None).__code__


# The code of torch's decorator wrappers: `autocast_decorator`'s and `context_decorator`'s.
_AUTOCAST_WRAPPER = _wrapper_code(torch.amp.autocast("cpu", enabled=False))
_CONTEXT_WRAPPER = _wrapper_code(torch.no_grad())


def context_decorated(func):
    """`(managers, inner)` when `func` is torch's wrapper of `inner` by context-manager
    decorators (outermost first), else None. A `context_decorator` wrapper makes its
    manager anew for each call, as here."""
    managers = []
    while inspect.isfunction(func) and func.__code__ in (_AUTOCAST_WRAPPER, _CONTEXT_WRAPPER) and func.__closure__:
        cells = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__)))
        if func.__code__ is _AUTOCAST_WRAPPER:
            managers.append(cells["autocast_instance"])
        else:
            managers.append(cells["ctx_factory"]())
        func = cells["func"]
    return (managers, func) if managers else None


class ContextManagers:
    def call_in_contexts(self, managers, text: str, body):
        """`with m1, m2, ...: return body()` for library managers (a decorated function's)."""
        exits = []
        try:
            for manager in managers:
                self._enter(manager, text, exits)
            result = body()
        except BaseException:
            while exits:
                exits.pop()(None, None, None)
            raise
        while exits:
            exits.pop()(None, None, None)
        return result

    def _stmt_With(self, s, frame):
        exits = []  # one `__exit__` per manager entered, the innermost last
        try:
            for ctx, target in s.items:
                manager = self.eval(ctx, frame)
                entered = self._enter(manager, expr_text(ctx), exits)
                if target is not None:
                    self.assign(target, entered, frame)
            self.exec_block(s.body, frame)
        except PythonException as exc:
            # Each `__exit__`, innermost first, sees the exception until one suppresses it.
            raised = exc.exception
            while exits:
                if exits.pop()(type(raised) if raised is not None else Exception, raised, None):
                    if exc.region != id(self.g):
                        raise self.error("a context manager suppresses an exception raised inside a data-dependent "
                                         "branch or loop: whether eager goes on after the `with` depends on data",
                                         "raise and catch outside the data-dependent region", construct="with") from None
                    break
            else:
                raise
        except BaseException:
            while exits:  # a `return`, `break`, or a refusal: every `__exit__` runs, with no exception
                exits.pop()(None, None, None)
            raise
        while exits:
            exits.pop()(None, None, None)

    def _enter(self, manager, text: str, exits: list):
        """`type(manager).__enter__(manager)`, its `__exit__` appended to `exits`."""
        if isinstance(manager, Value):
            raise self.error(f"`with {text}`: a tensor is not a context manager (eager raises TypeError)",
                             "use a context manager object", construct="with")
        cls = type(manager)
        if not is_context_manager_class(cls):
            raise self.python_exception(TypeError(f"'{cls.__name__}' object does not support the context manager "
                                                  "protocol"), f"`with {text}`: not a context manager", "with")
        if isinstance(manager, torch.amp.autocast_mode.autocast):
            self._check_autocast(manager, text)
            exits.append(lambda *exc_info: False)
            return manager
        if isinstance(manager, _GRAD_MODES) or not _is_user_function(cls.__enter__):
            if _contains_graph(getattr(manager, "__dict__", {})) or _contains_graph(
                    [getattr(manager, "args", ()), getattr(manager, "kwds", {})]):
                raise self.error(f"`with {text}`: a library's context manager holding tensors is run as Python at "
                                 "export time, which cannot see their values", "move the `with` out of forward, or "
                                 "write the context manager as a class with `__enter__` / `__exit__`",
                                 construct="with")
            entered = manager.__enter__()
            exits.append(manager.__exit__)
            return entered
        entered = self.call(cls.__enter__.__get__(manager), [], {})
        exits.append(lambda *exc_info: self._exit(manager, exc_info))
        return entered

    def _exit(self, manager, exc_info) -> bool:
        result = self.call(type(manager).__exit__.__get__(manager), list(exc_info), {})
        if isinstance(result, Value):
            raise self.error("`__exit__` returns a tensor: whether it suppresses the exception depends on data",
                             "return a Python bool from `__exit__`", construct="with")
        return bool(result)

    def _check_autocast(self, manager, text: str) -> None:
        if getattr(manager, "_enabled", False) and getattr(manager, "device", "cpu") == "cpu":
            raise self.error(f"`with {text}` computes the body's ops in {manager.fast_dtype} on the CPU, where "
                             "untrace lowers them in the tensors' own dtypes", "export without autocast (the graph "
                             "then computes in float32), or cast explicitly with `.to(dtype)` where the model needs "
                             "the lower precision", construct="with")

