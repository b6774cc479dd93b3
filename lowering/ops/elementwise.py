"""Elementwise math: unary functions, binary arithmetic and the Python operators on them.

dtype rules follow torch: unary "float" functions (exp, sqrt, sin, sigmoid, ...) turn
int and bool inputs into float32; binary ops promote with ``torch.result_type`` (Python
scalars on either side); true division of integers gives float32; ``//`` and
``rounding_mode`` keep integers integral; in-place forms (``add_``, ``+=``) keep the
dtype of ``self`` and refuse what torch refuses (an int tensor ``+= 0.5``).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import as_float, check_out, float_dtype_for, require_value
from lowering.ops.registry import register

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


# ---------------------------------------------------------------------------- unary


@register("torch.abs", "Tensor.abs", "torch.absolute", "Tensor.absolute", "operator.abs")
def abs(g, input, *, out=None):
    """abs(Tensor self) -> Tensor"""
    check_out(g, out, "abs")
    x = require_value(g, input, "abs")
    _no_bool(g, x, "abs")
    return g.op("Abs", x)


@register("torch.neg", "Tensor.neg", "torch.negative", "Tensor.negative", "operator.neg")
def neg(g, input, *, out=None):
    """neg(Tensor self) -> Tensor"""
    check_out(g, out, "neg")
    x = require_value(g, input, "neg")
    _no_bool(g, x, "neg")
    return g.op("Neg", x)


@register("torch.positive", "Tensor.positive", "operator.pos")
def positive(g, input):
    """positive(Tensor(a) self) -> Tensor(a)"""
    x = require_value(g, input, "positive")
    _no_bool(g, x, "positive")
    return x


@register("torch.exp", "Tensor.exp")
def exp(g, input, *, out=None):
    """exp(Tensor self) -> Tensor"""
    return _float_unary(g, "Exp", input, out, "exp")


@register("torch.exp2", "Tensor.exp2", "torch.special.exp2")
def exp2(g, input, *, out=None):
    """exp2(Tensor self) -> Tensor"""
    check_out(g, out, "exp2")
    x = as_float(g, require_value(g, input, "exp2"))
    return g.op("Pow", g.const(2.0, x.dtype), x)


@register("torch.expm1", "Tensor.expm1", "torch.special.expm1")
def expm1(g, input, *, out=None):
    """expm1(Tensor self) -> Tensor"""
    x = _float_unary(g, "Exp", input, out, "expm1")
    return g.op("Sub", x, _const_like(g, 1.0, x))


@register("torch.log", "Tensor.log")
def log(g, input, *, out=None):
    """log(Tensor self) -> Tensor"""
    return _float_unary(g, "Log", input, out, "log")


@register("torch.log2", "Tensor.log2")
def log2(g, input, *, out=None):
    """log2(Tensor self) -> Tensor"""
    y = _float_unary(g, "Log", input, out, "log2")
    return g.op("Div", y, _const_like(g, math.log(2.0), y))


@register("torch.log10", "Tensor.log10")
def log10(g, input, *, out=None):
    """log10(Tensor self) -> Tensor"""
    y = _float_unary(g, "Log", input, out, "log10")
    return g.op("Div", y, _const_like(g, math.log(10.0), y))


@register("torch.log1p", "Tensor.log1p", "torch.special.log1p")
def log1p(g, input, *, out=None):
    """log1p(Tensor self) -> Tensor"""
    check_out(g, out, "log1p")
    x = as_float(g, require_value(g, input, "log1p"))
    return g.op("Log", g.op("Add", x, _const_like(g, 1.0, x)))


@register("torch.sqrt", "Tensor.sqrt")
def sqrt(g, input, *, out=None):
    """sqrt(Tensor self) -> Tensor"""
    return _float_unary(g, "Sqrt", input, out, "sqrt")


@register("torch.rsqrt", "Tensor.rsqrt")
def rsqrt(g, input, *, out=None):
    """rsqrt(Tensor self) -> Tensor"""
    return g.op("Reciprocal", _float_unary(g, "Sqrt", input, out, "rsqrt"))


@register("torch.reciprocal", "Tensor.reciprocal")
def reciprocal(g, input, *, out=None):
    """reciprocal(Tensor self) -> Tensor"""
    return _float_unary(g, "Reciprocal", input, out, "reciprocal")


@register("torch.sin", "Tensor.sin")
def sin(g, input, *, out=None):
    """sin(Tensor self) -> Tensor"""
    return _float_unary(g, "Sin", input, out, "sin")


@register("torch.cos", "Tensor.cos")
def cos(g, input, *, out=None):
    """cos(Tensor self) -> Tensor"""
    return _float_unary(g, "Cos", input, out, "cos")


@register("torch.tan", "Tensor.tan")
def tan(g, input, *, out=None):
    """tan(Tensor self) -> Tensor"""
    return _float_unary(g, "Tan", input, out, "tan")


@register("torch.asin", "Tensor.asin", "torch.arcsin", "Tensor.arcsin")
def asin(g, input, *, out=None):
    """asin(Tensor self) -> Tensor"""
    return _float_unary(g, "Asin", input, out, "asin")


@register("torch.acos", "Tensor.acos", "torch.arccos", "Tensor.arccos")
def acos(g, input, *, out=None):
    """acos(Tensor self) -> Tensor"""
    return _float_unary(g, "Acos", input, out, "acos")


@register("torch.atan", "Tensor.atan", "torch.arctan", "Tensor.arctan")
def atan(g, input, *, out=None):
    """atan(Tensor self) -> Tensor"""
    return _float_unary(g, "Atan", input, out, "atan")


@register("torch.sinh", "Tensor.sinh")
def sinh(g, input, *, out=None):
    """sinh(Tensor self) -> Tensor"""
    return _float_unary(g, "Sinh", input, out, "sinh")


@register("torch.cosh", "Tensor.cosh")
def cosh(g, input, *, out=None):
    """cosh(Tensor self) -> Tensor"""
    return _float_unary(g, "Cosh", input, out, "cosh")


@register("torch.tanh", "Tensor.tanh", "torch.nn.functional.tanh")
def tanh(g, input, *, out=None):
    """tanh(Tensor self) -> Tensor"""
    return _float_unary(g, "Tanh", input, out, "tanh")


@register("torch.asinh", "Tensor.asinh", "torch.arcsinh", "Tensor.arcsinh")
def asinh(g, input, *, out=None):
    """asinh(Tensor self) -> Tensor"""
    return _float_unary(g, "Asinh", input, out, "asinh")


@register("torch.acosh", "Tensor.acosh", "torch.arccosh", "Tensor.arccosh")
def acosh(g, input, *, out=None):
    """acosh(Tensor self) -> Tensor"""
    return _float_unary(g, "Acosh", input, out, "acosh")


@register("torch.atanh", "Tensor.atanh", "torch.arctanh", "Tensor.arctanh")
def atanh(g, input, *, out=None):
    """atanh(Tensor self) -> Tensor"""
    return _float_unary(g, "Atanh", input, out, "atanh")


@register("torch.sigmoid", "Tensor.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit")
def sigmoid(g, input, *, out=None):
    """sigmoid(Tensor self) -> Tensor"""
    return _float_unary(g, "Sigmoid", input, out, "sigmoid")


@register("torch.erf", "Tensor.erf", "torch.special.erf")
def erf(g, input, *, out=None):
    """erf(Tensor self) -> Tensor"""
    return _float_unary(g, "Erf", input, out, "erf")


@register("torch.erfc", "Tensor.erfc", "torch.special.erfc")
def erfc(g, input, *, out=None):
    """erfc(Tensor self) -> Tensor"""
    y = _float_unary(g, "Erf", input, out, "erfc")
    return g.op("Sub", _const_like(g, 1.0, y), y)


@register("torch.floor", "Tensor.floor")
def floor(g, input, *, out=None):
    """floor(Tensor self) -> Tensor  (integers unchanged)"""
    check_out(g, out, "floor")
    x = require_value(g, input, "floor")
    _no_bool(g, x, "floor")
    return g.op("Floor", x) if is_float(x.dtype) else x


@register("torch.ceil", "Tensor.ceil")
def ceil(g, input, *, out=None):
    """ceil(Tensor self) -> Tensor  (integers unchanged)"""
    check_out(g, out, "ceil")
    x = require_value(g, input, "ceil")
    _no_bool(g, x, "ceil")
    return g.op("Ceil", x) if is_float(x.dtype) else x


@register("torch.trunc", "Tensor.trunc", "torch.fix", "Tensor.fix")
def trunc(g, input, *, out=None):
    """trunc(Tensor self) -> Tensor  (round toward zero)"""
    check_out(g, out, "trunc")
    x = require_value(g, input, "trunc")
    _no_bool(g, x, "trunc")
    return _trunc(g, x)


@register("torch.frac", "Tensor.frac")
def frac(g, input, *, out=None):
    """frac(Tensor self) -> Tensor  (self - trunc(self); floats only)"""
    check_out(g, out, "frac")
    x = require_value(g, input, "frac")
    if not is_float(x.dtype):
        raise g.error(f"torch.frac takes floating point tensors, not {x.dtype}")
    return g.op("Sub", x, _trunc(g, x))


@register("torch.round", "Tensor.round", "torch.special.round")
def round(g, input, *, decimals=0, out=None):
    """round(Tensor self, *, int decimals=0) -> Tensor  (half to even, as torch)"""
    check_out(g, out, "round")
    x = require_value(g, input, "round")
    _no_bool(g, x, "round")
    if not is_float(x.dtype):
        return x
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise g.error("round: decimals must be a Python int")
    if decimals == 0:
        return g.op("Round", x)
    # torch: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for d < 0.
    ten_pow = g.const(10.0 ** builtins.abs(decimals), x.dtype)
    if decimals > 0:
        return g.op("Div", g.op("Round", g.op("Mul", x, ten_pow)), ten_pow)
    return g.op("Mul", g.op("Round", g.op("Div", x, ten_pow)), ten_pow)


@register("torch.sign", "Tensor.sign", "torch.sgn", "Tensor.sgn")
def sign(g, input, *, out=None):
    """sign(Tensor self) -> Tensor  (bool stays bool)"""
    check_out(g, out, "sign")
    x = require_value(g, input, "sign")
    if is_bool(x.dtype):
        return x
    if x.dtype.is_complex:
        raise g.error("sgn of a complex tensor is not supported")
    return g.op("Sign", x)


@register("torch.signbit", "Tensor.signbit")
def signbit(g, input, *, out=None):
    """signbit(Tensor self) -> Tensor  (bool; -0.0 counts as positive here)"""
    check_out(g, out, "signbit")
    x = require_value(g, input, "signbit")
    if is_bool(x.dtype):
        return g.op("Xor", x, x)
    if is_float(x.dtype):
        return _negative_sign(g, x)
    return g.op("Less", x, g.const(0, x.dtype))


def _negative_sign(g: GraphBuilder, x: Value) -> Value:
    """x < 0, or x is -0.0 (1/x is -inf).  ONNX cannot read the sign bit of a NaN: NaN
    counts as positive here (torch reads the bit)."""
    zero = g.const(0.0, x.dtype)
    neg_zero = g.op("And", g.op("Equal", x, zero), g.op("Less", g.op("Reciprocal", x), zero))
    return g.op("Or", g.op("Less", x, zero), neg_zero)


@register("torch.square", "Tensor.square")
def square(g, input, *, out=None):
    """square(Tensor self) -> Tensor  (bool -> int64)"""
    check_out(g, out, "square")
    x = require_value(g, input, "square")
    if is_bool(x.dtype):
        x = g.cast(x, torch.int64)
    return g.op("Mul", x, x)


@register("torch.deg2rad", "Tensor.deg2rad")
def deg2rad(g, input, *, out=None):
    """deg2rad(Tensor self) -> Tensor"""
    check_out(g, out, "deg2rad")
    x = as_float(g, require_value(g, input, "deg2rad"))
    return g.op("Mul", x, g.const(math.pi / 180.0, x.dtype))


@register("torch.rad2deg", "Tensor.rad2deg")
def rad2deg(g, input, *, out=None):
    """rad2deg(Tensor self) -> Tensor"""
    check_out(g, out, "rad2deg")
    x = as_float(g, require_value(g, input, "rad2deg"))
    return g.op("Mul", x, g.const(180.0 / math.pi, x.dtype))


@register("torch.logit", "Tensor.logit", "torch.special.logit")
def logit(g, input, eps=None, *, out=None):
    """logit(Tensor self, float? eps=None) -> Tensor"""
    check_out(g, out, "logit")
    x = as_float(g, require_value(g, input, "logit"))
    if eps is not None:
        x = g.op("Clip", x, g.const(eps, x.dtype), g.const(1.0 - eps, x.dtype))
    return g.op("Log", g.op("Div", x, g.op("Sub", _const_like(g, 1.0, x), x)))


@register("torch.nan_to_num", "Tensor.nan_to_num")
def nan_to_num(g, input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"""
    check_out(g, out, "nan_to_num")
    x = require_value(g, input, "nan_to_num")
    if not is_float(x.dtype):
        return x
    info = torch.finfo(x.dtype)
    nan = 0.0 if nan is None else nan
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    y = g.op("Where", g.op("IsNaN", x), g.const(nan, x.dtype), x)
    y = g.op("Where", g.op("IsInf", x, detect_negative=0), g.const(posinf, x.dtype), y)
    return g.op("Where", g.op("IsInf", x, detect_positive=0), g.const(neginf, x.dtype), y)


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
