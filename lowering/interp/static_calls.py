"""Static Python runs as Python: the one rule that decides which calls untrace evaluates
for real at export time, whoever wrote the callee (Python's library, a third-party
package, the model's own helpers).

A call runs as Python when

- the callee is not torch's (a torch function, an `nn.Module`, a method bound to a module:
  what forward wrote to a module's attributes is call-local, held by the interpreter, so
  the module's own methods are read from source), and not a function of forward itself
  (a lambda or nested `def`: the interpreter holds their frames);
- no argument holds a value only the interpreter has: a graph value, a tensor, a list a
  graph loop appended to, a lambda of forward, looked for in lists, tuples, dicts, sets
  and the attributes of plain objects;
- its code does not name torch (what it reads of torch's state, such as
  `torch.compiler.is_exporting()`, is the exporter's, not eager's: it is read from source);
- it cannot change anything outside itself (`state_scan`: a bytecode scan of its code and
  of what it calls, for stores into globals, cells it does not own, attributes and items of
  objects it did not build, and calls of methods that change their receiver): a change
  made for real would be neither recorded nor undone by the interpreter, nor refused under
  a data-dependent branch, where both sides are lowered; such a call is interpreted from
  source, where every change is;
- and its result carries no tensor: it runs under a `TorchFunctionMode` that stops it at
  the first torch operation, and such a call, or one whose result holds a tensor, is
  interpreted from its source instead (by the rule above, what it did before it was
  stopped changed nothing outside it, so nothing happens twice).

So `functools.partial(...)`, `math.*`, `to_2tuple(3)`-like helpers, config properties,
`dataclasses.replace`, `itertools`, a generator or a `match` in a helper on static values
all give what eager gets, without a list of idioms.

Never run: input and output (`open`, `input`, `breakpoint`, `help`) and code from
strings (`eval`, `exec`), refused by name; `forward`; anything whose result carries a
tensor. `globals()`, `locals()`, `vars()` and `dir()` without arguments answer for the
frame being interpreted, not the interpreter's.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import io
import types

import torch
from torch.overrides import TorchFunctionMode

from lowering.graph import Value
from lowering.numpy_arrays import NDArray
from lowering.interp.python_state import VARYING
from lowering.interp.functions import is_stdlib_path
from lowering.interp.state_scan import may_change_state
from lowering.interp.values import (BoundUserMethod, Closure, GraphChoice, GraphRange, GraphRows, Stacked,
                                    TensorMethod)

NOT_STATIC = object()

# Calls never run at export time: the reason, and the way out.
NEVER_RUN = {
    builtins.open: ("`open()` reads or writes a file (I/O)", "read the file in __init__ and keep what forward needs"),
    io.open: ("`open()` reads or writes a file (I/O)", "read the file in __init__ and keep what forward needs"),
    builtins.input: ("`input()` reads the console (I/O)", "pass the value to the module in __init__"),
    builtins.breakpoint: ("`breakpoint()` starts the debugger", "remove it from forward before exporting"),
    builtins.help: ("`help()` prints interactive help (I/O)", "remove it from forward"),
    builtins.eval: ("`eval()` runs code from a string, which untrace cannot read",
                    "write the expression in forward's source"),
    builtins.exec: ("`exec()` runs code from a string, which untrace cannot read",
                    "write the statements in forward's source"),
}

_INTERPRETER_VALUES = (Value, Stacked, GraphRange, GraphRows, NDArray, Closure, BoundUserMethod, TensorMethod,
                       GraphChoice, torch.Tensor, torch.nn.Module, *VARYING)
_DEPTH = 4


class _TouchesTorch(BaseException):
    """A call run as Python reached a torch operation (a BaseException: no `except
    Exception` in the callee swallows it)."""


class _NoTorch(TorchFunctionMode):
    def __torch_function__(self, func, types_, args=(), kwargs=None):
        raise _TouchesTorch(func)


def _is_torch(func) -> bool:
    if isinstance(func, torch.nn.Module) or inspect.isclass(func) and issubclass(func, torch.nn.Module):
        return True
    owner = getattr(func, "__self__", None)
    if isinstance(owner, (torch.nn.Module, torch.Tensor)):
        return True
    module = getattr(func, "__module__", None) or getattr(type(func), "__module__", "") or ""
    return module.partition(".")[0] == "torch"


def _names_torch(code: types.CodeType, globs: dict, depth: int = 0) -> bool:
    """Whether Python code names torch (a name or an import of it, or a global bound to
    one of torch's objects): what it reads of torch's state (the guards of `guards`,
    grad mode, the default dtype) is the exporter's, not eager's, so it is read from source."""
    for name in code.co_names:
        if name == "torch" or name.startswith("torch."):
            return True
        value = globs.get(name)
        if value is not None and not isinstance(value, (int, float, str, bool)) and _is_torch(value):
            return True
    return depth < _DEPTH and any(isinstance(c, types.CodeType) and _names_torch(c, globs, depth + 1)
                                  for c in code.co_consts)


def _is_user_code(func) -> bool:
    from lowering.interp.functions import _is_user_function

    return _is_user_function(getattr(func, "__func__", func))


def _python_code(func):
    """The Python functions that a call of `func` runs first: its own, or a class's
    `__new__` / `__init__` / `__post_init__`."""
    if inspect.isclass(func):
        return [f for f in (getattr(func, n, None) for n in ("__new__", "__init__", "__post_init__"))
                if inspect.isfunction(f)]
    func = getattr(func, "__func__", func)
    func = getattr(func, "func", func) if isinstance(func, functools.partial) else func
    return [func] if inspect.isfunction(func) else []


def holds_interpreter_value(v, depth: int = 0) -> bool:
    """Whether `v` holds a value that only the interpreter has (see the module doc)."""
    if isinstance(v, _INTERPRETER_VALUES):
        return True
    if depth >= _DEPTH or isinstance(v, (str, bytes, int, float, complex, bool, type(None), type, types.ModuleType,
                                         types.FunctionType, types.BuiltinFunctionType)):
        return False
    if isinstance(v, (list, tuple, set, frozenset)):
        return any(holds_interpreter_value(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return any(holds_interpreter_value(x, depth + 1) for x in (*v.keys(), *v.values()))
    if isinstance(v, functools.partial):
        return holds_interpreter_value([v.func, v.args, v.keywords], depth + 1)
    state = getattr(v, "__dict__", None)
    if isinstance(state, dict) and not inspect.isroutine(v):
        return any(holds_interpreter_value(x, depth + 1) for x in state.values())
    return False


def _carries_tensor(v, depth: int = 0) -> bool:
    if isinstance(v, torch.Tensor):
        return True
    if depth >= _DEPTH or isinstance(v, (str, bytes, int, float, bool, type(None))):
        return False
    if isinstance(v, (list, tuple, set, frozenset)):
        return any(_carries_tensor(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return any(_carries_tensor(x, depth + 1) for x in v.values())
    state = getattr(v, "__dict__", None)
    if isinstance(state, dict) and not inspect.isroutine(v) and not isinstance(v, (type, types.ModuleType)):
        return any(_carries_tensor(x, depth + 1) for x in state.values())
    return False


class _GuardedIterator:
    """A generator a call run as Python returned: each step runs under the same rule."""

    def __init__(self, interp, it, name: str):
        self.interp, self.it, self.name = interp, it, name

    def __iter__(self):
        return self

    def __next__(self):
        try:
            with _NoTorch():
                return next(self.it)
        except _TouchesTorch:
            raise self.interp.error(f"the generator `{self.name}` reaches a torch operation while it is iterated, "
                                    "after it was run as Python on static arguments", "build the tensors in forward "
                                    "from what the generator yields", construct="call") from None


def _frame_names(interp) -> dict:
    frame = interp.frames[-1] if interp.frames else None
    return {k: v for k, v in frame.env.items() if not k.startswith("$")} if frame is not None else {}


def call_on_frame(interp, func, args, kwargs):
    """`globals()`, `locals()`, `vars()`, `dir()` without arguments: forward's frame."""
    if args or kwargs or not interp.frames:
        return NOT_STATIC
    if func is builtins.globals:
        return interp.frames[-1].globals
    if func in (builtins.locals, builtins.vars):
        return _frame_names(interp)
    if func is builtins.dir:
        return sorted(_frame_names(interp))
    return NOT_STATIC


# The standard library's pure modules, run as Python on static arguments before the scan
# existed, and still: the scan follows every dunder of the objects reachable from a call,
# and a mapping's `get` reached `collections.abc.Set.__and__` through `__eq__`, so it
# refused what 23 real transformers models call (`super().get(name, default)` of a registry).
# Known gap: a standard-library function that changes its argument (`heapq.heappush`) is
# run for real, as it always was.
_STANDARD_MODULES = ("math", "operator", "builtins", "functools", "itertools", "numbers", "collections",
                     "_collections_abc", "typing", "enum", "contextlib")


def _standard_library(func) -> bool:
    module = getattr(getattr(func, "__func__", func), "__module__", None) or ""
    code = getattr(getattr(func, "__func__", func), "__code__", None)
    in_stdlib = code is not None and (is_stdlib_path(code.co_filename) or code.co_filename.startswith("<frozen "))
    return module.partition(".")[0] in _STANDARD_MODULES or in_stdlib


def _real_method(v):
    return types.MethodType(v.function, v.obj) if isinstance(v, BoundUserMethod) else v


def run_static_call(interp, func, args, kwargs):
    """The call's value when the rule runs it as Python (see the module doc); NOT_STATIC
    when it is not static; refuses the calls that are never run."""
    try:
        hashable = hash(func) is not None
    except TypeError:
        hashable = False
    if hashable and func in NEVER_RUN:
        what, hint = NEVER_RUN[func]
        raise interp.error(f"{what}: untrace never runs it at export time", hint, construct="call")
    if hashable and func in (builtins.globals, builtins.locals, builtins.vars, builtins.dir):
        value = call_on_frame(interp, func, args, kwargs)
        if value is not NOT_STATIC:
            return value
    owner = getattr(func, "__self__", None)  # a bound method: its object is an argument too
    if not callable(func) or _is_torch(func):
        return NOT_STATIC
    if any(isinstance(a, Closure) for a in [*args, *kwargs.values()]) and not _is_user_code(func):
        # `sorted(items, key=lambda a: ...)`, `map(f, ...)`: forward's function as Python's own,
        # when it holds no tensor (`real_function` refuses one that does)
        name = getattr(func, "__name__", "the call")
        args = [interp.real_function(a, f"a function passed to `{name}()`") if isinstance(a, Closure) else a
                for a in args]
        kwargs = {k: interp.real_function(v, f"a function passed to `{name}()`") if isinstance(v, Closure) else v
                  for k, v in kwargs.items()}
    if getattr(func, "__module__", None) == "inspect":
        # `inspect.signature(self.forward_chunk)`: introspection reads a method, never
        # calls it, so it is given the method as Python's own
        args = [_real_method(a) for a in args]
        kwargs = {k: _real_method(v) for k, v in kwargs.items()}
    if holds_interpreter_value([owner, args, kwargs]):
        return NOT_STATIC
    if dataclasses.is_dataclass(func) and not isinstance(func, type):
        return NOT_STATIC
    if any(_names_torch(f.__code__, f.__globals__) for f in _python_code(func)):
        return NOT_STATIC
    if not _standard_library(func) and may_change_state(func, owner, args, kwargs) is not None:
        return NOT_STATIC  # interpreted from source, where each change is recorded, undone or refused
    try:
        with _NoTorch():
            result = func(*args, **kwargs)
    except _TouchesTorch:
        return NOT_STATIC
    except Exception as exc:  # eager raises it too, on these values
        name = getattr(func, "__qualname__", None) or type(func).__name__
        raise interp.python_exception(exc, f"`{name}(...)` failed at export time: {exc!r}") from None
    if _carries_tensor(result):
        return NOT_STATIC
    if inspect.isclass(func) and isinstance(getattr(result, "__dict__", None), dict):
        interp.local_objects[id(result)] = id(interp.g)  # a new object: its attributes are the call's own
        interp._local_refs.append(result)
    if inspect.isgenerator(result):
        return _GuardedIterator(interp, result, getattr(func, "__qualname__", "generator"))
    return result
