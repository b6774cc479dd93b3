"""Torch-call semantics: what a call goes to (op table, user code, a pure Python call
run for real), tensor methods, modules, tensor constants and initializers; in-place
updates of what they return are `inplace_updates`."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import types

import numpy as np
import torch

from lowering.aliasing import is_in_place
from lowering.errors import GraphConstructionError, LoweringError
from lowering.graph import Value
from lowering import numpy_arrays
from lowering.numpy_arrays import NDArray, NumpyMethod
from lowering.ops import registry
from lowering.seeded_random import DRAWS as _RANDOM_DRAWS
from lowering.interp.builtin_calls import _BUILTIN_HANDLERS
from lowering.interp.number_math import NUMBER_METHODS, is_math_function, math_call, number_method
from lowering.interp.containers import _SEQUENCE_OPS
from lowering.interp.autograd_functions import call_function_apply, is_function_apply
from lowering.interp.functions import _is_library_python, _is_user_function
from lowering.interp.static_calls import NOT_STATIC, run_static_call
from lowering.interp.module_methods import is_module_method
from lowering.interp import complex_values
from lowering.interp.values import ComplexPair
from lowering.interp.context_managers import context_decorated, made_at_export
from lowering.interp.output_calls import NOT_HANDLED, call_without_graph_effect, emits_a_record
from lowering.interp.call_kinds import _as_python, _inherited_forward, _is_method_of_python_object
from lowering.interp.guards import guard_value, is_guard
from lowering.interp.module_hooks import has_forward_hooks
from lowering.interp.object_state import (changes_module_tensors, is_context_var_method, is_generated_init, is_namedtuple_method,
                                          is_hook_registration)
from lowering.interp.python_state import VARYING, has_varying_items
from lowering.interp.values import (MISSING, BoundUserMethod, Closure, EarlierIterations, GraphChoice, Stacked,
                                    TensorItems, TensorMethod, _contains_graph, _hashable)

# Pure restructuring of containers, safe to run for real even with graph values as leaves.
_PURE_WITH_GRAPH = {"torch.utils._pytree.tree_flatten", "torch.utils._pytree.tree_unflatten",
                    "torch.utils._pytree.tree_map", "torch.utils._pytree.tree_leaves", "collections.OrderedDict",
                    "dataclasses.fields", "dataclasses.is_dataclass"}  # these read only the class


# Runtime checks on data: the exported graph drops them, as torch.onnx does.
_RUNTIME_CHECKS = {"torch._check", "torch._check_is_size", "torch._assert", "torch._check_with"}


_PURE_TORCH = {"torch.is_tensor", "torch.is_grad_enabled", "torch.get_default_dtype", "torch.finfo", "torch.iinfo",
               "torch.device", "torch.is_floating_point", "torch._assert", "torch._check",
               "torch.promote_types", "torch.Size",
               "torch._C._log_api_usage_once"}  # torchvision's usage logging: no effect on the graph


_ValuesIndices = __import__("collections").namedtuple("return_types", ["values", "indices"])


_VALUES_INDICES = {"topk", "sort", "max", "min", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin"}


def _inplace_flag(func, args, kwargs) -> bool:
    """`inplace=True` given to an `F` function, by keyword or position."""
    if kwargs.get("inplace") is True:
        return True
    if func is None or not inspect.isfunction(func):
        return False
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return False
    return bound.arguments.get("inplace") is True


def _what_forward_is(forward) -> str:
    """Why a module's forward is not source untrace reads: a decorator's wrapper, or a
    library's function, with where it is defined."""
    code = getattr(forward, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    inner = getattr(forward, "__wrapped__", None)
    if inner is not None:
        inner_code = getattr(inner, "__code__", None)
        at = f" at {inner_code.co_filename}:{inner_code.co_firstlineno}" if inner_code is not None else ""
        return (f": its forward{at} is wrapped by a decorator, whose wrapper `{getattr(forward, '__qualname__', forward)}`"
                f"{where} untrace does not interpret")
    return f": its forward `{getattr(forward, '__qualname__', forward)}`{where} is not Python source untrace interprets"


# Factories whose data may be Python floats: of the default dtype when no dtype is given.
_FACTORIES_OF_DATA = ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor", "torch.full", "Tensor.new_tensor",
                      "Tensor.new_full")


