"""Helpers shared by the op families (argument checking, dims, dtype classes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lowering.errors import LoweringError
from lowering.graph import GraphBuilder, Value, is_bool, is_float, is_int

__all__ = [
    "check_out",
    "normalize_dim",
    "normalize_dims",
    "is_tensor",
    "as_float",
    "require_value",
    "scalar_or_value",
    "float_dtype_for",
    "INT_TYPES",
    "refuse",
    "fill",
]

INT_TYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def is_tensor(x: Any) -> bool:
    return isinstance(x, Value)


def refuse(g: GraphBuilder, message: str, hint: str | None = None) -> LoweringError:
    return g.error(message, hint=hint)


def check_out(g: GraphBuilder, out: Any, op: str) -> None:
    if out is not None:
        raise g.error(f"{op}(out=...) is not supported", hint="assign the result instead of passing out=")


def normalize_dim(g: GraphBuilder, dim: Any, rank: int | None, op: str = "") -> int:
    """``dim`` as a non-negative int for a tensor of ``rank`` (torch allows -1/0 on 0-d)."""
    if isinstance(dim, Value) or isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise g.error(f"{op}: dim must be a Python int known at export time, got {dim!r}")
    dim = int(dim)
    if rank is None:
        if dim < 0:
            raise g.error(f"{op}: a negative dim needs the rank of the input, which is unknown")
        return dim
    wrap = max(rank, 1)
    if not -wrap <= dim < wrap:
        raise g.error(f"{op}: dim {dim} out of range for a tensor of rank {rank}")
    return dim % wrap


def normalize_dims(g: GraphBuilder, dims: Any, rank: int | None, op: str = "") -> list[int] | None:
    """A dim / list of dims as sorted unique non-negative ints; None or () means all (None)."""
    if dims is None:
        return None
    if isinstance(dims, (list, tuple)):
        if len(dims) == 0:
            return None
        out = sorted({normalize_dim(g, d, rank, op) for d in dims})
        if len(out) != len(dims):
            raise g.error(f"{op}: dim {dims} repeats a dimension")
        return out
    return [normalize_dim(g, dims, rank, op)]


def require_value(g: GraphBuilder, x: Any, op: str, what: str = "input") -> Value:
    if not isinstance(x, Value):
        raise g.error(f"{op}: {what} must be a tensor, got {type(x).__name__}")
    return x


def scalar_or_value(x: Any) -> bool:
    return isinstance(x, (Value, bool, int, float))


def float_dtype_for(dtype: torch.dtype) -> torch.dtype:
    """The dtype of ``torch.sqrt`` & co. for an input dtype: ints and bool go to float32."""
    return dtype if (dtype.is_floating_point or dtype.is_complex) else torch.get_default_dtype()


def as_float(g: GraphBuilder, x: Value) -> Value:
    return g.cast(x, float_dtype_for(x.dtype))


def fill(g: GraphBuilder, shape: Value, value: Any, dtype: torch.dtype) -> Value:
    """A tensor of ``shape`` (1-d int64 Value) filled with a Python scalar."""
    t = torch.tensor([value], dtype=dtype)
    static = g.const_value(shape)
    if static is not None and static.numel() == 0:
        return g.const(torch.tensor(value, dtype=dtype))
    return g.op("ConstantOfShape", shape, value=_tensor_attr(t))


def _tensor_attr(t: torch.Tensor):
    from lowering.graph import _tensor_to_proto

    return _tensor_to_proto("value", t.reshape(1))


def is_float_value(x: Any) -> bool:
    return isinstance(x, Value) and is_float(x.dtype)


def is_int_value(x: Any) -> bool:
    return isinstance(x, Value) and is_int(x.dtype)


def is_bool_value(x: Any) -> bool:
    return isinstance(x, Value) and is_bool(x.dtype)


def where(g: GraphBuilder, cond: Value, x: Value, y: Value) -> Value:
    """ONNX Where; bool operands go through uint8 (onnxruntime has no bool Where)."""
    if x.dtype == torch.bool:
        r = g.op("Where", cond, g.cast(x, torch.uint8), g.cast(y, torch.uint8))
        return g.cast(r, torch.bool)
    return g.op("Where", cond, x, y)
