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

import operator

import numpy as np
import torch

from lowering.graph import Value
from lowering.numpy_arrays import conversions, elementwise, reductions, shapes, sorting, statistics  # noqa: F401 - fill the table
from lowering.numpy_arrays import counting  # noqa: F401 - fill the table
from lowering.numpy_arrays.conversions import from_tensor
from lowering.numpy_arrays.shapes import transpose_impl
from lowering.numpy_arrays.table import FUNCTION_NAMES, FUNCTIONS, HINT, METHODS, PURE_ON_KNOWN, qualname
from lowering.numpy_arrays.values import (EAGER_RAISES, TO_TORCH, USE_TORCH, NDArray, NumpyMethod, compute_dtype,
                                          dummy_result, has_graph, operand, wrap)

__all__ = ["NDArray", "NumpyMethod", "is_numpy_callable", "call_function", "call_method", "attribute", "binop",
           "compare", "unary", "getitem", "to_tensor", "TO_TORCH", "from_tensor"]


def is_numpy_callable(func) -> bool:
    if isinstance(func, np.ufunc):
        return True
    if isinstance(func, type):
        return issubclass(func, (np.generic, np.ndarray, np.dtype))
    module = getattr(func, "__module__", None) or getattr(type(func), "__module__", "") or ""
    return isinstance(module, str) and module.split(".")[0] == "numpy"


def call_function(interp, func, args: list, kwargs: dict):
    """A call of a NumPy function (`np.mean(a, axis=0)`, `np.float32(2)`)."""
    name = qualname(func)
    if not has_graph(args, kwargs):
        if func in PURE_ON_KNOWN or isinstance(func, np.ufunc) or (isinstance(func, type) and issubclass(
                func, (np.generic, np.dtype))):
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - eager raises the same
                raise interp.error(f"{name}(...) failed at export time: {exc}", construct=name,
                                   hint=EAGER_RAISES) from None
        raise interp.error(f"`{name}` is not supported by untrace", HINT, construct=name)
    try:
        entry = FUNCTIONS.get(func)
    except TypeError:  # an unhashable callable is no NumPy function
        entry = None
    if entry is None:
        raise interp.error(f"NumPy function `{name}` on tensor data is not supported by untrace "
                           f"(supported: {', '.join(sorted(FUNCTION_NAMES))})", HINT, construct=name)
    return entry(interp, name, lambda *a, **k: func(*a, **k), list(args), dict(kwargs))


def call_method(interp, method: NumpyMethod, args: list, kwargs: dict):
    """`arr.mean(axis=0)`, `arr.astype(np.float32)` ..."""
    name = f"ndarray.{method.name}"
    entry = METHODS.get(method.name)
    if entry is None:
        raise interp.error(f"NumPy method `{name}` on tensor data is not supported by untrace "
                           f"(supported: {', '.join(sorted(METHODS))})", HINT, construct=name)
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
        return transpose_impl(interp, array, None)
    if attr in METHODS:
        return NumpyMethod(array, attr)
    raise interp.error(f"NumPy method or attribute `ndarray.{attr}` on tensor data is not supported by untrace "
                       f"(supported: shape, ndim, size, dtype, T, {', '.join(sorted(METHODS))})", HINT,
                       construct=f"ndarray.{attr}")


def to_tensor(interp, name: str, func, args: list, kwargs: dict):
    """`torch.from_numpy(a)`, `torch.as_tensor(a, dtype=...)`, `torch.tensor(a)`, `torch.asarray(a)`."""
    source = args[0]
    if not isinstance(source, NDArray):  # a real ndarray known at export time
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - eager raises the same
            raise interp.error(f"{name}(...) failed at export time: {exc}", construct=name,
                               hint=EAGER_RAISES) from None
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
        raise interp.error(f"the `{op}` operator on NumPy arrays is not supported by untrace", HINT,
                           construct="numpy")
    py_op, torch_op = entry
    like = dummy_result(interp, f"`{op}` on NumPy arrays", py_op, [a, b], {})
    dtype = compute_dtype(interp, like.dtype, f"`{op}`")
    result = interp.call_op(torch_op, [operand(interp, a, dtype), operand(interp, b, dtype)], {})
    return wrap(interp, result, like)


