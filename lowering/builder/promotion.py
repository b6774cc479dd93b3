"""Dtype promotion as torch does it: `result_type` over Values, tensors and Python scalars,
and operands made Values of one dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lowering.builder.value import Value
from lowering.errors import LoweringError


class Promotion:
    def result_type(self, *xs: Any) -> torch.dtype:
        """``torch.result_type`` over Values, tensors and Python scalars (None ignored):
        dimensioned tensors outrank 0-d tensors, which outrank Python scalars, within a
        category (bool < int < float < complex); a higher category always wins, a Python
        float becoming float32."""
        return result_type(*xs)

    def as_value(self, x: Any, like: Value | torch.dtype | None = None) -> Value:
        """``x`` as a Value.  A Python scalar becomes a constant of the dtype torch would
        give it next to ``like`` (``2`` next to float16 -> float16, ``2.5`` next to int64
        -> float32); without ``like``: bool, int64 or float32."""
        if isinstance(x, Value):
            return x
        if isinstance(x, (torch.Tensor, np.ndarray, np.generic)):
            return self.const(x)
        if isinstance(x, (bool, int, float)):
            if like is None:
                return self.const(x)
            like_dtype = like.dtype if isinstance(like, Value) else like
            return self.const(x, result_type(_DimTensor(like_dtype), x))
        raise LoweringError(f"cannot use {type(x).__name__} value {x!r} as a tensor operand")

    def promote(self, *xs: Any) -> tuple[Value, ...]:
        """Every operand as a Value of ``result_type(*xs)`` (scalars become constants)."""
        dt = result_type(*xs)
        out = []
        for x in xs:
            if isinstance(x, Value):
                out.append(self.cast(x, dt))
            else:
                out.append(self.const(x.to(dt) if isinstance(x, torch.Tensor) else x, dt))
        return tuple(out)

    def cast(self, v: Value, dtype: torch.dtype) -> Value:
        """``v`` converted to ``dtype`` (no node when it already is)."""
        if v.dtype == dtype:
            return v
        t = self.const_value(v)
        if t is not None:
            return self.const(t.to(dtype))
        return self.op("Cast", v, to=dtype)


class _DimTensor:
    """Stands for a dimensioned tensor of a dtype in ``result_type``."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: torch.dtype):
        self.dtype = dtype


def _promote(a: torch.dtype | None, b: torch.dtype | None) -> torch.dtype | None:
    if a is None:
        return b
    if b is None:
        return a
    return torch.promote_types(a, b)


def _combine(higher: torch.dtype | None, lower: torch.dtype | None) -> torch.dtype | None:
    # c10 combine_categories.
    if higher is not None and higher.is_complex:
        return higher
    if lower is not None and lower.is_complex:
        if higher is not None and higher.is_floating_point:
            return {torch.float64: torch.complex128}.get(higher, torch.complex64)
        return lower
    if higher is not None and higher.is_floating_point:
        return higher
    if higher == torch.bool or (lower is not None and lower.is_floating_point):
        return _promote(higher, lower)
    return higher if higher is not None else lower


def result_type(*xs: Any) -> torch.dtype:
    """torch.result_type generalised to any number of operands (see GraphBuilder)."""
    dim_t = zero_t = wrapped = None
    for x in xs:
        if x is None:
            continue
        if isinstance(x, _DimTensor):
            dim_t = _promote(dim_t, x.dtype)
        elif isinstance(x, Value):
            if x.rank == 0:
                zero_t = _promote(zero_t, x.dtype)
            else:
                dim_t = _promote(dim_t, x.dtype)
        elif isinstance(x, torch.Tensor):
            if x.dim() == 0:
                zero_t = _promote(zero_t, x.dtype)
            else:
                dim_t = _promote(dim_t, x.dtype)
        elif isinstance(x, bool):
            wrapped = _promote(wrapped, torch.bool)
        elif isinstance(x, int):
            wrapped = _promote(wrapped, torch.int64)
        elif isinstance(x, float):
            wrapped = _promote(wrapped, torch.get_default_dtype())
        elif isinstance(x, complex):
            wrapped = _promote(wrapped, torch.complex64)
        else:
            raise LoweringError(f"cannot use {type(x).__name__} value {x!r} as a tensor operand")
    out = _combine(dim_t, _combine(zero_t, wrapped))
    if out is None:
        raise LoweringError("result_type() of no tensor operands")
    return out

