"""Comparisons, logic, NaN/inf tests, where, clamp and masked_fill.

Comparisons promote their operands as torch does and return bool.  ``logical_*`` take
any dtype (nonzero is true).  ``bitwise_*`` on integers need ONNX's Bitwise* ops (opset
18); on bool they are And/Or/Xor/Not at every opset.  ``clamp`` propagates NaN of the
input like torch, and takes scalar or tensor bounds.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float, is_int
from lowering.ops._common import check_out, require_value, where as _where
from lowering.ops.registry import register

# ORT implements Less/Greater/Equal for 32/64-bit ints, floats (and bool for Equal).
_WIDEN = {torch.int8: torch.int32, torch.int16: torch.int32, torch.uint8: torch.int32, torch.uint16: torch.int32}


def _cmp_operands(g: GraphBuilder, a: Any, b: Any, name: str, bool_ok: bool) -> tuple[Value, Value]:
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise g.error(f"{name}: neither operand is a tensor")
    for v in (a, b):
        if not isinstance(v, (Value, bool, int, float)):
            raise g.error(f"{name}: cannot compare a tensor with {type(v).__name__}")
    x, y = g.promote(a, b)
    if is_bool(x.dtype) and not bool_ok:
        x, y = g.cast(x, torch.int32), g.cast(y, torch.int32)
    elif x.dtype in _WIDEN:
        x, y = g.cast(x, _WIDEN[x.dtype]), g.cast(y, _WIDEN[x.dtype])
    return x, y


@register("torch.eq", "Tensor.eq", "operator.eq")
def eq(g, input, other, *, out=None):
    """eq(Tensor self, Tensor|Scalar other) -> Tensor(bool)"""
    check_out(g, out, "eq")
    return g.op("Equal", *_cmp_operands(g, input, other, "eq", bool_ok=True))


@register("torch.ne", "Tensor.ne", "torch.not_equal", "Tensor.not_equal", "operator.ne")
def ne(g, input, other, *, out=None):
    """ne(Tensor self, Tensor|Scalar other) -> Tensor(bool)"""
    check_out(g, out, "ne")
    return g.op("Not", g.op("Equal", *_cmp_operands(g, input, other, "ne", bool_ok=True)))


@register("torch.lt", "Tensor.lt", "torch.less", "Tensor.less", "operator.lt")
def lt(g, input, other, *, out=None):
    """lt(Tensor self, Tensor|Scalar other) -> Tensor(bool)"""
    check_out(g, out, "lt")
    return g.op("Less", *_cmp_operands(g, input, other, "lt", bool_ok=False))


@register("torch.le", "Tensor.le", "torch.less_equal", "Tensor.less_equal", "operator.le")
def le(g, input, other, *, out=None):
    """le(Tensor self, Tensor|Scalar other) -> Tensor(bool)"""
    check_out(g, out, "le")
    return g.op("LessOrEqual", *_cmp_operands(g, input, other, "le", bool_ok=False))


@register("torch.gt", "Tensor.gt", "torch.greater", "Tensor.greater", "operator.gt")
def gt(g, input, other, *, out=None):
    """gt(Tensor self, Tensor|Scalar other) -> Tensor(bool)"""
    check_out(g, out, "gt")
    return g.op("Greater", *_cmp_operands(g, input, other, "gt", bool_ok=False))


@register("torch.ge", "Tensor.ge", "torch.greater_equal", "Tensor.greater_equal", "operator.ge")
def ge(g, input, other, *, out=None):
    """ge(Tensor self, Tensor|Scalar other) -> Tensor(bool)"""
    check_out(g, out, "ge")
    return g.op("GreaterOrEqual", *_cmp_operands(g, input, other, "ge", bool_ok=False))


@register("torch.isclose", "Tensor.isclose")
def isclose(g, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor"""
    a, b = _cmp_operands(g, input, other, "isclose", bool_ok=True)
    if not is_float(a.dtype):
        if is_bool(a.dtype):
            return g.op("Equal", a, b)
        a, b = g.cast(a, torch.float64), g.cast(b, torch.float64)
    close = g.op(
        "LessOrEqual",
        g.op("Abs", g.op("Sub", a, b)),
        g.op("Add", g.const(atol, a.dtype), g.op("Mul", g.const(rtol, a.dtype), g.op("Abs", b))),
    )
    close = g.op("Or", g.op("Equal", a, b), close)  # equal infinities
    if equal_nan:
        close = g.op("Or", close, g.op("And", g.op("IsNaN", a), g.op("IsNaN", b)))
    return close


