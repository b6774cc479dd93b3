"""Elementwise unary functions: abs, exp / log, sqrt, trigonometry, sigmoid, rounding, ...

dtype rules follow torch: unary "float" functions (exp, sqrt, sin, sigmoid, ...) turn
int and bool inputs into float32.
"""

from __future__ import annotations

import builtins
import math

import torch

from lowering.graph import is_bool, is_float
from lowering.ops._common import as_float, check_out, require_value
from lowering.ops._elementwise_common import _const_like, _float_unary, _negative_sign, _no_bool, _trunc
from lowering.ops.registry import register


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

