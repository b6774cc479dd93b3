"""`Value`: a graph value's name, torch dtype and (symbolic) shape, and its ONNX type protos."""

from __future__ import annotations

import dataclasses
from typing import Union

import onnx
import torch
from onnx import helper

from lowering.builder.dtypes import onnx_dtype

Dim = Union[int, str, None]
Shape = Union[tuple[Dim, ...], None]


@dataclasses.dataclass(frozen=True)
class Value:
    """A graph value: ONNX value name, torch dtype, shape (see the module docstring)."""

    name: str
    dtype: torch.dtype
    shape: Shape

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        """The shape when every dim is a static int, else None."""
        if self.shape is None or not all(isinstance(d, int) for d in self.shape):
            return None
        return tuple(self.shape)  # type: ignore[return-value]

    def __bool__(self) -> bool:
        raise TypeError(
            f"graph value {self.name!r} has no truth value at export time "
            "(test `is None`, or emit an If)"
        )

    def __repr__(self) -> str:
        dims = "?" if self.shape is None else ",".join("?" if d is None else str(d) for d in self.shape)
        return f"Value({self.name}: {str(self.dtype).removeprefix('torch.')}[{dims}])"


def _type_proto(v: Value) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(onnx_dtype(v.dtype), None if v.shape is None else list(v.shape))


def _value_info(name: str, dtype: torch.dtype, shape: Shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx_dtype(dtype), None if shape is None else list(shape))


def _shape_from_type(tp: onnx.TypeProto) -> Shape:
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return None
    dims: list[Dim] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return tuple(dims)