# ---------------------------------------------------------------------------- logic


def _truth(g: GraphBuilder, x: Any, name: str) -> Value:
    if isinstance(x, (bool, int, float)):
        return g.const(bool(x))
    x = require_value(g, x, name)
    return g.cast(x, torch.bool)


@register("torch.logical_not", "Tensor.logical_not")
def logical_not(g, input, *, out=None):
    """logical_not(Tensor self) -> Tensor(bool)"""
    check_out(g, out, "logical_not")
    return g.op("Not", _truth(g, input, "logical_not"))


@register("torch.logical_and", "Tensor.logical_and")
def logical_and(g, input, other, *, out=None):
    """logical_and(Tensor self, Tensor other) -> Tensor(bool)"""
    check_out(g, out, "logical_and")
    return g.op("And", _truth(g, input, "logical_and"), _truth(g, other, "logical_and"))


@register("torch.logical_or", "Tensor.logical_or")
def logical_or(g, input, other, *, out=None):
    """logical_or(Tensor self, Tensor other) -> Tensor(bool)"""
    check_out(g, out, "logical_or")
    return g.op("Or", _truth(g, input, "logical_or"), _truth(g, other, "logical_or"))


@register("torch.logical_xor", "Tensor.logical_xor")
def logical_xor(g, input, other, *, out=None):
    """logical_xor(Tensor self, Tensor other) -> Tensor(bool)"""
    check_out(g, out, "logical_xor")
    return g.op("Xor", _truth(g, input, "logical_xor"), _truth(g, other, "logical_xor"))


def _bitwise(g: GraphBuilder, bool_op: str, int_op: str, a: Any, b: Any, name: str) -> Value:
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise g.error(f"{name}: neither operand is a tensor")
    for v in (a, b):
        if isinstance(v, float) or (isinstance(v, Value) and (is_float(v.dtype) or v.dtype.is_complex)):
            raise g.error(f"{name} is only defined for integer and bool tensors")
    x, y = g.promote(a, b)
    if is_bool(x.dtype):
        return g.op(bool_op, x, y)
    if g.opset < 18:
        raise g.error(f"{name} of integer tensors needs opset 18 (ONNX Bitwise ops)", hint="export with opset >= 18")
    return g.op(int_op, x, y)


@register("torch.bitwise_and", "Tensor.bitwise_and", "operator.and_")
def bitwise_and(g, input, other, *, out=None):
    """bitwise_and(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "bitwise_and")
    return _bitwise(g, "And", "BitwiseAnd", input, other, "bitwise_and")


@register("torch.bitwise_or", "Tensor.bitwise_or", "operator.or_")
def bitwise_or(g, input, other, *, out=None):
    """bitwise_or(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "bitwise_or")
    return _bitwise(g, "Or", "BitwiseOr", input, other, "bitwise_or")


