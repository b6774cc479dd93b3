"""What the elementwise families (``unary``, ``elementwise``) share: operand checks,
float results, truncation, alpha scaling, the sign of a float."""

from __future__ import annotations

from typing import Any

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import as_float, check_out, require_value


# ---------------------------------------------------------------------------- helpers


def _float_unary(g: GraphBuilder, op_type: str, input: Any, out: Any, name: str) -> Value:
    check_out(g, out, name)
    x = require_value(g, input, name)
    if x.dtype.is_complex:
        raise g.error(f"{name} of a complex tensor is not supported")
    return g.op(op_type, as_float(g, x))


def _no_bool(g: GraphBuilder, x: Value, name: str) -> None:
    if is_bool(x.dtype):
        raise g.error(f"torch.{name} does not take bool tensors")


def _const_like(g: GraphBuilder, value: float, x: Value) -> Value:
    return g.const(value, x.dtype)


def _both_python(a: Any, b: Any) -> bool:
    return not isinstance(a, Value) and not isinstance(b, Value)


def _trunc(g: GraphBuilder, x: Value) -> Value:
    """Round toward zero (ONNX has no Trunc)."""
    if not is_float(x.dtype):
        return x
    neg = g.op("Less", x, _const_like(g, 0.0, x))
    return g.op("Where", neg, g.op("Ceil", x), g.op("Floor", x))


def _binary_operands(g: GraphBuilder, a: Any, b: Any, name: str) -> tuple[Value, Value]:
    if _both_python(a, b):
        raise g.error(f"{name}: neither operand is a tensor")
    for v in (a, b):
        if isinstance(v, Value) and v.dtype.is_complex:
            raise g.error(f"{name} of complex tensors is not supported")
    return g.promote(a, b)


def _scaled(g: GraphBuilder, v: Value, alpha: Any, name: str) -> Value:
    if isinstance(alpha, Value):
        raise g.error(f"{name}: alpha must be a Python number")
    if is_bool(v.dtype):
        if isinstance(alpha, float):
            raise g.error(f"{name}: for bool tensors, alpha must be a bool or an int")
        return v if alpha else g.op("And", v, g.const(False))
    if alpha == 1:
        return v
    if not is_float(v.dtype) and isinstance(alpha, float):
        raise g.error(f"{name}: for integral input tensors, alpha must not be a floating point number")
    return g.op("Mul", v, g.const(alpha, v.dtype))


def _negative_sign(g: GraphBuilder, x: Value) -> Value:
    """x < 0, or x is -0.0 (1/x is -inf).  ONNX cannot read the sign bit of a NaN: NaN
    counts as positive here (torch reads the bit)."""
    zero = g.const(0.0, x.dtype)
    neg_zero = g.op("And", g.op("Equal", x, zero), g.op("Less", g.op("Reciprocal", x), zero))
    return g.op("Or", g.op("Less", x, zero), neg_zero)

