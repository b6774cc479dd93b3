"""Special functions ONNX has no op for: the log-gamma function and its derivative
(lgamma, digamma), and the inverse error function (erfinv, at its end).

Both are computed in float64 and cast back to the input's float dtype (ints and bool go to
float32, as torch's), from the standard formulas:

- the argument is shifted up by `_SHIFT` with the recurrences
  lgamma(y) = lgamma(y + k) - sum_{i<k} log(y + i) and
  digamma(y) = digamma(y + k) - sum_{i<k} 1 / (y + i),
  where the asymptotic (Stirling) series below is accurate far beyond float32 (at y + k >= 8,
  the first omitted term is under 1e-11);
- below 1/2 the reflection formulas lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) and
  digamma(x) = digamma(1 - x) - pi cos(pi x) / sin(pi x) bring the argument above 1/2.

The poles follow torch: lgamma is +inf at 0 and the negative integers (and at +-inf);
digamma is -inf at +0, +inf at -0 (the division by sin's signed zero gives both), NaN at the
negative integers and at -inf.
"""

from __future__ import annotations

import math

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import check_out, float_dtype_for, require_value
from lowering.ops.registry import register

_SHIFT = 8
# Stirling's series of lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2), in powers 1/z^(2k-1).
_LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680)
# The series of digamma(z) - (log z - 1/(2z)), in powers 1/z^(2k).
_DIGAMMA_SERIES = (-1 / 12, 1 / 120, -1 / 252, 1 / 240, -1 / 132)


def _input(g: GraphBuilder, input, out, name: str) -> tuple[Value, torch.dtype]:
    check_out(g, out, name)
    x = require_value(g, input, name)
    if x.dtype.is_complex:
        raise g.error(f"{name} of a complex tensor is not supported (torch raises)")
    return g.cast(x, torch.float64), float_dtype_for(x.dtype)


def _c(g: GraphBuilder, value: float) -> Value:
    return g.const(value, torch.float64)


def _series(g: GraphBuilder, z: Value, coefficients, first_power: int, step: int) -> Value:
    """sum_k c_k / z^(first_power + step k)."""
    inverse = g.op("Reciprocal", z)
    term = inverse if first_power == 1 else g.op("Pow", inverse, _c(g, float(first_power)))
    square = g.op("Pow", inverse, _c(g, float(step)))
    total = None
    for coefficient in coefficients:
        part = g.op("Mul", term, _c(g, coefficient))
        total = part if total is None else g.op("Add", total, part)
        term = g.op("Mul", term, square)
    return total


def _shifted(g: GraphBuilder, y: Value, each) -> tuple[Value, Value]:
    """(y + _SHIFT, sum_{i<_SHIFT} each(y + i))."""
    total = None
    for i in range(_SHIFT):
        part = each(y if i == 0 else g.op("Add", y, _c(g, float(i))))
        total = part if total is None else g.op("Add", total, part)
    return g.op("Add", y, _c(g, float(_SHIFT))), total


def _reflected(g: GraphBuilder, x: Value) -> tuple[Value, Value]:
    """(x < 1/2, the argument at or above 1/2: 1 - x there, else x)."""
    low = g.op("Less", x, _c(g, 0.5))
    return low, g.op("Where", low, g.op("Sub", _c(g, 1.0), x), x)


def _negative_integer(g: GraphBuilder, x: Value) -> Value:
    """x <= 0 and integral (-inf too, which floor keeps); -0 and +0 included."""
    return g.op("And", g.op("LessOrEqual", x, _c(g, 0.0)), g.op("Equal", g.op("Floor", x), x))


@register("torch.lgamma", "Tensor.lgamma", "torch.special.gammaln")
def lgamma(g, input, *, out=None):
    """lgamma(Tensor self) -> Tensor"""
    x, dtype = _input(g, input, out, "lgamma")
    low, y = _reflected(g, x)
    z, logs = _shifted(g, y, lambda t: g.op("Log", t))
    stirling = g.op("Add", g.op("Sub", g.op("Mul", g.op("Sub", z, _c(g, 0.5)), g.op("Log", z)), z),
                    _c(g, 0.5 * math.log(2 * math.pi)))
    positive = g.op("Sub", g.op("Add", stirling, _series(g, z, _LGAMMA_SERIES, 1, 2)), logs)
    sine = g.op("Abs", g.op("Sin", g.op("Mul", x, _c(g, math.pi))))
    reflected = g.op("Sub", g.op("Sub", _c(g, math.log(math.pi)), g.op("Log", sine)), positive)
    result = g.op("Where", low, reflected, positive)
    pole = g.op("Or", _negative_integer(g, x), g.op("IsInf", x))
    result = g.op("Where", pole, _c(g, math.inf), result)
    return g.cast(result, dtype)


@register("torch.digamma", "Tensor.digamma", "torch.special.digamma", "torch.special.psi")
def digamma(g, input, *, out=None):
    """digamma(Tensor self) -> Tensor"""
    x, dtype = _input(g, input, out, "digamma")
    low, y = _reflected(g, x)
    z, reciprocals = _shifted(g, y, lambda t: g.op("Reciprocal", t))
    asymptotic = g.op("Sub", g.op("Log", z), g.op("Div", _c(g, 0.5), z))
    positive = g.op("Sub", g.op("Add", asymptotic, _series(g, z, _DIGAMMA_SERIES, 2, 2)), reciprocals)
    angle = g.op("Mul", x, _c(g, math.pi))  # pi / tan(pi x), with Cos / Sin: onnxruntime has no float64 Tan
    cotangent = g.op("Div", g.op("Mul", g.op("Cos", angle), _c(g, math.pi)), g.op("Sin", angle))
    result = g.op("Where", low, g.op("Sub", positive, cotangent), positive)
    # digamma(+-0) is the division by a signed zero above (sin keeps the sign); the
    # negative integers and -inf are NaN.
    negative_pole = g.op("And", _negative_integer(g, x), g.op("Less", x, _c(g, 0.0)))
    result = g.op("Where", negative_pole, _c(g, math.nan), result)
    return g.cast(result, dtype)


# Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing Gems,
# 2011): a polynomial in w = -log(1 - x^2), in two pieces split at w = 5.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(g: GraphBuilder, w: Value, coefficients) -> Value:
    p = _c(g, coefficients[0])
    for c in coefficients[1:]:
        p = g.op("Add", g.op("Mul", p, w), _c(g, c))
    return p


@register("torch.erfinv", "Tensor.erfinv", "torch.special.erfinv")
def erfinv(g, input, *, out=None):
    """erfinv(Tensor self) -> Tensor

    Giles' approximation, a relative error near 1e-7 (float32's; a float64 input gets no
    better: a Newton step would need erf in float64, which onnxruntime lacks). +-inf at
    +-1, NaN outside [-1, 1], as torch."""
    x, dtype = _input(g, input, out, "erfinv")
    w = g.op("Neg", g.op("Log", g.op("Mul", g.op("Sub", _c(g, 1.0), x), g.op("Add", _c(g, 1.0), x))))
    central = _horner(g, g.op("Sub", w, _c(g, 2.5)), _ERFINV_CENTRAL)
    tail = _horner(g, g.op("Sub", g.op("Sqrt", w), _c(g, 3.0)), _ERFINV_TAIL)
    y = g.op("Mul", g.op("Where", g.op("Less", w, _c(g, 5.0)), central, tail), x)
    edge = g.op("Equal", g.op("Abs", x), _c(g, 1.0))
    y = g.op("Where", edge, g.op("Mul", x, _c(g, math.inf)), y)
    return g.cast(y, dtype)
