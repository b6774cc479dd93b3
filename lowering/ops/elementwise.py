"""Elementwise binary arithmetic and the Python operators on them, and their in-place
forms (``add_``, ``+=``) with those of the unary functions (``unary``).

dtype rules follow torch: binary ops promote with ``torch.result_type`` (Python
scalars on either side); true division of integers gives float32; ``//`` and
``rounding_mode`` keep integers integral; in-place forms (``add_``, ``+=``) keep the
dtype of ``self`` and refuse what torch refuses (an int tensor ``+= 0.5``).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import check_out, float_dtype_for, require_value
from lowering.ops._elementwise_common import _binary_operands, _both_python, _negative_sign, _scaled, _trunc
from lowering.ops.registry import register
from lowering.ops.unary import (abs, ceil, exp, floor, log, nan_to_num, neg, reciprocal, round, rsqrt, sigmoid, sqrt,
                                tanh, trunc)


# ---------------------------------------------------------------------------- binary


@register("torch.add", "Tensor.add", "operator.add")
def add(g, input, other, *, alpha=1, out=None):
    """add(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "add")
    a, b = _binary_operands(g, input, other, "add")
    b = _scaled(g, b, alpha, "add")
    if is_bool(a.dtype):
        return g.op("Or", a, b)
    return g.op("Add", a, b)


@register("torch.sub", "Tensor.sub", "torch.subtract", "Tensor.subtract", "operator.sub")
def sub(g, input, other, *, alpha=1, out=None):
    """sub(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor"""
    check_out(g, out, "sub")
    a, b = _binary_operands(g, input, other, "sub")
    if is_bool(a.dtype):
        raise g.error("subtraction of bool tensors is not supported by torch", hint="use logical_xor")
    return g.op("Sub", a, _scaled(g, b, alpha, "sub"))


@register("torch.rsub", "Tensor.rsub")
def rsub(g, input, other, *, alpha=1):
    """rsub(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor  (other - alpha*self)"""
    a, b = _binary_operands(g, input, other, "rsub")
    if is_bool(a.dtype):
        raise g.error("subtraction of bool tensors is not supported by torch")
    return g.op("Sub", b, _scaled(g, a, alpha, "rsub"))


@register("torch.mul", "Tensor.mul", "torch.multiply", "Tensor.multiply", "operator.mul")
def mul(g, input, other, *, out=None):
    """mul(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "mul")
    a, b = _binary_operands(g, input, other, "mul")
    if is_bool(a.dtype):
        return g.op("And", a, b)
    return g.op("Mul", a, b)


def _true_div(g: GraphBuilder, a: Value, b: Value) -> Value:
    dt = float_dtype_for(a.dtype)
    return g.op("Div", g.cast(a, dt), g.cast(b, dt))


def _floor_div(g: GraphBuilder, a: Value, b: Value) -> Value:
    if is_bool(a.dtype):
        raise g.error("floor division of bool tensors is not supported by torch")
    if not is_float(a.dtype):
        # Integer Div truncates; step down when the remainder has the wrong sign.
        q = g.op("Div", a, b)
        r = g.op("Mod", a, b, fmod=1)
        zero = g.const(0, a.dtype)
        wrong = g.op("And", g.op("Not", g.op("Equal", r, zero)), g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero)))
        return g.op("Sub", q, g.cast(wrong, a.dtype))
    # c10 div_floor_floating, step by step.
    zero, one, half = (g.const(v, a.dtype) for v in (0.0, 1.0, 0.5))
    mod = g.op("Mod", a, b, fmod=1)
    div = g.op("Div", g.op("Sub", a, mod), b)
    wrong = g.op("And", g.op("Not", g.op("Equal", mod, zero)), g.op("Xor", g.op("Less", b, zero), g.op("Less", mod, zero)))
    div = g.op("Sub", div, g.cast(wrong, a.dtype))
    floordiv = g.op("Floor", div)
    floordiv = g.op("Add", floordiv, g.cast(g.op("Greater", g.op("Sub", div, floordiv), half), a.dtype))
    floordiv = g.op("Where", g.op("Equal", div, zero), g.op("Mul", zero, g.op("Div", a, b)), floordiv)
    return g.op("Where", g.op("Equal", b, zero), g.op("Div", a, b), floordiv)


@register("torch.div", "Tensor.div", "torch.divide", "Tensor.divide")
def div(g, input, other, *, rounding_mode=None, out=None):
    """div(Tensor self, Tensor|Scalar other, *, str? rounding_mode=None) -> Tensor"""
    check_out(g, out, "div")
    a, b = _binary_operands(g, input, other, "div")
    if rounding_mode is None:
        return _true_div(g, a, b)
    if rounding_mode == "floor":
        return _floor_div(g, a, b)
    if rounding_mode == "trunc":
        if is_bool(a.dtype):
            raise g.error("division of bool tensors with rounding_mode is not supported by torch")
        return g.op("Div", a, b) if not is_float(a.dtype) else _trunc(g, g.op("Div", a, b))
    raise g.error(f"div: unknown rounding_mode {rounding_mode!r}")


@register("torch.true_divide", "Tensor.true_divide", "operator.truediv")
def true_divide(g, input, other, *, out=None):
    """true_divide(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "true_divide")
    return _true_div(g, *_binary_operands(g, input, other, "true_divide"))


