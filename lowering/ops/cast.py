"""dtype conversions, ``torch.tensor`` of Python constants, and identity-like methods
(``clone``, ``detach``, ``contiguous``, ``cpu``).

Casts follow ONNX ``Cast``, which agrees with torch for every conversion torch defines:
floats to integers truncate toward zero, anything nonzero (NaN included) becomes True.
Devices, ``memory_format``, ``non_blocking`` and ``copy`` have no meaning in a graph and
are ignored.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, onnx_dtype
from lowering.ops._common import require_value
from lowering.ops.registry import register

# Tensor.type() names.
_TYPE_NAMES = {
    "torch.FloatTensor": torch.float32,
    "torch.DoubleTensor": torch.float64,
    "torch.HalfTensor": torch.float16,
    "torch.BFloat16Tensor": torch.bfloat16,
    "torch.LongTensor": torch.int64,
    "torch.IntTensor": torch.int32,
    "torch.ShortTensor": torch.int16,
    "torch.CharTensor": torch.int8,
    "torch.ByteTensor": torch.uint8,
    "torch.BoolTensor": torch.bool,
}


def _cast(g: GraphBuilder, x: Any, dtype: torch.dtype, name: str) -> Value:
    x = require_value(g, x, name)
    onnx_dtype(dtype)
    if x.dtype.is_complex or dtype.is_complex:
        raise g.error(f"{name}: complex dtypes are not supported")
    return g.cast(x, dtype)


@register("Tensor.to")
def to(g, self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """Tensor.to(Tensor self, [Device? device], ScalarType? dtype=None, bool non_blocking=False,
    bool copy=False, *, MemoryFormat? memory_format=None) -> Tensor; Tensor.to(Tensor other, ...)"""
    for a in args:
        if isinstance(a, torch.dtype):
            dtype = a
        elif isinstance(a, Value):
            dtype = a.dtype
        elif a is None or isinstance(a, (str, torch.device, bool, int)):
            continue  # device, non_blocking, copy
        else:
            raise g.error(f"Tensor.to: unsupported argument {a!r}")
    x = require_value(g, self, "to")
    return x if dtype is None else _cast(g, x, dtype, "to")


def _method(dtype: torch.dtype, method: str):
    def convert(g, self, memory_format=None):
        return _cast(g, self, dtype, method)

    convert.__name__ = method
    convert.__qualname__ = method
    convert.__doc__ = f"Tensor.{method}(Tensor self, *, MemoryFormat memory_format=preserve_format) -> Tensor  ({dtype})"
    convert.__module__ = __name__
    return convert


for _method_name, _dtype in (
    ("float", torch.float32),
    ("double", torch.float64),
    ("half", torch.float16),
    ("bfloat16", torch.bfloat16),
    ("long", torch.int64),
    ("int", torch.int32),
    ("short", torch.int16),
    ("char", torch.int8),
    ("byte", torch.uint8),
    ("bool", torch.bool),
):
    register(f"Tensor.{_method_name}")(_method(_dtype, _method_name))
del _method_name, _dtype


@register("Tensor.type_as")
def type_as(g, self, other):
    """Tensor.type_as(Tensor self, Tensor other) -> Tensor"""
    other = require_value(g, other, "type_as", "other")
    return _cast(g, self, other.dtype, "type_as")


@register("Tensor.type")
def type(g, self, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type(Tensor self, dtype=None, non_blocking=False) -> Tensor | str"""
    x = require_value(g, self, "type")
    if dtype is None:
        for name, dt in _TYPE_NAMES.items():
            if dt == x.dtype:
                return name
        raise g.error(f"Tensor.type(): no type name for {x.dtype}")
    if isinstance(dtype, str):
        if dtype not in _TYPE_NAMES:
            raise g.error(f"Tensor.type: unsupported type name {dtype!r}")
        dtype = _TYPE_NAMES[dtype]
    return _cast(g, x, dtype, "type")


# ---------------------------------------------------------------------------- torch.tensor


def _flatten_data(data: Any) -> tuple[list[Any], tuple[int, ...]]:
    """(flat elements, nested shape) of a nested list/tuple."""
    if isinstance(data, (list, tuple)):
        if not data:
            return [], (0,)
        parts = [_flatten_data(d) for d in data]
        inner = parts[0][1]
        if any(p[1] != inner for p in parts):
            raise ValueError("ragged nested sequence")
        return [e for p in parts for e in p[0]], (len(data), *inner)
    return [data], ()