@register("torch.bitwise_xor", "Tensor.bitwise_xor", "operator.xor")
def bitwise_xor(g, input, other, *, out=None):
    """bitwise_xor(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "bitwise_xor")
    return _bitwise(g, "Xor", "BitwiseXor", input, other, "bitwise_xor")


@register("torch.bitwise_not", "Tensor.bitwise_not", "operator.invert")
def bitwise_not(g, input, *, out=None):
    """bitwise_not(Tensor self) -> Tensor"""
    check_out(g, out, "bitwise_not")
    x = require_value(g, input, "bitwise_not")
    if is_bool(x.dtype):
        return g.op("Not", x)
    if not is_int(x.dtype):
        raise g.error("bitwise_not is only defined for integer and bool tensors")
    if g.opset < 18:
        raise g.error("bitwise_not of integer tensors needs opset 18 (ONNX BitwiseNot)", hint="export with opset >= 18")
    return g.op("BitwiseNot", x)


# ---------------------------------------------------------------------------- nan / inf


def _all_false_like(g: GraphBuilder, x: Value) -> Value:
    return g.op("Not", g.op("Equal", x, x)) if not is_bool(x.dtype) else g.op("Xor", x, x)


@register("torch.isnan", "Tensor.isnan")
def isnan(g, input):
    """isnan(Tensor self) -> Tensor(bool)"""
    x = require_value(g, input, "isnan")
    return g.op("IsNaN", x) if is_float(x.dtype) else _all_false_like(g, x)


@register("torch.isinf", "Tensor.isinf")
def isinf(g, input):
    """isinf(Tensor self) -> Tensor(bool)"""
    x = require_value(g, input, "isinf")
    return g.op("IsInf", x) if is_float(x.dtype) else _all_false_like(g, x)


@register("torch.isposinf", "Tensor.isposinf")
def isposinf(g, input, *, out=None):
    """isposinf(Tensor self) -> Tensor(bool)"""
    check_out(g, out, "isposinf")
    x = require_value(g, input, "isposinf")
    return g.op("IsInf", x, detect_negative=0) if is_float(x.dtype) else _all_false_like(g, x)


@register("torch.isneginf", "Tensor.isneginf")
def isneginf(g, input, *, out=None):
    """isneginf(Tensor self) -> Tensor(bool)"""
    check_out(g, out, "isneginf")
    x = require_value(g, input, "isneginf")
    return g.op("IsInf", x, detect_positive=0) if is_float(x.dtype) else _all_false_like(g, x)


@register("torch.isfinite", "Tensor.isfinite")
def isfinite(g, input):
    """isfinite(Tensor self) -> Tensor(bool)"""
    x = require_value(g, input, "isfinite")
    if not is_float(x.dtype):
        return g.op("Not", _all_false_like(g, x))
    return g.op("Not", g.op("Or", g.op("IsInf", x), g.op("IsNaN", x)))


@register("torch.isreal", "Tensor.isreal")
def isreal(g, input):
    """isreal(Tensor self) -> Tensor(bool)  (real dtypes: all true)"""
    x = require_value(g, input, "isreal")
    if x.dtype.is_complex:
        raise g.error("complex tensors are not supported")
    return g.op("Not", _all_false_like(g, x)) if not is_float(x.dtype) else g.op("Or", g.op("Equal", x, x), g.op("IsNaN", x))


# ---------------------------------------------------------------------------- where / clamp


def _condition(g: GraphBuilder, condition: Any) -> Value:
    c = require_value(g, condition, "where", "condition")
    if c.dtype not in (torch.bool, torch.uint8):
        raise g.error(f"where expected a bool condition, got {c.dtype}")
    return g.cast(c, torch.bool)


@register("torch.where")
def where(g, condition, input=None, other=None, *, out=None):
    """where(Tensor condition, Tensor|Scalar self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "where")
    if input is None and other is None:
        from lowering.ops.indexing import nonzero  # indexing imports this module's neighbours

        return nonzero(g, condition, as_tuple=True)  # torch.where(condition) is nonzero(as_tuple=True)
    c = _condition(g, condition)
    x, y = g.promote(input, other)
    return _where(g, c, x, y)


@register("Tensor.where")
def tensor_where(g, self, condition, other):
    """Tensor.where(Tensor self, Tensor condition, Tensor|Scalar other) -> Tensor"""
    return where(g, condition, self, other)