@register("torch.floor_divide", "Tensor.floor_divide", "operator.floordiv")
def floor_divide(g, input, other, *, out=None):
    """floor_divide(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "floor_divide")
    return _floor_div(g, *_binary_operands(g, input, other, "floor_divide"))


@register("torch.remainder", "Tensor.remainder", "operator.mod")
def remainder(g, input, other, *, out=None):
    """remainder(Tensor self, Tensor|Scalar other) -> Tensor  (sign of the divisor)"""
    check_out(g, out, "remainder")
    a, b = _binary_operands(g, input, other, "remainder")
    if is_bool(a.dtype):
        raise g.error("remainder of bool tensors is not supported by torch")
    if not is_float(a.dtype):
        return g.op("Mod", a, b, fmod=0)
    zero = g.const(0.0, a.dtype)
    mod = g.op("Mod", a, b, fmod=1)
    wrong = g.op("And", g.op("Not", g.op("Equal", mod, zero)), g.op("Xor", g.op("Less", b, zero), g.op("Less", mod, zero)))
    return g.op("Where", wrong, g.op("Add", mod, b), mod)


@register("torch.fmod", "Tensor.fmod")
def fmod(g, input, other, *, out=None):
    """fmod(Tensor self, Tensor|Scalar other) -> Tensor  (sign of the dividend)"""
    check_out(g, out, "fmod")
    a, b = _binary_operands(g, input, other, "fmod")
    if is_bool(a.dtype):
        raise g.error("fmod of bool tensors is not supported by torch")
    return g.op("Mod", a, b, fmod=1)


@register("torch.pow", "Tensor.pow", "operator.pow")
def pow(g, input, exponent, *, out=None):
    """pow(Tensor|Scalar self, Tensor|Scalar exponent) -> Tensor"""
    check_out(g, out, "pow")
    a, b = _binary_operands(g, input, exponent, "pow")
    if is_bool(a.dtype):
        raise g.error("pow with a bool result is not supported")
    if is_float(a.dtype):
        return g.op("Pow", a, b)
    if not isinstance(exponent, Value):
        if exponent < 0:
            raise g.error("integers to negative integer powers are not allowed (torch raises)")
        return g.op("Pow", a, b)
    # torch: an integer to a negative power is 1 for base 1, +-1 for base -1, else 0.
    zero, one = g.const(0, a.dtype), g.const(1, a.dtype)
    odd = g.op("Equal", g.op("Mod", b, g.const(2, a.dtype), fmod=0), one)
    minus_one = g.op("Where", odd, g.op("Neg", one), one)
    neg_pow = g.op("Where", g.op("Equal", a, one), one, g.op("Where", g.op("Equal", a, g.op("Neg", one)), minus_one, zero))
    safe_b = g.op("Max", b, zero)
    return g.op("Where", g.op("Less", b, zero), neg_pow, g.op("Pow", a, safe_b))


@register("torch.float_power", "Tensor.float_power")
def float_power(g, input, exponent, *, out=None):
    """float_power(Tensor|Scalar self, Tensor|Scalar exponent) -> Tensor  (in float64)"""
    check_out(g, out, "float_power")
    if _both_python(input, exponent):
        raise g.error("float_power: neither operand is a tensor")
    a = g.as_value(input, torch.float64)
    b = g.as_value(exponent, torch.float64)
    return g.op("Pow", g.cast(a, torch.float64), g.cast(b, torch.float64))


def _nan_propagating(g: GraphBuilder, op_type: str, a: Value, b: Value) -> Value:
    r = g.op(op_type, a, b)
    if not is_float(a.dtype):
        return r
    # ONNX Max/Min leave NaN handling to the runtime; torch propagates NaN.
    either_nan = g.op("Or", g.op("IsNaN", a), g.op("IsNaN", b))
    return g.op("Where", either_nan, g.op("Add", a, b), r)


@register("torch.maximum", "Tensor.maximum")
def maximum(g, input, other, *, out=None):
    """maximum(Tensor self, Tensor other) -> Tensor  (NaN propagates)"""
    check_out(g, out, "maximum")
    a, b = _binary_operands(g, input, other, "maximum")
    if is_bool(a.dtype):
        return g.op("Or", a, b)
    return _nan_propagating(g, "Max", a, b)


@register("torch.minimum", "Tensor.minimum")
def minimum(g, input, other, *, out=None):
    """minimum(Tensor self, Tensor other) -> Tensor  (NaN propagates)"""
    check_out(g, out, "minimum")
    a, b = _binary_operands(g, input, other, "minimum")
    if is_bool(a.dtype):
        return g.op("And", a, b)
    return _nan_propagating(g, "Min", a, b)


def _nan_ignoring(g: GraphBuilder, op_type: str, a: Value, b: Value) -> Value:
    r = g.op(op_type, a, b)
    if not is_float(a.dtype):
        return r
    r = g.op("Where", g.op("IsNaN", a), b, r)
    return g.op("Where", g.op("IsNaN", b), a, r)


@register("torch.fmax", "Tensor.fmax")
def fmax(g, input, other, *, out=None):
    """fmax(Tensor self, Tensor other) -> Tensor  (NaN ignored)"""
    check_out(g, out, "fmax")
    a, b = _binary_operands(g, input, other, "fmax")
    if is_bool(a.dtype):
        return g.op("Or", a, b)
    return _nan_ignoring(g, "Max", a, b)


@register("torch.fmin", "Tensor.fmin")
def fmin(g, input, other, *, out=None):
    """fmin(Tensor self, Tensor other) -> Tensor  (NaN ignored)"""
    check_out(g, out, "fmin")
    a, b = _binary_operands(g, input, other, "fmin")
    if is_bool(a.dtype):
        return g.op("And", a, b)
    return _nan_ignoring(g, "Min", a, b)


@register("torch.atan2", "Tensor.atan2", "torch.arctan2", "Tensor.arctan2")
def atan2(g, input, other, *, out=None):
    """atan2(Tensor self, Tensor other) -> Tensor  (quadrant-aware atan(self/other))"""
    check_out(g, out, "atan2")
    y, x = _binary_operands(g, input, other, "atan2")
    dt = float_dtype_for(y.dtype)
    y, x = g.cast(y, dt), g.cast(x, dt)
    zero = g.const(0.0, dt)
    pi = g.const(math.pi, dt)
    base = g.op("Atan", g.op("Div", y, x))
    x_neg = g.op("Where", g.op("Less", y, zero), g.op("Sub", base, pi), g.op("Add", base, pi))
    on_axis = g.op(
        "Where",
        g.op("Greater", y, zero),
        g.const(math.pi / 2, dt),
        g.op("Where", g.op("Less", y, zero), g.const(-math.pi / 2, dt), zero),
    )
    r = g.op("Where", g.op("Less", x, zero), x_neg, g.op("Where", g.op("Equal", x, zero), on_axis, base))
    nan = g.op("Or", g.op("IsNaN", x), g.op("IsNaN", y))
    return g.op("Where", nan, g.op("Add", x, y), r)


@register("torch.hypot", "Tensor.hypot")
def hypot(g, input, other, *, out=None):
    """hypot(Tensor self, Tensor other) -> Tensor"""
    check_out(g, out, "hypot")
    a, b = _binary_operands(g, input, other, "hypot")
    if not is_float(a.dtype):
        raise g.error("hypot takes floating point tensors")
    return g.op("Sqrt", g.op("Add", g.op("Mul", a, a), g.op("Mul", b, b)))


@register("torch.logaddexp", "Tensor.logaddexp")
def logaddexp(g, input, other, *, out=None):
    """logaddexp(Tensor self, Tensor other) -> Tensor  (log(exp(a) + exp(b)), stable)"""
    check_out(g, out, "logaddexp")
    a, b = _binary_operands(g, input, other, "logaddexp")
    if not is_float(a.dtype):
        raise g.error("logaddexp takes floating point tensors")
    m = g.op("Max", a, b)
    d = g.op("Neg", g.op("Abs", g.op("Sub", a, b)))
    r = g.op("Add", m, g.op("Log", g.op("Add", g.const(1.0, a.dtype), g.op("Exp", d))))
    # Equal infinities: a - b is NaN, the answer is the infinity itself.
    same_inf = g.op("And", g.op("IsInf", a), g.op("Equal", a, b))
    return g.op("Where", same_inf, a, r)


@register("torch.xlogy", "Tensor.xlogy", "torch.special.xlogy")
def xlogy(g, input, other, *, out=None):
    """xlogy(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  (0 where self == 0)"""
    check_out(g, out, "xlogy")
    a, b = _binary_operands(g, input, other, "xlogy")
    dt = float_dtype_for(a.dtype)
    a, b = g.cast(a, dt), g.cast(b, dt)
    r = g.op("Mul", a, g.op("Log", b))
    zero = g.const(0.0, dt)
    r = g.op("Where", g.op("Equal", a, zero), zero, r)
    return g.op("Where", g.op("IsNaN", b), b, r)


@register("torch.copysign", "Tensor.copysign")
def copysign(g, input, other, *, out=None):
    """copysign(Tensor self, Tensor|Scalar other) -> Tensor"""
    check_out(g, out, "copysign")
    a, b = _binary_operands(g, input, other, "copysign")
    dt = float_dtype_for(a.dtype)
    a, b = g.cast(a, dt), g.cast(b, dt)
    mag = g.op("Abs", a)
    return g.op("Where", _negative_sign(g, b), g.op("Neg", mag), mag)


@register("torch.lerp", "Tensor.lerp")
def lerp(g, input, end, weight, *, out=None):
    """lerp(Tensor self, Tensor end, Tensor|Scalar weight) -> Tensor"""
    check_out(g, out, "lerp")
    a = require_value(g, input, "lerp")
    b = require_value(g, end, "lerp", "end")
    if not is_float(a.dtype) or a.dtype != b.dtype:
        raise g.error("lerp takes two floating point tensors of the same dtype")
    w = g.cast(g.as_value(weight, a), a.dtype)
    # torch: weight < 0.5 ? self + weight*(end-self) : end - (end-self)*(1-weight)
    diff = g.op("Sub", b, a)
    low = g.op("Add", a, g.op("Mul", w, diff))
    high = g.op("Sub", b, g.op("Mul", diff, g.op("Sub", g.const(1.0, a.dtype), w)))
    small = g.op("Less", g.op("Abs", w), g.const(0.5, a.dtype))
    return g.op("Where", small, low, high)


@register("torch.addcmul", "Tensor.addcmul")
def addcmul(g, input, tensor1, tensor2, *, value=1, out=None):
    """addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"""
    check_out(g, out, "addcmul")
    a, t1, t2 = g.promote(input, tensor1, tensor2)
    if is_bool(a.dtype):
        raise g.error("addcmul of bool tensors is not supported")
    return g.op("Add", a, _scaled(g, g.op("Mul", t1, t2), value, "addcmul"))


@register("torch.addcdiv", "Tensor.addcdiv")
def addcdiv(g, input, tensor1, tensor2, *, value=1, out=None):
    """addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"""
    check_out(g, out, "addcdiv")
    a, t1, t2 = g.promote(input, tensor1, tensor2)
    if not is_float(a.dtype):
        raise g.error("addcdiv with integer tensors is not supported by torch", hint="use true division")
    return g.op("Add", a, _scaled(g, g.op("Div", t1, t2), value, "addcdiv"))


# ---------------------------------------------------------------------------- in place

def _kind(dtype: torch.dtype) -> int:
    if dtype == torch.bool:
        return 0
    if dtype.is_complex:
        return 3
    return 2 if dtype.is_floating_point else 1


def inplace_result(g: GraphBuilder, self: Any, result: Value, name: str) -> Value:
    """The value an in-place op leaves in ``self``: the result cast back to self's dtype,
    refused where torch refuses (an int tensor cannot hold a float result)."""
    if not isinstance(self, Value):
        raise g.error(f"{name}: the in-place target must be a tensor")
    if _kind(result.dtype) > _kind(self.dtype):
        raise g.error(
            f"{name}: result type {result.dtype} can't be cast to the tensor's dtype {self.dtype} (torch raises)"
        )
    return g.cast(result, self.dtype)


def _make_inplace(fn, name: str):
    def inplace(g, self, *args, **kwargs):
        return inplace_result(g, self, fn(g, self, *args, **kwargs), name)

    inplace.__name__ = f"{fn.__name__}_"
    inplace.__qualname__ = inplace.__name__
    inplace.__doc__ = f"In-place {fn.__name__}: {fn.__doc__}  (result keeps self's dtype)"
    inplace.__module__ = __name__
    return inplace


for _fn, _names in [
    (add, ("Tensor.add_", "operator.iadd")),
    (sub, ("Tensor.sub_", "Tensor.subtract_", "operator.isub")),
    (mul, ("Tensor.mul_", "Tensor.multiply_", "operator.imul")),
    (div, ("Tensor.div_", "Tensor.divide_")),
    (true_divide, ("Tensor.true_divide_", "operator.itruediv")),
    (floor_divide, ("Tensor.floor_divide_", "operator.ifloordiv")),
    (remainder, ("Tensor.remainder_", "operator.imod")),
    (fmod, ("Tensor.fmod_",)),
    (pow, ("Tensor.pow_", "operator.ipow")),
    (neg, ("Tensor.neg_", "Tensor.negative_")),
    (abs, ("Tensor.abs_", "Tensor.absolute_")),
    (exp, ("Tensor.exp_",)),
    (log, ("Tensor.log_",)),
    (sqrt, ("Tensor.sqrt_",)),
    (rsqrt, ("Tensor.rsqrt_",)),
    (sigmoid, ("Tensor.sigmoid_",)),
    (tanh, ("Tensor.tanh_",)),
    (floor, ("Tensor.floor_",)),
    (ceil, ("Tensor.ceil_",)),
    (round, ("Tensor.round_",)),
    (trunc, ("Tensor.trunc_",)),
    (reciprocal, ("Tensor.reciprocal_",)),
    (addcmul, ("Tensor.addcmul_",)),
    (addcdiv, ("Tensor.addcdiv_",)),
    (lerp, ("Tensor.lerp_",)),
    (nan_to_num, ("Tensor.nan_to_num_",)),
]:
    register(*_names)(_make_inplace(_fn, _names[0]))

del _fn, _names
