"""torch dtypes and their ONNX element types, and the dtype categories ops branch on."""

from __future__ import annotations

import torch
from onnx import TensorProto

from lowering.errors import GraphConstructionError, LoweringError

_TORCH_TO_ONNX: dict[torch.dtype, int] = {
    torch.float32: TensorProto.FLOAT,
    torch.float64: TensorProto.DOUBLE,
    torch.float16: TensorProto.FLOAT16,
    torch.bfloat16: TensorProto.BFLOAT16,
    torch.int8: TensorProto.INT8,
    torch.int16: TensorProto.INT16,
    torch.int32: TensorProto.INT32,
    torch.int64: TensorProto.INT64,
    torch.uint8: TensorProto.UINT8,
    torch.uint16: TensorProto.UINT16,
    torch.uint32: TensorProto.UINT32,
    torch.uint64: TensorProto.UINT64,
    torch.bool: TensorProto.BOOL,
    torch.complex64: TensorProto.COMPLEX64,
    torch.complex128: TensorProto.COMPLEX128,
}
_ONNX_TO_TORCH = {v: k for k, v in _TORCH_TO_ONNX.items()}


def onnx_dtype(dtype: torch.dtype) -> int:
    """The ONNX element type of a torch dtype (``LoweringError`` when there is none)."""
    try:
        return _TORCH_TO_ONNX[dtype]
    except KeyError:
        raise LoweringError(
            f"dtype {dtype} has no ONNX equivalent",
            hint="cast to float32, int64 or bool before this point",
        ) from None


def torch_dtype(elem_type: int) -> torch.dtype:
    """The torch dtype of an ONNX element type."""
    try:
        return _ONNX_TO_TORCH[elem_type]
    except KeyError:
        name = TensorProto.DataType.Name(elem_type) if elem_type else "UNDEFINED"
        raise GraphConstructionError(f"ONNX element type {name} has no torch dtype") from None


def is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def is_complex(dtype: torch.dtype) -> bool:
    return dtype.is_complex


def is_bool(dtype: torch.dtype) -> bool:
    return dtype == torch.bool


def is_int(dtype: torch.dtype) -> bool:
    """Integral, bool excluded."""
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)

