"""NumPy on tensor data, lowered into the graph.

`np.asarray(h.detach())`, `h.numpy()` take a tensor's values into NumPy; a trace records
the result as constants. Here such a value stays a graph value, tagged as a NumPy array
(:class:`NDArray`), so that NumPy's semantics apply to what is done with it:

- **dtypes are NumPy's own.** Every operation is first run by real NumPy on a *dummy* of
  each operand: an array of ones with the operand's dtype and rank (all dims 1), a NumPy
  scalar for a NumPy scalar, Python numbers as they are. The dummy result gives the
  result's dtype (NumPy 2 / NEP 50: a Python float does not upcast float32, the mean of
  an int array is float64, `std` is float64 for ints), its rank, and whether it is an
  array or a NumPy scalar. Nothing is guessed; if NumPy raises on the dummy, eager raises
  too and the call is refused.
- **values come from the torch op table**: operands are cast to the result dtype (float16
  is computed in float32, as NumPy's loops do) and the matching torch lowering runs with
  NumPy's defaults spelled out (`std`/`var` are population, `ddof=0`; `argsort`'s axis is
  -1; `argmax` without an axis is over the flattened array).
- **conversions**: `torch.from_numpy`, `torch.as_tensor`, `torch.asarray` and
  `torch.tensor` of an NDArray return to a tensor, keeping NumPy's dtype.

`argsort`/`sort` lower to ONNX TopK, which orders equal values by index (a stable sort).
NumPy's default `kind="quicksort"` does not promise an order among equal values, and
neither does `torch.argsort(stable=False)`, which the op table lowers the same way (the
tie order is the one documented OpInfo difference of sort/argsort); with distinct values
and with `kind="stable"`/`"mergesort"` the result is exact.

What this module does not know is refused with a `LoweringError` naming the call: any
NumPy function or array method missing from the tables below, `out=`/`where=`/`order=`
arguments, in-place updates of an array (it may share memory with a tensor), a torch
tensor mixed into NumPy arithmetic (eager dispatches that to torch, with torch's rules),
NumPy on a tensor that was not first converted with `np.asarray`/`.numpy()`.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import warnings
from typing import Any, Callable

import numpy as np
import torch

from lowering.errors import GraphConstructionError
from lowering.graph import Value

__all__ = ["NDArray", "NumpyMethod", "is_numpy_callable", "call_function", "call_method", "attribute", "binop",
           "compare", "unary", "getitem", "to_tensor", "TO_TORCH", "from_tensor"]

# torch functions that turn an NDArray back into a tensor.
TO_TORCH = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.asarray", "torch.tensor"})

_EAGER_RAISES = 'eager PyTorch raises here too for these inputs: fix the call'
_USE_TORCH = 'do this step with torch on the tensor (untrace lowers torch ops), or with NumPy outside forward'


@dataclasses.dataclass(frozen=True)
class NDArray:
    """A graph value that eager code holds as a NumPy array (or, `scalar`, a NumPy scalar)."""

    value: Value
    scalar: bool = False

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_NUMPY_OF_TORCH[self.value.dtype])

    def __bool__(self) -> bool:
        raise TypeError("an NDArray has no truth value at export time (the interpreter emits an If)")


@dataclasses.dataclass(frozen=True)
class NumpyMethod:
    array: NDArray
    name: str


_NUMPY_OF_TORCH = {
    torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64,
    torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
    torch.uint8: np.uint8, torch.bool: np.bool_,
}
_TORCH_OF_NUMPY = {np.dtype(v): k for k, v in _NUMPY_OF_TORCH.items()}


def _torch_dtype(interp, dtype: np.dtype, what: str) -> torch.dtype:
    try:
        return _TORCH_OF_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise interp.error(f"{what} gives a NumPy {dtype} array, which untrace does not lower",
                           "convert to float32/float64/int64/bool first", construct="numpy") from None


def _compute_dtype(interp, dtype: np.dtype, what: str) -> torch.dtype:
    """The dtype the graph computes in: NumPy's result dtype, float16 widened to float32
    (NumPy's float16 loops compute in float32 and round once)."""
    t = _torch_dtype(interp, dtype, what)
    return torch.float32 if t == torch.float16 else t


# ============================================================================ entry points


def from_tensor(interp, value: Value, copy: bool) -> NDArray:
    """`np.asarray(t)` / `t.numpy()` (the same memory: the same graph value) or `np.array(t)` (a copy)."""
    if value.dtype not in _NUMPY_OF_TORCH:
        raise interp.error(f"NumPy has no {value.dtype} (eager raises)", construct="numpy", hint=_EAGER_RAISES)
    if value.rank is None:
        raise interp.error("NumPy on a tensor of unknown rank", construct="numpy",
                           hint="reshape it to a known rank first")
    return NDArray(interp.fresh_copy(value) if copy else value)


def is_numpy_callable(func) -> bool:
    if isinstance(func, np.ufunc):
        return True
    if isinstance(func, type):
        return issubclass(func, (np.generic, np.ndarray, np.dtype))
    module = getattr(func, "__module__", None) or getattr(type(func), "__module__", "") or ""
    return isinstance(module, str) and module.split(".")[0] == "numpy"


def call_function(interp, func, args: list, kwargs: dict):
    """A call of a NumPy function (`np.mean(a, axis=0)`, `np.float32(2)`)."""
    name = _qualname(func)
    if not _has_graph(args, kwargs):
        if func in _PURE_ON_KNOWN or isinstance(func, np.ufunc) or (isinstance(func, type) and issubclass(
                func, (np.generic, np.dtype))):
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - eager raises the same
                raise interp.error(f"{name}(...) failed at export time: {exc}", construct=name,
                                   hint=_EAGER_RAISES) from None
        raise interp.error(f"`{name}` is not supported by untrace", _HINT, construct=name)
    try:
        entry = _FUNCTIONS.get(func)
    except TypeError:  # an unhashable callable is no NumPy function
        entry = None
    if entry is None:
        raise interp.error(f"NumPy function `{name}` on tensor data is not supported by untrace "
                           f"(supported: {', '.join(sorted(_FUNCTION_NAMES))})", _HINT, construct=name)
    return entry(interp, name, lambda *a, **k: func(*a, **k), list(args), dict(kwargs))


def call_method(interp, method: NumpyMethod, args: list, kwargs: dict):
    """`arr.mean(axis=0)`, `arr.astype(np.float32)` ..."""
    name = f"ndarray.{method.name}"
    entry = _METHODS.get(method.name)
    if entry is None:
        raise interp.error(f"NumPy method `{name}` on tensor data is not supported by untrace "
                           f"(supported: {', '.join(sorted(_METHODS))})", _HINT, construct=name)
    return entry(interp, name, lambda a, *rest, **k: getattr(a, method.name)(*rest, **k),
                 [method.array, *args], dict(kwargs))


def attribute(interp, array: NDArray, attr: str):
    v = array.value
    if attr == "shape":
        return interp.shape(v)
    if attr == "ndim":
        return v.rank
    if attr == "size":
        return interp.python_number(interp.g.numel(v))
    if attr == "dtype":
        return array.dtype
    if attr == "T":
        return _transpose_impl(interp, array, None)
    if attr in _METHODS:
        return NumpyMethod(array, attr)
    raise interp.error(f"NumPy method or attribute `ndarray.{attr}` on tensor data is not supported by untrace "
                       f"(supported: shape, ndim, size, dtype, T, {', '.join(sorted(_METHODS))})", _HINT,
                       construct=f"ndarray.{attr}")


def to_tensor(interp, name: str, func, args: list, kwargs: dict):
    """`torch.from_numpy(a)`, `torch.as_tensor(a, dtype=...)`, `torch.tensor(a)`, `torch.asarray(a)`."""
    source = args[0]
    if not isinstance(source, NDArray):  # a real ndarray known at export time
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - eager raises the same
            raise interp.error(f"{name}(...) failed at export time: {exc}", construct=name,
                               hint=_EAGER_RAISES) from None
    if name == "torch.from_numpy" and (source.scalar or len(args) != 1 or kwargs):
        raise interp.error("torch.from_numpy of a NumPy scalar (eager raises: it takes an ndarray)",
                           "use torch.tensor(...)", construct=name)
    allowed = {"dtype", "device", "requires_grad", "pin_memory", "copy"}
    if len(args) != 1 or set(kwargs) - allowed:
        raise interp.error(f"{name} with these arguments is not supported on a NumPy array", construct=name,
                           hint="do this step with torch on the tensor, or with NumPy outside forward")
    dtype = kwargs.get("dtype")
    value = source.value
    if dtype is not None and dtype != value.dtype:
        return interp.g.cast(value, dtype)  # a new tensor
    if name == "torch.tensor" or kwargs.get("copy") is True:
        return interp.fresh_copy(value)  # torch.tensor always copies
    return value  # from_numpy / as_tensor / asarray share the array's memory


def binop(interp, op: str, a, b):
    """`a + b` etc. with at least one NDArray operand."""
    entry = _BINARY.get(op)
    if entry is None:
        raise interp.error(f"the `{op}` operator on NumPy arrays is not supported by untrace", _HINT,
                           construct="numpy")
    py_op, torch_op = entry
    like = _dummy_result(interp, f"`{op}` on NumPy arrays", py_op, [a, b], {})
    dtype = _compute_dtype(interp, like.dtype, f"`{op}`")
    result = interp.call_op(torch_op, [_operand(interp, a, dtype), _operand(interp, b, dtype)], {})
    return _wrap(interp, result, like)


def compare(interp, op: str, a, b):
    py_op = _COMPARE[op]
    like = _dummy_result(interp, f"`{op}` on NumPy arrays", py_op, [a, b], {})
    # Both sides in the dtype NumPy compares in (the promoted one).
    common = _dummy_result(interp, f"`{op}` on NumPy arrays", np.add, [a, b], {})
    dtype = _compute_dtype(interp, common.dtype, f"`{op}`")
    result = interp.call_op(f"operator.{op_name(op)}", [_operand(interp, a, dtype), _operand(interp, b, dtype)], {})
    return _wrap(interp, result, like)


def op_name(op: str) -> str:
    return {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}[op]


def unary(interp, op: str, a: NDArray):
    if op == "not":
        return NotImplemented  # truth value: the interpreter's predicate path
    py_op, torch_op = {"-": (operator.neg, "operator.neg"), "+": (operator.pos, None),
                       "~": (operator.invert, "operator.invert")}[op]
    like = _dummy_result(interp, f"unary `{op}` on a NumPy array", py_op, [a], {})
    x = _operand(interp, a, _compute_dtype(interp, like.dtype, f"`{op}`"))
    if torch_op is None:
        return _wrap(interp, interp.fresh_copy(x), like)
    if op == "~" and x.dtype == torch.bool:
        return _wrap(interp, interp.call_op("torch.logical_not", [x], {}), like)
    return _wrap(interp, interp.call_op(torch_op, [x], {}), like)


def getitem(interp, array: NDArray, index):
    """`a[i]`, `a[:, 1:]`, `a[mask]`, `a[idx_array]`: NumPy's indexing is torch's for these
    forms; an integer for every axis gives a NumPy scalar."""
    parts = index if isinstance(index, tuple) else (index,)
    converted = []
    for part in parts:
        if isinstance(part, NDArray):
            if not (part.value.dtype == torch.bool or not part.value.dtype.is_floating_point):
                raise interp.error("indexing a NumPy array with a float array (eager raises)", construct="numpy",
                                   hint=_EAGER_RAISES)
            converted.append(part.value)
        elif isinstance(part, Value) and part not in interp.python_numbers:
            raise interp.error("indexing a NumPy array with a torch tensor is not supported by untrace", _HINT,
                               construct="numpy")
        elif isinstance(part, (np.ndarray, np.generic)):
            converted.append(interp.g.const(np.asarray(part)))
        elif isinstance(part, (int, slice, type(None), type(Ellipsis), list, Value)) and not isinstance(part, bool):
            converted.append(part)
        else:
            raise interp.error(f"indexing a NumPy array with {type(part).__name__} is not supported by untrace",
                               construct="numpy", hint=_USE_TORCH)
    all_ints = all(isinstance(p, int) or (isinstance(p, Value) and p in interp.python_numbers) for p in parts)
    scalar = all_ints and len(parts) == array.value.rank
    key = tuple(converted) if isinstance(index, tuple) else converted[0]
    return NDArray(interp.call_op("operator.getitem", [array.value, key], {}), scalar=scalar)


# ============================================================================ the table


def _qualname(func) -> str:
    name = getattr(func, "__name__", None) or type(func).__name__
    module = getattr(func, "__module__", None)
    if isinstance(module, str) and module.startswith("numpy.linalg"):
        return f"numpy.linalg.{name}"
    return f"numpy.{name}"



_FUNCTIONS: dict[Any, Callable] = {}
_FUNCTION_NAMES: set[str] = set()
_METHODS: dict[str, Callable] = {}
_PURE_ON_KNOWN: set = set()
_HINT = "compute it with torch on the tensor (torch.std(..., correction=0) for np.std), or keep NumPy outside forward"


def _lowers(*functions, methods: tuple[str, ...] = (), converts: bool = False, layout: bool = False):
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
            like = None if layout else _dummy_result(interp, name, run_numpy, args, kwargs, converts)
            return impl(interp, like, *args, **kwargs)

        for f in functions:
            _FUNCTIONS[f] = entry
            _FUNCTION_NAMES.add(_qualname(f))
            _PURE_ON_KNOWN.add(f)
        for m in methods:
            _METHODS[m] = entry
        return impl

    return deco


def _refuse_given(interp, name: str, **given) -> None:
    for key, value in given.items():
        if value is not None and value is not np._NoValue:
            raise interp.error(f"{name} with `{key}=` is not supported by untrace", _HINT, construct=name)


# ---------------------------------------------------------------- conversions


@_lowers(np.asarray, converts=True)
def _asarray(interp, like, a, dtype=None, order=None, *, device=None, copy=None):
    _refuse_given(interp, "numpy.asarray", device=device)
    return _array_of(interp, like, a, dtype, order, copy=copy is True)


@_lowers(np.array, converts=True)
def _array(interp, like, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):
    if ndmin:
        raise interp.error("numpy.array with ndmin is not supported by untrace", construct="numpy.array",
                           hint=_USE_TORCH)
    return _array_of(interp, like, object, dtype, order, copy=copy is not False)


def _array_of(interp, like, a, dtype, order, copy: bool):
    if order not in (None, "K", "A", "C"):
        raise interp.error(f"a NumPy array with order={order!r} is not supported by untrace", construct="numpy",
                           hint=_USE_TORCH)
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
    target = _torch_dtype(interp, like.dtype, "numpy.asarray")
    if target != value.dtype:
        return NDArray(interp.g.cast(value, target))
    return NDArray(interp.fresh_copy(value) if copy else value)


@_lowers(methods=("astype",))
def _astype(interp, like, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if order not in ("K", "A", "C") or casting != "unsafe":
        raise interp.error("ndarray.astype with order/casting is not supported by untrace", construct="ndarray.astype",
                           hint=_USE_TORCH)
    target = _torch_dtype(interp, like.dtype, "ndarray.astype")
    value = a.value
    if target != value.dtype:
        return NDArray(interp.g.cast(value, target), scalar=a.scalar)
    return NDArray(value if copy is False else interp.fresh_copy(value), scalar=a.scalar)


@_lowers(np.copy, methods=("copy",))
def _copy(interp, like, a, order="K", subok=False):
    return NDArray(interp.fresh_copy(_array_value(interp, a, "copy")), scalar=getattr(a, "scalar", False))


@_lowers(methods=("item",))
def _item(interp, like, a, *args):
    if args:
        raise interp.error("ndarray.item with an index is not supported by untrace", construct="ndarray.item",
                           hint=_USE_TORCH)
    v = a.value
    if v.static_shape is None or int(np.prod(v.static_shape)) != 1:
        raise interp.error("ndarray.item of an array whose size is not 1 at export time", construct="ndarray.item",
                           hint="index one element first")
    return interp.python_number(v if v.rank == 0 else interp.call_op("Tensor.reshape", [v, []], {}))


# ---------------------------------------------------------------- reductions


def _axes(interp, axis, rank: int, name: str) -> list[int] | None:
    if axis is None:
        return None
    items = axis if isinstance(axis, tuple) else (axis,)
    if not items or not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
        raise interp.error(f"{name} with axis={axis!r} is not supported by untrace (an int or a tuple of ints)",
                           construct=name, hint=_USE_TORCH)
    return [d % rank if rank else 0 for d in items]


def _reduce(interp, like, torch_name: str, a, axis, keepdims, name: str, **extra):
    x = _operand(interp, a, _compute_dtype(interp, like.dtype, name))
    rank = x.rank
    dims = _axes(interp, axis, rank, name)
    if rank == 0:
        dims = None
    kwargs = dict(extra)
    if dims is not None or keepdims:
        kwargs["dim"] = dims if dims is not None else list(range(rank))
        kwargs["keepdim"] = bool(keepdims)
    return _wrap(interp, interp.call_op(torch_name, [x], kwargs), like)


@_lowers(np.mean, methods=("mean",))
def _mean(interp, like, a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _refuse_given(interp, "mean", out=out, where=where)
    return _reduce(interp, like, "torch.mean", a, axis, keepdims, "mean")


@_lowers(np.sum, methods=("sum",))
def _sum(interp, like, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _refuse_given(interp, "sum", out=out, initial=initial, where=where)
    return _reduce(interp, like, "torch.sum", a, axis, keepdims, "sum")


def _spread(torch_name: str, name: str):
    def lower(interp, like, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
              correction=None):
        _refuse_given(interp, name, out=out, where=where, mean=mean)
        if correction is not None and correction is not np._NoValue:
            ddof = correction
        if not isinstance(ddof, (int, float)) or isinstance(ddof, bool):
            raise interp.error(f"{name} with a ddof computed at run time is not supported by untrace", construct=name,
                               hint=_USE_TORCH)
        return _reduce(interp, like, torch_name, a, axis, keepdims, name, correction=ddof)

    lower.__name__ = f"_{name}"
    return lower


_lowers(np.std, methods=("std",))(_spread("torch.std", "std"))
_lowers(np.var, methods=("var",))(_spread("torch.var", "var"))


def _extreme(torch_name: str, name: str):
    def lower(interp, like, a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _refuse_given(interp, name, out=out, initial=initial, where=where)
        if like.dtype == np.bool_:
            # ONNX has no ReduceMax/Min over bool: any / all.
            x = _operand(interp, a, torch.uint8)
            result = _reduce(interp, _like_dtype(like, np.uint8), torch_name, NDArray(x), axis, keepdims, name)
            return NDArray(interp.g.cast(result.value, torch.bool), scalar=result.scalar)
        return _reduce(interp, like, torch_name, a, axis, keepdims, name)

    lower.__name__ = f"_{name}"
    return lower


_lowers(np.max, np.amax, methods=("max",))(_extreme("torch.amax", "max"))
_lowers(np.min, np.amin, methods=("min",))(_extreme("torch.amin", "min"))


def _arg_extreme(torch_name: str, name: str):
    def lower(interp, like, a, axis=None, out=None, *, keepdims=False):
        _refuse_given(interp, name, out=out)
        x = _array_value(interp, a, name)
        if x.dtype == torch.bool:
            x = interp.g.cast(x, torch.uint8)
        if axis is None:
            # Over the flattened array; ties give the first index in NumPy, torch and ONNX alike.
            result = interp.call_op(torch_name, [x], {})
            if keepdims:
                result = interp.call_op("Tensor.reshape", [result, [1] * x.rank], {})
        else:
            (d,) = _axes(interp, axis, x.rank, name)
            result = interp.call_op(torch_name, [x], {"dim": d, "keepdim": bool(keepdims)})
        return _wrap(interp, result, like)

    lower.__name__ = f"_{name}"
    return lower


_lowers(np.argmax, methods=("argmax",))(_arg_extreme("torch.argmax", "argmax"))
_lowers(np.argmin, methods=("argmin",))(_arg_extreme("torch.argmin", "argmin"))


# ---------------------------------------------------------------- elementwise


def _ufunc(torch_name: str | None, name: str):
    def lower(interp, like, x, out=None, *, where=None, casting="same_kind", order="K", dtype=None, subok=True):
        _refuse_given(interp, name, out=out, where=where)
        v = _operand(interp, x, _compute_dtype(interp, like.dtype, name))
        if torch_name is None or (name == "absolute" and v.dtype == torch.bool):
            result = interp.fresh_copy(v)
        elif name == "square":
            result = interp.call_op("operator.mul", [v, v], {}) if v.dtype != torch.bool else interp.fresh_copy(v)
        else:
            result = interp.call_op(torch_name, [v], {})
        return _wrap(interp, result, like)

    lower.__name__ = f"_{name}"
    return lower


_lowers(np.absolute)(_ufunc("torch.abs", "absolute"))
_lowers(np.exp)(_ufunc("torch.exp", "exp"))
_lowers(np.log)(_ufunc("torch.log", "log"))
_lowers(np.sqrt)(_ufunc("torch.sqrt", "sqrt"))
_lowers(np.square)(_ufunc("square", "square"))


def _binary_ufunc(torch_name: str, name: str):
    def lower(interp, like, x1, x2, out=None, *, where=None, casting="same_kind", order="K", dtype=None, subok=True):
        _refuse_given(interp, name, out=out, where=where)
        dt = _compute_dtype(interp, like.dtype, name)
        return _wrap(interp, interp.call_op(torch_name, [_operand(interp, x1, dt), _operand(interp, x2, dt)], {}), like)

    lower.__name__ = f"_{name}"
    return lower


_lowers(np.maximum)(_binary_ufunc("torch.maximum", "maximum"))
_lowers(np.minimum)(_binary_ufunc("torch.minimum", "minimum"))


@_lowers(np.clip, methods=("clip",))
def _clip(interp, like, a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue,
          **ufunc_kwargs):
    _refuse_given(interp, "clip", out=out, **{k: v for k, v in ufunc_kwargs.items()})
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    dt = _compute_dtype(interp, like.dtype, "clip")
    x = _operand(interp, a, dt)
    if lo is None and hi is None:
        return _wrap(interp, interp.fresh_copy(x), like)
    bounds = {"min": None if lo is None else _operand(interp, lo, dt),
              "max": None if hi is None else _operand(interp, hi, dt)}
    return _wrap(interp, interp.call_op("torch.clamp", [x], bounds), like)


@_lowers(np.where)
def _where(interp, like, condition, x=None, y=None):
    if x is None or y is None:
        raise interp.error("numpy.where(condition) (the indices of nonzero elements) is not supported by untrace",
                           "use torch.nonzero on the tensor", construct="numpy.where")
    dt = _compute_dtype(interp, like.dtype, "where")
    cond = _operand(interp, condition, torch.bool)
    return _wrap(interp, interp.call_op("torch.where", [cond, _operand(interp, x, dt), _operand(interp, y, dt)], {}),
                 like)


# ---------------------------------------------------------------- joining and shapes


def _sequence(interp, arrays, name: str) -> list:
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise interp.error(f"{name} of a {type(arrays).__name__} is not supported by untrace", construct=name,
                           hint=_USE_TORCH)
    return list(arrays)


@_lowers(np.concatenate)
def _concatenate(interp, like, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _refuse_given(interp, "concatenate", out=out)
    dt = _compute_dtype(interp, like.dtype, "concatenate")
    parts = [_operand(interp, a, dt) for a in _sequence(interp, arrays, "concatenate")]
    if axis is None:
        parts = [interp.call_op("Tensor.reshape", [p, [-1]], {}) for p in parts]
        axis = 0
    return _wrap(interp, interp.call_op("torch.cat", [parts], {"dim": axis}), like)


@_lowers(np.stack)
def _stack(interp, like, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    _refuse_given(interp, "stack", out=out)
    dt = _compute_dtype(interp, like.dtype, "stack")
    parts = [_operand(interp, a, dt) for a in _sequence(interp, arrays, "stack")]
    return _wrap(interp, interp.call_op("torch.stack", [parts], {"dim": axis}), like)


def _shape_arg(interp, shape, name: str) -> list:
    items = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    for d in items:
        if not (isinstance(d, int) or (isinstance(d, Value) and d in interp.python_numbers)):
            raise interp.error(f"{name} with a shape of {type(d).__name__} is not supported by untrace",
                               construct=name, hint=_USE_TORCH)
    return items


@_lowers(np.reshape, layout=True)
def _reshape(interp, like, a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    return _reshape_impl(interp, like, a, shape, order, copy)


@_lowers(methods=("reshape",), layout=True)
def _reshape_method(interp, like, a, *shape, order="C", copy=None):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    return _reshape_impl(interp, like, a, shape, order, copy)


def _reshape_impl(interp, like, a, shape, order, copy):
    if order != "C" or copy is True:
        raise interp.error("reshape with order/copy is not supported by untrace", construct="numpy.reshape",
                           hint=_USE_TORCH)
    x = _array_value(interp, a, "reshape")
    return NDArray(interp.call_op("Tensor.reshape", [x, _shape_arg(interp, shape, "reshape")], {}))


@_lowers(methods=("flatten", "ravel"), layout=True)
def _flatten(interp, like, a, order="C"):
    if order != "C":
        raise interp.error("flatten/ravel with order is not supported by untrace", construct="ndarray.flatten",
                           hint=_USE_TORCH)
    return NDArray(interp.call_op("Tensor.reshape", [_array_value(interp, a, "flatten"), [-1]], {}))


@_lowers(np.transpose, layout=True)
def _transpose(interp, like, a, axes=None):
    return _transpose_impl(interp, a, axes)


@_lowers(methods=("transpose",), layout=True)
def _transpose_method(interp, like, a, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
        axes = axes[0]
    return _transpose_impl(interp, a, axes or None)


def _transpose_impl(interp, a, axes):
    x = _array_value(interp, a, "transpose")
    rank = x.rank
    order = list(reversed(range(rank))) if axes is None else [d % rank for d in axes]
    if sorted(order) != list(range(rank)):
        raise interp.error(f"transpose with axes={axes!r} (eager raises)", construct="numpy.transpose",
                           hint=_EAGER_RAISES)
    return NDArray(interp.call_op("torch.permute", [x, order], {}), scalar=getattr(a, "scalar", False))


# ---------------------------------------------------------------- sorting


def _sort_stable(interp, kind, stable, order, name: str) -> bool:
    if order is not None:
        raise interp.error(f"{name} with order= (structured arrays) is not supported by untrace", construct=name,
                           hint=_USE_TORCH)
    if kind not in (None, "quicksort", "stable", "mergesort", "heapsort"):
        raise interp.error(f"{name} with kind={kind!r} (eager raises)", construct=name, hint=_EAGER_RAISES)
    return stable is True or kind in ("stable", "mergesort")


@_lowers(np.argsort, methods=("argsort",))
def _argsort(interp, like, a, axis=-1, kind=None, order=None, *, stable=None):
    is_stable = _sort_stable(interp, kind, stable, order, "argsort")
    x = _array_value(interp, a, "argsort")
    if axis is None:
        x, axis = interp.call_op("Tensor.reshape", [x, [-1]], {}), 0
    result = interp.call_op("torch.argsort", [x], {"dim": axis, "stable": is_stable})
    return _wrap(interp, result, like)


@_lowers(np.sort)
def _sort(interp, like, a, axis=-1, kind=None, order=None, *, stable=None):
    is_stable = _sort_stable(interp, kind, stable, order, "sort")
    x = _array_value(interp, a, "sort")
    if axis is None:
        x, axis = interp.call_op("Tensor.reshape", [x, [-1]], {}), 0
    values = interp.call_op("torch.sort", [x], {"dim": axis, "stable": is_stable})[0]
    return _wrap(interp, interp.fresh_copy(values), like)


# ---------------------------------------------------------------- order statistics and norms


def _known_q(interp, q, name: str) -> np.ndarray:
    if _has_graph([q], {}):
        raise interp.error(f"{name} with q computed from tensor data is not supported by untrace",
                           "q must be a Python number or a list of them, known at export time", construct=name)
    qa = np.asarray(q)
    if qa.ndim > 1 or qa.dtype.kind not in "iuf":
        raise interp.error(f"{name} with q of shape {qa.shape} / dtype {qa.dtype} is not supported by untrace "
                           "(a number or a flat list of numbers)", construct=name, hint=_USE_TORCH)
    return qa


def _quantile_impl(interp, like, name: str, a, q, axis, out, overwrite_input, method, keepdims, weights,
                   percent: bool):
    """NumPy's default `method="linear"` quantile, as `numpy.lib._function_base_impl._quantile`
    computes it: sort along the axis, virtual index `(n - 1) * q` in float64, its floor and
    the next index (both the last one when the index is at or past `n - 1`), gamma =
    index - floor, and `_lerp`: `a + (b - a) * g`, or `b - (b - a) * (1 - g)` where
    g >= 0.5 (so inf and NaN propagate as NumPy's do). A slice holding a NaN gives NaN. An
    integer q to `quantile` takes the element without interpolation, as NumPy does."""
    _refuse_given(interp, name, out=out, weights=weights)
    if method != "linear":
        raise interp.error(f"{name} with method={method!r} is not supported by untrace (only the default "
                           "'linear')", construct=name, hint=_USE_TORCH)
    qa = _known_q(interp, q, name)
    qs = np.true_divide(qa, 100) if percent else qa  # what NumPy interpolates with
    x = _array_value(interp, a, name)
    rank = x.rank
    if axis is not None and isinstance(axis, tuple):
        if len(axis) != 1:
            raise interp.error(f"{name} over several axes is not supported by untrace (one axis or None)",
                               construct=name, hint=_USE_TORCH)
        axis = axis[0]
    dt = like.dtype if np.issubdtype(like.dtype, np.floating) else np.dtype(np.float64)
    compute = _compute_dtype(interp, dt, name)
    g = interp.g
    v = g.cast(x, compute)
    if axis is None:
        v, d = interp.call_op("Tensor.reshape", [v, [-1]], {}), 0
    else:
        (d,) = _axes(interp, axis, rank, name)
    srt = interp.call_op("torch.sort", [v], {"dim": d})[0]
    n = g.size(srt, d)
    n64 = g.const(n, torch.int64) if isinstance(n, int) else g.cast(n, torch.int64)
    last = g.op("Sub", n64, g.const(1, torch.int64))
    qv = g.const(np.asarray(qs, dtype=np.float64 if qs.dtype.kind == "f" else np.int64).reshape(-1))
    count = qv.static_shape[0]
    if qs.dtype.kind in "iu":  # NumPy's `supports_integers` path: take, no interpolation
        index = g.op("Mul", last, qv)
        result = interp.call_op("torch.index_select", [srt, d, index], {})
    else:
        virtual = g.op("Mul", g.cast(last, torch.float64), qv)
        above = g.op("GreaterOrEqual", virtual, g.cast(last, torch.float64))
        below = g.op("Less", virtual, g.const(0.0, torch.float64))
        floor = g.op("Floor", virtual)
        prev = g.op("Where", above, g.const(-1.0, torch.float64), g.op("Where", below, g.const(0.0, torch.float64),
                                                                            floor))
        nxt = g.op("Where", above, g.const(-1.0, torch.float64), g.op("Where", below, g.const(0.0, torch.float64),
                                                                           g.op("Add", floor,
                                                                                g.const(1.0, torch.float64))))
        gamma = g.op("Sub", virtual, prev)  # NumPy subtracts the index it adjusted (-1 past the end)

        def position(i):
            i = g.cast(i, torch.int64)
            return g.op("Where", g.op("Less", i, g.const(0, torch.int64)), g.op("Add", i, n64), i)

        lo = interp.call_op("torch.index_select", [srt, d, position(prev)], {})
        hi = interp.call_op("torch.index_select", [srt, d, position(nxt)], {})
        t = interp.call_op("Tensor.reshape", [g.cast(gamma, compute), [-1 if i == d else 1 for i in range(srt.rank)]],
                           {})
        diff = g.op("Sub", hi, lo)
        near_lo = g.op("Add", lo, g.op("Mul", diff, t))
        near_hi = g.op("Sub", hi, g.op("Mul", diff, g.op("Sub", g.const(1.0, compute), t)))
        half = g.op("GreaterOrEqual", t, g.const(0.5, compute))
        result = g.op("Where", half, near_hi, near_lo)
    if compute.is_floating_point and x.dtype.is_floating_point:
        has_nan = interp.call_op("torch.any", [interp.call_op("torch.isnan", [v], {})], {"dim": d, "keepdim": True})
        result = g.op("Where", has_nan, g.const(float("nan"), compute), result)
    if qa.ndim == 0:
        if axis is None:
            result = interp.call_op("Tensor.reshape", [result, [1] * rank if keepdims else []], {})
        elif not keepdims:
            result = g.squeeze(result, [d])
    else:
        if axis is None:
            result = interp.call_op("Tensor.reshape", [result, [count] + [1] * rank if keepdims else [count]], {})
        else:
            result = interp.call_op("torch.movedim", [result, d, 0], {})
            if keepdims:
                result = g.unsqueeze(result, [d + 1])
    return _wrap(interp, result, like)


@_lowers(np.percentile)
def _percentile(interp, like, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None):
    return _quantile_impl(interp, like, "numpy.percentile", a, q, axis, out, overwrite_input, method, keepdims,
                          weights, percent=True)


@_lowers(np.quantile)
def _quantile(interp, like, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
              weights=None):
    return _quantile_impl(interp, like, "numpy.quantile", a, q, axis, out, overwrite_input, method, keepdims,
                          weights, percent=False)


@_lowers(np.linalg.norm)
def _norm(interp, like, x, ord=None, axis=None, keepdims=False):
    """`numpy.linalg.norm` in its vector forms, as NumPy computes them: integer and bool
    arrays in float64; ord None/2 `sqrt(sum(x * x))`, 1 `sum(|x|)`, inf/-inf `max`/`min` of
    `|x|`, 0 the count of nonzeros, another number p `sum(|x| ** p) ** (1 / p)`. With
    `axis=None` and `ord=None` over the flattened array (the Frobenius norm of a matrix);
    over two axes only the Frobenius norm (`ord=None` or `"fro"`). Other matrix norms are
    refused."""
    name = "numpy.linalg.norm"
    v = _array_value(interp, x, name)
    rank = v.rank
    compute = _compute_dtype(interp, like.dtype, name)
    value = _operand(interp, x, compute)
    if axis is None:
        if ord is None:
            dims, square = None, True
        elif rank == 1:
            dims, square = [0], ord == 2
        else:
            raise interp.error(f"{name} with ord={ord!r} of a {rank}-d array (a matrix norm) is not supported by "
                               "untrace", "give the axis of a vector norm (axis=-1), or use torch.linalg.matrix_norm "
                               "on the tensor", construct=name)
    else:
        dims = _axes(interp, axis, rank, name)
        if len(dims) == 2:
            if ord not in (None, "fro"):
                raise interp.error(f"{name} with ord={ord!r} over two axes (a matrix norm) is not supported by untrace "
                                   "(only the Frobenius norm)", "use torch.linalg.matrix_norm on the tensor",
                                   construct=name)
            square = True
        elif len(dims) == 1:
            square = ord is None or ord == 2
        else:
            raise interp.error(f"{name} over {len(dims)} axes (eager raises)", construct=name, hint=_EAGER_RAISES)
    if not isinstance(ord, (int, float, type(None), str)) or isinstance(ord, bool):
        raise interp.error(f"{name} with ord={ord!r} is not supported by untrace", construct=name, hint=_USE_TORCH)

    def reduce(op, t):
        args = {} if dims is None and not keepdims else {"dim": list(range(rank)) if dims is None else dims,
                                                          "keepdim": bool(keepdims)}
        if rank == 0:
            args = {}
        return interp.call_op(op, [t], args)

    g = interp.g
    if square:
        result = interp.call_op("torch.sqrt", [reduce("torch.sum", g.op("Mul", value, value))], {})
    elif ord == float("inf"):
        result = reduce("torch.amax", interp.call_op("torch.abs", [value], {}))
    elif ord == float("-inf"):
        result = reduce("torch.amin", interp.call_op("torch.abs", [value], {}))
    elif ord == 0:
        result = reduce("torch.sum", g.cast(g.op("Not", g.op("Equal", value, g.const(0, compute))), compute))
    elif ord == 1:
        result = reduce("torch.sum", interp.call_op("torch.abs", [value], {}))
    elif isinstance(ord, (int, float)):
        powered = g.op("Pow", interp.call_op("torch.abs", [value], {}), g.const(float(ord), compute))
        result = g.op("Pow", reduce("torch.sum", powered), g.const(1.0 / ord, compute))
    else:
        raise interp.error(f"{name} with ord={ord!r} is not supported by untrace", construct=name, hint=_USE_TORCH)
    if rank == 0 and keepdims:
        result = interp.call_op("Tensor.reshape", [result, []], {})
    return _wrap(interp, result, like)


_BINARY = {
    "+": (operator.add, "operator.add"), "-": (operator.sub, "operator.sub"), "*": (operator.mul, "operator.mul"),
    "/": (operator.truediv, "operator.truediv"), "//": (operator.floordiv, "operator.floordiv"),
    "%": (operator.mod, "operator.mod"), "**": (operator.pow, "operator.pow"), "&": (operator.and_, "operator.and_"),
    "|": (operator.or_, "operator.or_"), "^": (operator.xor, "operator.xor"),
}
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
            ">=": operator.ge}


# ============================================================================ helpers




def _has_graph(args, kwargs) -> bool:
    def walk(v):
        if isinstance(v, (NDArray, Value)):
            return True
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        if isinstance(v, dict):
            return any(walk(x) for x in v.values())
        return False

    return walk(list(args)) or walk(dict(kwargs))


def _dummy(interp, v, what: str, converts: bool = False):
    """A stand-in NumPy argument with `v`'s dtype and rank (see the module docstring)."""
    if isinstance(v, NDArray):
        if v.value.rank is None:
            raise interp.error(f"{what} of an array of unknown rank", construct="numpy",
                               hint="reshape it to a known rank first")
        d = np.ones((1,) * v.value.rank, dtype=v.dtype)
        return d[()] if v.scalar else d
    if isinstance(v, Value):
        if v in interp.python_numbers and v.rank == 0:
            return 1.0 if v.dtype.is_floating_point else True if v.dtype == torch.bool else 1
        if converts and v.dtype in _NUMPY_OF_TORCH and v.rank is not None:
            return np.ones((1,) * v.rank, dtype=_NUMPY_OF_TORCH[v.dtype])
        raise interp.error(f"{what}: a torch tensor mixed with NumPy arrays (eager hands that to torch, with torch's "
                           "rules) is not supported by untrace",
                           "convert one side explicitly: torch.from_numpy(a) or np.asarray(t)", construct="numpy")
    if isinstance(v, (list, tuple)):
        return type(v)(_dummy(interp, x, what, converts) for x in v)
    if isinstance(v, dict):
        return {k: _dummy(interp, x, what, converts) for k, x in v.items()}
    if isinstance(v, (torch.Tensor, torch.dtype)):
        raise interp.error(f"{what} with a torch {type(v).__name__} argument is not supported by untrace",
                           construct="numpy", hint=_USE_TORCH)
    return v


def _dummy_result(interp, what: str, run_numpy, args, kwargs, converts: bool = False):
    dargs = [_dummy(interp, a, what, converts) for a in args]
    dkwargs = {k: _dummy(interp, v, what, converts) for k, v in kwargs.items()}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = run_numpy(*dargs, **dkwargs)
        except Exception as exc:  # noqa: BLE001 - eager raises on these arguments too
            raise interp.error(f"{what} fails in NumPy for these argument types: {exc}", _HINT,
                               construct="numpy") from None
    if not isinstance(result, (np.ndarray, np.generic)):
        raise interp.error(f"{what} returns a {type(result).__name__}, which untrace does not lower", _HINT,
                           construct="numpy")
    return result


def _like_dtype(like, dtype):
    return like.astype(dtype)


def _wrap(interp, value: Value, like) -> NDArray:
    """The graph result as NumPy holds it: the dummy's dtype, rank and array/scalar kind."""
    if isinstance(value, NDArray):
        return value
    if value.rank is not None and value.rank != like.ndim:
        raise GraphConstructionError(f"NumPy lowering gave rank {value.rank}, NumPy gives {like.ndim}")
    value = interp.g.cast(value, _torch_dtype(interp, like.dtype, "this NumPy operation"))
    return NDArray(value, scalar=isinstance(like, np.generic))


def _array_value(interp, a, name: str) -> Value:
    if isinstance(a, NDArray):
        return a.value
    raise interp.error(f"{name} of a {type(a).__name__} mixed with tensor data is not supported by untrace",
                       construct=name, hint=_USE_TORCH)


def _operand(interp, v, dtype: torch.dtype) -> Value:
    """An operand as a graph value of `dtype` (NumPy has already decided the dtype)."""
    if isinstance(v, NDArray):
        return interp.g.cast(v.value, dtype)
    if isinstance(v, Value):  # a Python number of eager code (a size, len())
        if dtype not in (torch.int64, torch.float32, torch.float64, torch.float16, torch.bool):
            raise interp.error(f"a run-time Python int mixed with a NumPy {dtype} array: NumPy checks its range, "
                               "which untrace cannot do at export time", construct="numpy",
                               hint="convert the Python int with np.int64(...) / a tensor first")
        return interp.g.cast(v, dtype)
    if isinstance(v, bool) or isinstance(v, (int, float)):
        if isinstance(v, int) and not isinstance(v, bool) and not dtype.is_floating_point and dtype != torch.bool:
            info = torch.iinfo(dtype)
            if not info.min <= v <= info.max:
                raise interp.error(f"the Python int {v} does not fit the NumPy {dtype} array it is used with",
                                   construct="numpy", hint=_EAGER_RAISES)
        return interp.g.const(v, dtype)
    if isinstance(v, (np.ndarray, np.generic, list, tuple)):
        arr = np.asarray(v)
        if arr.dtype == object:
            raise interp.error("a list mixing tensor data and Python values in NumPy is not supported by untrace",
                               construct="numpy", hint=_USE_TORCH)
        return interp.g.cast(interp.g.const(torch.from_numpy(np.array(arr))), dtype)  # 0-d stays 0-d
    raise interp.error(f"a {type(v).__name__} in NumPy arithmetic is not supported by untrace", construct="numpy",
                       hint=_USE_TORCH)