def compare(interp, op: str, a, b):
    py_op = _COMPARE[op]
    like = dummy_result(interp, f"`{op}` on NumPy arrays", py_op, [a, b], {})
    # Both sides in the dtype NumPy compares in (the promoted one).
    common = dummy_result(interp, f"`{op}` on NumPy arrays", np.add, [a, b], {})
    dtype = compute_dtype(interp, common.dtype, f"`{op}`")
    result = interp.call_op(f"operator.{op_name(op)}", [operand(interp, a, dtype), operand(interp, b, dtype)], {})
    return wrap(interp, result, like)


def op_name(op: str) -> str:
    return {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}[op]


def unary(interp, op: str, a: NDArray):
    if op == "not":
        return NotImplemented  # truth value: the interpreter's predicate path
    py_op, torch_op = {"-": (operator.neg, "operator.neg"), "+": (operator.pos, None),
                       "~": (operator.invert, "operator.invert")}[op]
    like = dummy_result(interp, f"unary `{op}` on a NumPy array", py_op, [a], {})
    x = operand(interp, a, compute_dtype(interp, like.dtype, f"`{op}`"))
    if torch_op is None:
        return wrap(interp, interp.fresh_copy(x), like)
    if op == "~" and x.dtype == torch.bool:
        return wrap(interp, interp.call_op("torch.logical_not", [x], {}), like)
    return wrap(interp, interp.call_op(torch_op, [x], {}), like)


def getitem(interp, array: NDArray, index):
    """`a[i]`, `a[:, 1:]`, `a[mask]`, `a[idx_array]`: NumPy's indexing is torch's for these
    forms; an integer for every axis gives a NumPy scalar."""
    parts = index if isinstance(index, tuple) else (index,)
    converted = []
    for part in parts:
        if isinstance(part, NDArray):
            if not (part.value.dtype == torch.bool or not part.value.dtype.is_floating_point):
                raise interp.error("indexing a NumPy array with a float array (eager raises)", construct="numpy",
                                   hint=EAGER_RAISES)
            converted.append(part.value)
        elif isinstance(part, Value) and part not in interp.python_numbers:
            raise interp.error("indexing a NumPy array with a torch tensor is not supported by untrace", HINT,
                               construct="numpy")
        elif isinstance(part, (np.ndarray, np.generic)):
            converted.append(interp.g.const(np.asarray(part)))
        elif isinstance(part, (int, slice, type(None), type(Ellipsis), list, Value)) and not isinstance(part, bool):
            converted.append(part)
        else:
            raise interp.error(f"indexing a NumPy array with {type(part).__name__} is not supported by untrace",
                               construct="numpy", hint=USE_TORCH)
    all_ints = all(isinstance(p, int) or (isinstance(p, Value) and p in interp.python_numbers) for p in parts)
    scalar = all_ints and len(parts) == array.value.rank
    key = tuple(converted) if isinstance(index, tuple) else converted[0]
    return NDArray(interp.call_op("operator.getitem", [array.value, key], {}), scalar=scalar)


_BINARY = {
    "+": (operator.add, "operator.add"), "-": (operator.sub, "operator.sub"), "*": (operator.mul, "operator.mul"),
    "/": (operator.truediv, "operator.truediv"), "//": (operator.floordiv, "operator.floordiv"),
    "%": (operator.mod, "operator.mod"), "**": (operator.pow, "operator.pow"), "&": (operator.and_, "operator.and_"),
    "|": (operator.or_, "operator.or_"), "^": (operator.xor, "operator.xor"),
}
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
            ">=": operator.ge}