@register("torch.tensor", "torch.as_tensor", "torch.asarray")
def tensor(g, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False, copy=None):
    """tensor(data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
    (Python constants; lists may hold 0-d graph values such as x.shape[0])"""
    if isinstance(data, Value):
        return g.cast(data, dtype) if dtype is not None else data
    try:
        flat, shape = _flatten_data(data)
    except ValueError:
        raise g.error("torch.tensor: ragged nested sequence") from None
    if not any(isinstance(e, Value) for e in flat):
        try:
            return g.const(torch.tensor(data, dtype=dtype))
        except (TypeError, ValueError, RuntimeError) as e:
            raise g.error(f"torch.tensor: cannot make a constant of {data!r}: {e}") from None
    for e in flat:
        if isinstance(e, Value) and e.rank != 0:
            raise g.error("torch.tensor: only 0-d graph values can be list elements", hint="use torch.stack")
        if not isinstance(e, (Value, bool, int, float)):
            raise g.error(f"torch.tensor: unsupported element {e!r}")
    if dtype is None:
        # torch infers from the elements as Python scalars (a 0-d tensor acts like .item()).
        kinds = {("bool" if (isinstance(e, bool) or (isinstance(e, Value) and e.dtype == torch.bool)) else
                  "float" if (isinstance(e, float) or (isinstance(e, Value) and e.dtype.is_floating_point)) else "int")
                 for e in flat}
        dtype = torch.get_default_dtype() if "float" in kinds else torch.int64 if "int" in kinds else torch.bool
    pieces = [g.unsqueeze(g.cast(e, dtype), [0]) if isinstance(e, Value) else g.const([e], dtype) for e in flat]
    flat_value = pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis=0)
    return g.op("Reshape", flat_value, g.const(list(shape), torch.int64))


def _legacy_constructor(g, dtype: torch.dtype, args, kwargs):
    """torch.FloatTensor(data), torch.LongTensor(data), ...: the legacy typed constructors of
    static Python data, a constant of that type (built by the constructor itself, as eager
    does). Given sizes they make an uninitialised tensor, given a tensor they alias it: refused."""
    data = args[0] if len(args) == 1 and not kwargs else None
    if not (isinstance(data, (list, tuple)) and data):
        raise g.error("a legacy typed constructor (torch.FloatTensor, ...) other than of a non-empty list of "
                      "Python numbers", hint="use torch.tensor(data, dtype=...), torch.empty or torch.zeros")
    try:
        flat, _ = _flatten_data(data)
    except ValueError:
        raise g.error("a legacy typed constructor of a ragged nested sequence") from None
    if not all(isinstance(e, (bool, int, float)) for e in flat):
        raise g.error("a legacy typed constructor (torch.FloatTensor, ...) of data other than Python numbers",
                      hint="use torch.tensor(data, dtype=...) or torch.stack")
    return g.const(torch.tensor(data, dtype=dtype))


def _legacy_lowering(dtype: torch.dtype):
    def lower(g, *args, **kwargs):
        return _legacy_constructor(g, dtype, args, kwargs)

    lower.__doc__ = f"(data: Sequence[number]) -> Tensor: a constant of dtype {dtype}, as the legacy typed constructor"
    return lower


for _name, _dtype in _TYPE_NAMES.items():
    register(_name)(_legacy_lowering(_dtype))


# ---------------------------------------------------------------------------- identity-like


@register("torch.clone", "Tensor.clone")
def clone(g, input, *, memory_format=None):
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    return require_value(g, input, "clone")


@register("torch.detach", "Tensor.detach", "Tensor.detach_")
def detach(g, input):
    """detach(Tensor(a) self) -> Tensor(a)"""
    return require_value(g, input, "detach")


@register("Tensor.contiguous")
def contiguous(g, self, memory_format=None):
    """Tensor.contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)"""
    return require_value(g, self, "contiguous")


@register("Tensor.cpu", "Tensor.cuda", "Tensor.requires_grad_")
def cpu(g, self, *args, **kwargs):
    """Tensor.cpu(Tensor self) -> Tensor  (devices do not exist in the graph)"""
    return require_value(g, self, "cpu")


@register("Tensor.copy_")
def copy_(g, self, src, non_blocking=False):
    """Tensor.copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)

    The value `self` holds afterwards: `src` cast to self's dtype and broadcast to its
    shape (the interpreter rebinds `self`'s names to it)."""
    target = require_value(g, self, "copy_", "self")
    if not isinstance(src, Value):
        raise g.error("copy_: src must be a tensor (torch raises)")
    return g.op("Expand", g.cast(src, target.dtype), g.shape_of(target))