class TorchCalls:
    def call(self, func, args, kwargs):
        # The source of the first argument, when the call is in the source: an in-place
        # update names it (`torch.relu_(self.buf)`); taken here, so that no other call sees it.
        first_argument, self.first_argument = self.first_argument, None
        if isinstance(func, NumpyMethod):
            return numpy_arrays.call_method(self, func, args, kwargs)
        if numpy_arrays.is_numpy_callable(func):
            return numpy_arrays.call_function(self, func, args, kwargs)
        if isinstance(func, TensorMethod):
            return self.tensor_method(func.value, func.name, args, kwargs, func.receiver)
        if isinstance(func, complex_values.ComplexMethod):
            return complex_values.call_method(self, func, args, kwargs)
        if isinstance(func, GraphChoice):
            return self.call_choice(func, 0, args, kwargs)
        if emits_a_record(func):
            return None  # a logger's `warning(...)` read from source: output only
        if isinstance(func, BoundUserMethod):
            return self.call_python_function(func.function, [func.obj, *args], kwargs)
        if isinstance(func, Closure):
            return self.call_closure(func, args, kwargs)
        if isinstance(func, functools.partial):  # a callable value: the call it stands for
            return self.call(func.func, [*func.args, *args], {**func.keywords, **kwargs})
        if func is functools.partial and args:
            target = _as_python(args[0])
            if not callable(target):
                raise self.error("functools.partial of a function made inside forward (a lambda or nested def, or a "
                                 "tensor method)", "call it with all its arguments, or wrap it in a lambda that "
                                 "passes the fixed ones", construct="call")
            return functools.partial(target, *args[1:], **kwargs)  # only stores its arguments, tensors too
        if isinstance(func, torch.nn.Module):
            if has_forward_hooks(func):  # module(x) runs its hooks around forward, as __call__ does
                return self.call_with_hooks(func, args, kwargs, lambda a, k: self.call_module(func, a, k))
            return self.call_module(func, args, kwargs, updated=first_argument)
        if getattr(func, "__script_if_tracing_wrapper", False):
            func = getattr(func, "__original_fn")  # torch.jit._script_if_tracing: the function itself outside a tracer
        if inspect.isclass(func) and issubclass(func, torch.nn.Module):
            return self.module_in_forward(func, args, kwargs)  # a module of the call (`local_modules`)
        if self.initialises_local_module(func, args):
            return None  # `super().__init__()` of a module built in forward: set up already
        decorated = context_decorated(func.__func__ if inspect.ismethod(func) else func)
        if decorated is not None:  # `@torch.autocast(...)` / `@torch.no_grad()`: the function under its manager
            managers, inner = decorated
            bound = [func.__self__] if inspect.ismethod(func) else []
            return self.call_in_contexts(managers, f"@{type(managers[0]).__name__}(...) of {inner.__qualname__}",
                                         lambda: self.call(inner, [*bound, *args], kwargs))
        if made_at_export(func) and not self._has_graph(args, kwargs):
            return func(*args, **kwargs)  # a `with` statement's manager, made as Python makes it (context_managers)
        if isinstance(func, functools._lru_cache_wrapper) and _is_user_function(func.__wrapped__):
            if not self._has_graph(args, kwargs) and all(_hashable(a) for a in [*args, *kwargs.values()]):
                return func(*args, **kwargs)  # what eager gets: the cached result (availability checks, ...)
            return self.call(func.__wrapped__, args, kwargs)  # a cache changes no result: the function's source
        if func is dataclasses.replace:
            return self.replace_dataclass(args, kwargs)
        if is_namedtuple_method(func):
            return func(*args, **kwargs)  # `out._replace(logits=...)`: a new tuple of the same items
        if func in (torch.is_floating_point, torch.is_complex) and len(args) == 1 and isinstance(args[0], Value):
            return getattr(args[0].dtype, func.__name__)  # the dtype decides, whatever the values
        if func is torch.broadcast_shapes and not kwargs:
            return self.broadcast_shapes(args)
        if func is torch.Size and len(args) == 1 and not kwargs and self._has_graph(args, kwargs):
            return tuple(args[0])  # sizes the graph decides: a shape is a tuple here, as `x.shape` is
        if func is object.__new__ and len(args) == 1 and not kwargs and inspect.isclass(args[0]) and \
                (_is_user_function(args[0]) or _is_library_python(args[0])) and args[0].__new__ is object.__new__:
            obj = object.__new__(args[0])  # `self.__new__(type(self))`: a blank object of a Python class
            self.local_objects[id(obj)] = id(self.g)
            self._local_refs.append(obj)
            return obj
        if is_generated_init(func, args):
            return self.call_generated_init(func, args, kwargs)
        if is_hook_registration(func):
            return self.register_hook(func, args, kwargs)
        if is_context_var_method(func):
            return self.context_var_call(func, func.__self__, args, kwargs)
        result = call_without_graph_effect(self, func, args, kwargs)
        if result is not NOT_HANDLED:
            return result
        inherited = _inherited_forward(func)
        if inherited is not None:
            return self.call_module(func.__self__, args, kwargs, cls=inherited)  # super().forward(x)
        if is_module_method(func):  # after super().forward, which is bound to the module too
            return self.call_module_method(func, args, kwargs)
        if is_function_apply(func):
            return call_function_apply(self, func.__self__, args, kwargs)
        if is_guard(func):
            return guard_value(func)
        if func is torch.Generator:
            return self.generators.create(self, args, kwargs)
        if self.generators.is_method(func):
            return self.generators.call_method(self, func, args, kwargs)
        if getattr(func, "__module__", "") == "torch._higher_order_ops.map" and getattr(func, "__name__", "") == "map":
            return self.functional_map(args, kwargs)
        if _hashable(func) and is_math_function(func) and self._has_graph(args, kwargs):
            return math_call(self, func, args, kwargs)  # `math.sqrt(n)` of a number the graph holds
        special = _BUILTIN_HANDLERS.get(func) if _hashable(func) else None
        if special is not None:
            try:
                return special(self, args, kwargs)
            except (LoweringError, GraphConstructionError):
                raise
            except Exception as exc:
                if self._has_graph(args, kwargs):
                    raise
                # isinstance(x, SomeTypedDict) raises TypeError in eager too; code that
                # catches it (a validator trying each type of a Union) must see it
                raise self.python_exception(exc, f"`{getattr(func, '__name__', func)}(...)` failed at export "
                                                 f"time: {exc!r}") from None
        owner = getattr(func, "__self__", None)
        if isinstance(func, (types.BuiltinMethodType, types.MethodWrapperType)) and \
                isinstance(owner, (list, dict, set, frozenset, str, tuple, bytes)):
            self.check_memo_read(owner, f"`.{getattr(func, '__name__', '')}()` on")
            self.check_mutating_call(func, owner, args)
            try:
                return func(*args, **kwargs)  # list.append, dict.get, str.format ...
            except Exception as exc:
                raise self.python_exception(exc, f"{type(owner).__name__}.{func.__name__}(...) failed at export "
                                                 f"time: {exc!r}") from None
        if _is_method_of_python_object(func, owner) and not self._has_graph(args, kwargs):
            try:
                return func(*args, **kwargs)  # re.Pattern.fullmatch, str methods of a subclass, ...
            except Exception as exc:
                raise self.python_exception(exc, f"{type(owner).__name__}.{func.__name__}(...) failed at export "
                                                 f"time: {exc!r}") from None
        if func is getattr and len(args) >= 2 and not isinstance(args[0], Value) and \
                not self._has_graph(args[1:], kwargs):
            written = self.module_attribute(args[0], args[1]) if isinstance(args[0], torch.nn.Module) else MISSING
            if written is not MISSING:
                return written  # forward's own assignment, call-local (`module_attributes`)
            try:
                value = getattr(*args)
            except AttributeError as exc:
                raise self.python_exception(exc, f"getattr(...) failed at export time: {exc!r}") from None
            self.mark_foreign(value, f"{type(args[0]).__name__}.{args[1]}")
            if isinstance(value, torch.Tensor) and not isinstance(args[0], type):
                return self.tensor_constant(value, owner=args[0], attr=args[1])
            return value
        if func in (setattr, delattr) and args and isinstance(args[0], torch.nn.Module) and (
                func is delattr or len(args) != 3 or changes_module_tensors(args[2])):
            raise self.error(f"`{func.__name__}()` in forward changes the module's state, which outlives the call",
                             "keep per-call state in local variables", construct="call")
        owner_text = first_argument or type(args[0]).__name__ if args else ""
        if func is setattr and len(args) == 3:
            return self.set_attribute(*args, describe=f"setattr({owner_text}, {args[1]!r})")
        if func is delattr and len(args) == 2:
            return self.delete_attribute(*args, describe=f"delattr({owner_text}, {args[1]!r})")
        # Static Python runs as Python: the one rule (`static_calls`), after the calls the
        # interpreter gives a meaning of its own above (output, guards, attribute writes, ...).
        result = run_static_call(self, func, args, kwargs)
        if result is not NOT_STATIC:
            return result
        if inspect.isclass(func) and _is_user_function(func):
            return self.instantiate(func, args, kwargs)
        if inspect.ismethod(func) and _is_user_function(func.__func__):
            return self.call_python_function(func.__func__, [func.__self__, *args], kwargs)
        dunder_call = getattr(type(func), "__call__", None)
        if not inspect.isclass(func) and inspect.isfunction(dunder_call) and (
                _is_user_function(dunder_call) or _is_library_python(dunder_call)):
            return self.call_python_function(dunder_call, [func, *args], kwargs)  # obj(...) is type(obj).__call__(obj, ...)
        name = registry.canonical_name(func) if callable(func) else None
        if name is not None and (name in complex_values.MAKERS or name in complex_values.CALLS and (
                complex_values.holds_complex(args) or complex_values.holds_complex(kwargs))):
            result = complex_values.complex_call(self, name, args, kwargs)  # a spectrum as (real, imaginary) parts
            if result is not NotImplemented:
                return result
        elif complex_values.holds_complex(args) or complex_values.holds_complex(kwargs):
            raise complex_values.refuse(self, f"`{name or getattr(func, '__name__', func)}`")
        if name is not None:
            if name in ("torch.cond",):
                return self.torch_cond(args, kwargs)
            if name in numpy_arrays.TO_TORCH and args and isinstance(args[0], (NDArray, np.ndarray, np.generic)):
                return numpy_arrays.to_tensor(self, name, func, args, kwargs)
            if name in _RANDOM_DRAWS and kwargs.get("generator") is not None:
                return self.generators.draw(self, func, name, args, kwargs)
            if name in _RUNTIME_CHECKS and self._has_graph(args, kwargs):
                return None
            if name in _SEQUENCE_OPS and args and isinstance(args[0], (list, tuple)) and any(
                    isinstance(x, VARYING) for x in args[0]):
                if any(isinstance(x, EarlierIterations) for x in args[0]):
                    raise self.refuse_varying_list(args[0], f"`{name}`")
                return self.sequence_op(name, list(args[0]), *args[1:], **kwargs)
            if name in _PURE_WITH_GRAPH:
                return func(*args, **kwargs)
            lowering = registry.lookup(name, self.g.opset)
            if lowering is not None and (self._has_graph(args, kwargs) or name.startswith(("torch.", "Tensor."))):
                return self.call_torch(name, func, args, kwargs, first_argument)
            if not self._has_graph(args, kwargs) and self._is_pure(func, name):
                try:
                    return func(*[_as_python(a) for a in args], **{k: _as_python(v) for k, v in kwargs.items()})
                except Exception as exc:
                    raise self.python_exception(exc, f"{name}(...) failed at export time: {exc!r}") from None
            if lowering is not None:
                return self.call_torch(name, func, args, kwargs, first_argument)
            if _is_user_function(func):
                return self.call_python_function(func, args, kwargs)
            if inspect.isclass(func) and not issubclass(func, torch.nn.Module) and _is_library_python(func):
                with self.reading_library(name):
                    return self.instantiate(func, args, kwargs)  # a library's class, e.g. torch.distributions'
            if inspect.ismethod(func) and _is_library_python(func.__func__) and not isinstance(func.__self__, type):
                with self.reading_library(name):
                    return self.call_python_function(func.__func__, [func.__self__, *args], kwargs)
            if inspect.isfunction(func) and _is_library_python(func):
                with self.reading_library(name):
                    return self.call_python_function(func, args, kwargs)  # pure Python, not an operator: its source
            raise self.error(f"no lowering for `{name}`",
                             f"register one with lowering.register_lowering({name!r}, fn), or rewrite with supported torch ops",
                             construct="call")
        if not callable(func):
            raise self.error(f"cannot call {func!r}: a `{type(func).__name__}` is not callable (eager raises TypeError "
                             "for the inputs that reach this call)", construct="call",
                             hint="when a data-dependent `if` leads here, make the test static (a Python value or a "
                                  "static size) so that this side is not lowered")
        raise self.error(f"cannot call {func!r}", construct="call",
                         hint="register a lowering for it (lowering.register_lowering), or call it outside forward")

    @contextlib.contextmanager
    def reading_library(self, name: str):
        """A refusal inside library code read from source names the library call the
        model's own code made (`torch.autograd.grad`), not only the line deep inside it."""
        outermost = not self._library_depth
        self._library_depth += 1
        try:
            yield
        except LoweringError as exc:
            if outermost and " (inside `" not in exc.message:
                exc.message = f"{exc.message} (inside `{name}`, library Python read from source)"
                exc.args = (exc.message,)
            raise
        finally:
            self._library_depth -= 1

    def broadcast_shapes(self, shapes) -> tuple:
        """`torch.broadcast_shapes(*shapes)` of shapes with sizes the graph decides: per
        dimension, a size of 1 takes the other's; two graph sizes give `b if a == 1 else a`."""
        shapes = [(s,) if isinstance(s, (int, Value)) else tuple(s) for s in shapes]
        rank = max((len(s) for s in shapes), default=0)
        out = []
        for d in range(rank):
            dim = 1
            for s in shapes:
                k = d - (rank - len(s))
                if k >= 0:
                    dim = self._broadcast_size(dim, s[k])
            out.append(dim)
        return tuple(out)

    def _broadcast_size(self, a, b):
        if not isinstance(a, Value) and a == 1:
            return b
        if not isinstance(b, Value) and b == 1:
            return a
        if not isinstance(a, Value) and not isinstance(b, Value):
            if a != b:
                raise self.error(f"torch.broadcast_shapes: sizes {a} and {b} do not broadcast (torch raises)",
                                 construct="call")
            return a
        if not isinstance(a, Value) or not isinstance(b, Value):
            return a if not isinstance(a, Value) else b  # a static size other than 1: the only valid result
        one = self.g.const(1, dtype=a.dtype)
        return self.python_number(self.g.op("Where", self.g.op("Equal", a, one), b, a))

    def _is_pure(self, func, name: str) -> bool:
        """torch's own functions of static values (`torch.finfo`, `torch.device`): every
        other call on static values is decided by `static_calls`."""
        return name in _PURE_TORCH

    def _has_graph(self, args, kwargs) -> bool:
        return any(_contains_graph(a) for a in args) or any(_contains_graph(v) for v in kwargs.values())

    def call_op(self, name: str, args, kwargs):
        lowering = registry.lookup(name, self.g.opset)
        if lowering is None:
            raise self.error(f"no lowering for `{name}` at opset {self.g.opset}",
                             f"register one with lowering.register_lowering({name!r}, fn)", construct="call")
        args = [self._materialise(a) for a in args]
        kwargs = {k: self._materialise(v) for k, v in kwargs.items()}
        if name.startswith(("torch.", "Tensor.")) and not name.startswith("torch.nn."):
            # torch's argument parser takes NumPy's names too: `x.sum(axis=1, keepdims=True)`
            for numpy_name, torch_name in (("axis", "dim"), ("keepdims", "keepdim")):
                if numpy_name in kwargs and torch_name not in kwargs:
                    kwargs[torch_name] = kwargs.pop(numpy_name)
        try:
            result = lowering(self.g, *args, **kwargs)
        except LoweringError as exc:
            if exc.path is None:
                exc.path, exc.line = self.location
            raise
        except TypeError as exc:
            raise self.error(f"{name}: {exc}", construct="call",
                             hint="call it with the arguments torch accepts") from None
        result = self.track_results(name, args, kwargs, result)
        if type(result) is tuple and len(result) == 2 and name.rsplit(".", 1)[-1] in _VALUES_INDICES:
            return _ValuesIndices(*result)  # torch.return_types: .values / .indices
        return result

    def _materialise(self, v):
        """Turn real tensors into initializers/constants and loop scan lists into tensors
        before they reach an op lowering."""
        if isinstance(v, NDArray) or isinstance(v, (list, tuple)) and any(isinstance(x, NDArray) for x in v):
            raise self.error("a NumPy array passed to a torch operation is not supported by untrace",
                             "convert it with torch.from_numpy first", construct="call")
        if isinstance(v, torch.Tensor):
            return self.tensor_constant(v)
        if isinstance(v, np.generic) and not isinstance(v, np.void):
            return v.item()  # torch takes a NumPy scalar as the Python number it holds (weak dtype)
        if isinstance(v, Stacked):
            return v.value
        if has_varying_items(v):
            raise self.refuse_varying_list(v, "passing to an operation")
        if isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            return type(v)(self._materialise(x) for x in v)
        return v

    def tensor_method(self, value: Value, name: str, args, kwargs, receiver: str | None = None):
        if name in ("size",):
            shape = self.shape(value)
            if args or "dim" in kwargs:
                d = args[0] if args else kwargs["dim"]
                return shape[d]
            return shape
        if name in ("dim", "ndimension"):
            return self._rank(value)
        if name in ("numel", "nelement"):
            return self.python_number(self.g.numel(value))
        if name == "item":
            # A one-element tensor -> 0-d (Reshape fails at run time otherwise, as item() does).
            number = value if value.rank == 0 else self.g.op("Reshape", value, self.g.shape_tensor([]))
            return self.python_number(self.fresh_copy(number) if number is value else number)
        if name == "tolist":
            return self.tolist(value)
        if name == "numpy":
            if args or set(kwargs) - {"force"}:
                raise self.error("`.numpy()` with these arguments", construct="numpy",
                                 hint="call `.numpy()` without arguments")
            return numpy_arrays.from_tensor(self, value, copy=False)  # the same memory as the tensor
        if name == "unbind" and value.rank:
            d = (args[0] if args else kwargs.get("dim", 0)) % value.rank
            if isinstance(self.g.size(value, d), Value):
                rows = value if d == 0 else self.call_op("torch.movedim", [value, d, 0], {})
                return [Stacked(rows)]
        if value in self.python_numbers and (name in NUMBER_METHODS or not hasattr(torch.Tensor, name)):
            return number_method(self, value, name, args, kwargs)  # `(n / w).is_integer()`: a Python number's
        if name in ("is_floating_point",):
            return value.dtype.is_floating_point
        if name == "get_device":
            return -1
        if name in ("append",):
            raise self.error("append on a tensor", construct="call",
                             hint="build a Python list and torch.stack / torch.cat it")
        if f"Tensor.{name}" in _RANDOM_DRAWS and kwargs.get("generator") is not None:
            return self.generators.draw(self, getattr(torch.Tensor, name), f"Tensor.{name}", [value, *args], kwargs)
        result = self.call_op(f"Tensor.{name}", [value, *args], kwargs)
        if name.endswith("_") and not name.startswith("_") and isinstance(result, Value):
            self.update_aliases(value, result, receiver)  # x.add_(1): every name for x sees the update
        return result

    def call_torch(self, name: str, func, args, kwargs, updated: str | None = None):
        """A torch function through the op table; `torch.relu_(x)`, `F.relu(x, inplace=True)`
        update their first argument in place (`updated`: its source, for messages)."""
        if name in _FACTORIES_OF_DATA and kwargs.get("dtype") is None:
            # A Python float the graph holds is a double; torch.tensor(n / 2) is of the default dtype.
            args = [self._python_floats_as_default(a) for a in args]
            kwargs = {k: self._python_floats_as_default(v) if k == "fill_value" else v for k, v in kwargs.items()}
        result = self.call_op(name, args, kwargs)
        if args and isinstance(args[0], Value) and isinstance(result, Value) and (
                is_in_place(name) or _inplace_flag(func, args, kwargs)):
            self.update_aliases(args[0], result, updated)
        return result

    def _python_floats_as_default(self, v):
        if isinstance(v, Value) and v in self.python_numbers and v.dtype.is_floating_point:
            return self.g.cast(v, torch.get_default_dtype())
        if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
            return type(v)(self._python_floats_as_default(x) for x in v) if type(v) in (list, tuple) else v
        return v

    def tolist(self, value: Value):
        """`.tolist()` of a tensor with a static shape: nested lists of 0-d graph values; of a
        1-d tensor with a dynamic length, a list whose items the graph decides (`TensorItems`)."""
        if value.rank == 0:
            return value
        if value.rank == 1 and isinstance(self.g.size(value, 0), Value):
            return [TensorItems(value)]
        if value.static_shape is None:
            raise self.error("`.tolist()` of a tensor whose shape is not known at export time (its number of items "
                             "is dynamic, e.g. `torch.split(h, lengths.tolist())` over a dynamic batch)",
                             "keep the value as a tensor; for per-segment results use a segment reduction: "
                             "`seg = torch.repeat_interleave(torch.arange(len(lengths)), lengths)`, then "
                             "`torch.zeros(n, d).index_add(0, seg, h) / lengths[:, None]` or `scatter_reduce`",
                             construct="tolist")
        return [self.tolist(row) for row in self.call_op("Tensor.unbind", [value], {})]

    def tensor_constant(self, t: torch.Tensor, owner=None, attr: str | None = None) -> Value:
        name = self.tensor_names.get(id(t))
        if name is None and owner is not None and attr is not None:
            prefix = self.module_paths.get(id(owner))
            name = f"{prefix}.{attr}" if prefix else attr
            self.tensor_names[id(t)] = name
        if name is None:
            return self.g.const(t.detach())
        value = self.g.initializer(name, t.detach())
        self._state_values.add(value)
        if t.requires_grad:
            self.values_needing_grad.add(value)  # a custom Function's ctx.needs_input_grad
        return value

    def call_module(self, module: torch.nn.Module, args, kwargs, cls: type | None = None, updated: str | None = None):
        """`module(*args)`; with `cls`, the forward of that class in its MRO (`super().forward`)."""
        cls = cls or type(module)
        if issubclass(cls, torch.nn.Sequential) and cls.forward is torch.nn.Sequential.forward:
            # Sequential or a subclass that keeps its forward: the children in order.
            value = args[0] if args else None
            for child in module:
                value = self.call(child, [value], {})
            return value
        name = registry.canonical_name(cls)
        lowering = registry.lookup(name, self.g.opset) if name else None
        if lowering is None and "forward" not in cls.__dict__:
            # A class made from an nn module without a forward of its own (a parametrized
            # Conv1d of weight_norm): that module's lowering, its weights read from `module`.
            defining = next((c for c in cls.__mro__ if "forward" in c.__dict__), None)
            if defining is not None and defining is not torch.nn.Module and not _is_user_function(defining.forward):
                return self.call_module(module, args, kwargs, cls=defining)
        path = self.module_paths.get(id(module), "")
        if lowering is not None:
            call = registry.ModuleCall(module, path, self.g, self.replaced_parameters())
            args = [self._materialise(a) for a in args]
            kwargs = {k: self._materialise(v) for k, v in kwargs.items()}
            try:
                result = lowering(self.g, call, *args, **kwargs)
            except LoweringError as exc:
                if exc.path is None:
                    exc.path, exc.line = self.location
                raise
            in_place = getattr(module, "inplace", False) is True
            result = self.track_results(name, args, kwargs, result, in_place)
            if in_place and args and isinstance(args[0], Value) and isinstance(result, Value):
                self.update_aliases(args[0], result, updated)  # nn.ReLU(inplace=True) and the like
            return result
        forward = cls.forward
        if forward is torch.nn.Module.forward:
            raise self.error(f"{cls.__name__} has no forward", construct="call",
                             hint="give the module a forward, or call the method you mean")
        decorated = context_decorated(forward)
        if decorated is not None:  # `@torch.autocast("cuda", enabled=False) def forward`
            managers, inner = decorated
            return self.call_in_contexts(managers, f"@{type(managers[0]).__name__}(...) of {cls.__name__}.forward",
                                         lambda: self.call_python_function(inner, [module, *args], kwargs))
        if not _is_user_function(forward) and not _is_library_python(forward):
            raise self.error(f"no lowering for module {name}{_what_forward_is(forward)}",
                             f"register one with lowering.register_lowering({cls.__name__}, fn)", construct="call")
        return self.call_python_function(forward, [module, *args], kwargs)

    def to_bool(self, v) -> Value:
        """A 0-d bool graph value for `bool(v)`."""
        v = self.as_graph(v)
        if v.rank not in (0, None):
            if v.static_shape is not None and math.prod(v.static_shape) == 1:
                v = self.g.op("Reshape", v, self.g.shape_tensor([]))
            else:
                raise self.error("the truth value of a tensor with more than one element", construct="bool",
                                 hint="reduce it first: `.any()` or `.all()` (eager raises here too)")
        if v.dtype != torch.bool:
            v = self.g.op("Cast", v, to=torch.bool)
        return v

    def to_bool_vector(self, v: Value) -> Value:
        return v if v.dtype == torch.bool else self.g.op("Cast", v, to=torch.bool)

    def as_graph(self, v) -> Value:
        if isinstance(v, Value):
            return v
        if isinstance(v, EarlierIterations) or has_varying_items(v):
            raise self.refuse_varying_list([v] if isinstance(v, EarlierIterations) else v, "using as a tensor")
        if isinstance(v, torch.Tensor):
            return self.tensor_constant(v)
        if isinstance(v, Stacked):
            return v.value
        if isinstance(v, ComplexPair):
            raise complex_values.refuse(self, "using as a real tensor")
        if isinstance(v, (bool, int, float)) or (isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, float)) for x in v)):
            return self.g.const(v)
        raise self.error(f"a {type(v).__name__} where the graph needs a tensor", construct="value",
                         hint="pass a tensor (torch.as_tensor(...)) or a Python number")