def _bound(g: GraphBuilder, x: Value, op_type: str, bound: Value) -> Value:
    r = g.op(op_type, x, bound)
    if not is_float(x.dtype):
        return r
    # torch propagates NaN from the input and from tensor bounds.
    nan = g.op("Or", g.op("IsNaN", x), g.op("IsNaN", bound))
    return g.op("Where", nan, g.op("Add", x, bound), r)


@register("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip")
def clamp(g, input, min=None, max=None, *, out=None):
    """clamp(Tensor self, Tensor|Scalar? min=None, Tensor|Scalar? max=None) -> Tensor"""
    check_out(g, out, "clamp")
    x = require_value(g, input, "clamp")
    if min is None and max is None:
        raise g.error("clamp: at least one of min and max must be given (torch raises)")
    dt = g.result_type(x, min, max)
    if is_bool(dt):
        if not all(b is None or isinstance(b, Value) for b in (min, max)):
            raise g.error("clamp of bool tensors with scalar bounds is not supported by torch")
        if min is not None:
            x = g.op("Or", x, g.cast(min, dt))
        if max is not None:
            x = g.op("And", x, g.cast(max, dt))
        return x
    x = g.cast(x, dt)
    tensor_bounds = isinstance(min, Value) or isinstance(max, Value)
    if not tensor_bounds:
        for b in (min, max):
            if isinstance(b, float) and b != b:
                raise g.error("clamp with a NaN bound is not supported")
        lo = None if min is None else g.const(min, dt)
        hi = None if max is None else g.const(max, dt)
        return g.op("Clip", x, lo, hi)
    if min is not None:
        x = _bound(g, x, "Max", g.cast(g.as_value(min, dt), dt))
    if max is not None:
        x = _bound(g, x, "Min", g.cast(g.as_value(max, dt), dt))
    return x


@register("torch.clamp_min", "Tensor.clamp_min")
def clamp_min(g, input, min):
    """clamp_min(Tensor self, Tensor|Scalar min) -> Tensor"""
    return clamp(g, input, min, None)


@register("torch.clamp_max", "Tensor.clamp_max")
def clamp_max(g, input, max):
    """clamp_max(Tensor self, Tensor|Scalar max) -> Tensor"""
    return clamp(g, input, None, max)


@register("Tensor.clamp_", "Tensor.clip_")
def clamp_(g, input, min=None, max=None):
    """Tensor.clamp_(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor  (keeps self's dtype)"""
    from lowering.ops.elementwise import inplace_result

    return inplace_result(g, input, clamp(g, input, min, max), "clamp_")


@register("torch.masked_fill", "Tensor.masked_fill")
def masked_fill(g, input, mask, value):
    """masked_fill(Tensor self, Tensor mask, Tensor|Scalar value) -> Tensor  (keeps self's dtype)"""
    x = require_value(g, input, "masked_fill")
    m = require_value(g, mask, "masked_fill", "mask")
    if m.dtype != torch.bool:
        raise g.error(f"masked_fill expects a bool mask, got {m.dtype}")
    if isinstance(value, Value):
        if value.rank not in (0, None):
            raise g.error("masked_fill only supports a 0-dimensional value tensor (torch raises)")
        if value.rank is None:
            raise g.error("masked_fill: the rank of the value tensor is unknown")
        v = g.cast(value, x.dtype)
    elif isinstance(value, (bool, int, float)):
        if is_int(x.dtype) and isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise g.error("masked_fill: cannot fill an integer tensor with a non-finite value")
        if is_bool(x.dtype) or not is_float(x.dtype):
            v = g.const(torch.tensor(value).to(x.dtype))
        else:
            v = g.const(value, x.dtype)
    else:
        raise g.error(f"masked_fill: unsupported fill value {value!r}")
    return _where(g, m, v, x)


@register("Tensor.masked_fill_")
def masked_fill_(g, input, mask, value):
    """Tensor.masked_fill_(Tensor self, Tensor mask, Tensor|Scalar value) -> Tensor"""
    return masked_fill(g, input, mask, value)
