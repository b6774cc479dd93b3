"""Activation functions (``torch.*``, ``Tensor.*`` and ``F.*`` forms).

Where ONNX has the op with torch's exact definition it is used (Relu, LeakyRelu, Elu,
Selu, Celu, HardSigmoid, HardSwish, Softsign, PRelu; Gelu from opset 20, Mish from
opset 18); otherwise the torch formula is spelled out, in its numerically stable form
(softplus's ``threshold``, logsigmoid).  ``inplace=True`` only changes aliasing, which
the interpreter handles by rebinding, so it is accepted.  The ``nn`` module classes
(``nn.ReLU`` ...) are lowered in the modules family on top of these.
"""

from __future__ import annotations

import math

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import as_float, normalize_dim, require_value, where
from lowering.ops.registry import register


def _float_input(g: GraphBuilder, input, name: str) -> Value:
    x = require_value(g, input, name)
    if not is_float(x.dtype):
        raise g.error(f"{name} takes floating point tensors, got {x.dtype} (torch raises)")
    return x


def _c(g: GraphBuilder, value: float, x: Value) -> Value:
    return g.const(value, x.dtype)


@register("torch.relu", "Tensor.relu", "torch.nn.functional.relu", "torch.relu_", "Tensor.relu_", "torch.nn.functional.relu_")
def relu(g, input, inplace=False):
    """relu(Tensor self) -> Tensor"""
    x = require_value(g, input, "relu")
    if is_bool(x.dtype):
        raise g.error("relu does not take bool tensors (torch raises)")
    return g.op("Relu", x)


@register("torch.nn.functional.relu6")
def relu6(g, input, inplace=False):
    """relu6(Tensor input, bool inplace=False) -> Tensor"""
    x = require_value(g, input, "relu6")
    if is_bool(x.dtype):
        raise g.error("relu6 does not take bool tensors")
    return g.op("Clip", x, g.const(0, x.dtype), g.const(6, x.dtype))


@register("torch.nn.functional.leaky_relu", "torch.nn.functional.leaky_relu_")
def leaky_relu(g, input, negative_slope=0.01, inplace=False):
    """leaky_relu(Tensor input, float negative_slope=0.01, bool inplace=False) -> Tensor"""
    return g.op("LeakyRelu", _float_input(g, input, "leaky_relu"), alpha=float(negative_slope))


@register("torch.nn.functional.elu", "torch.nn.functional.elu_")
def elu(g, input, alpha=1.0, inplace=False):
    """elu(Tensor input, float alpha=1.0, bool inplace=False) -> Tensor"""
    return g.op("Elu", _float_input(g, input, "elu"), alpha=float(alpha))


@register("torch.selu", "torch.nn.functional.selu", "torch.selu_", "torch.nn.functional.selu_")
def selu(g, input, inplace=False):
    """selu(Tensor self) -> Tensor"""
    return g.op("Selu", _float_input(g, input, "selu"))


@register("torch.celu", "torch.nn.functional.celu", "torch.celu_", "torch.nn.functional.celu_")
def celu(g, input, alpha=1.0, inplace=False):
    """celu(Tensor self, Scalar alpha=1.0) -> Tensor"""
    x = _float_input(g, input, "celu")
    if x.dtype != torch.float32:
        # ONNX Celu is float32 only.
        pos = g.op("Relu", x)
        neg = g.op("Mul", _c(g, alpha, x), g.op("Sub", g.op("Exp", g.op("Div", x, _c(g, alpha, x))), _c(g, 1.0, x)))
        return g.op("Add", pos, g.op("Min", neg, _c(g, 0.0, x)))
    return g.op("Celu", x, alpha=float(alpha))


@register("torch.nn.functional.gelu", opsets=(17, 19))
def gelu(g, input, approximate="none"):
    """gelu(Tensor self, *, str approximate='none') -> Tensor"""
    x = _float_input(g, input, "gelu")
    half = g.op("Mul", x, _c(g, 0.5, x))
    if approximate == "none":
        inner = g.op("Erf", g.op("Mul", x, _c(g, 1.0 / math.sqrt(2.0), x)))
    elif approximate == "tanh":
        cube = g.op("Mul", g.op("Mul", x, x), x)
        arg = g.op("Mul", _c(g, math.sqrt(2.0 / math.pi), x), g.op("Add", x, g.op("Mul", cube, _c(g, 0.044715, x))))
        inner = g.op("Tanh", arg)
    else:
        raise g.error(f"gelu: unknown approximate={approximate!r}")
    return g.op("Mul", half, g.op("Add", inner, _c(g, 1.0, x)))


@register("torch.nn.functional.gelu", opsets=(20, 23))
def gelu_20(g, input, approximate="none"):
    """gelu(Tensor self, *, str approximate='none') -> Tensor  (ONNX Gelu, opset 20)"""
    x = _float_input(g, input, "gelu")
    if approximate not in ("none", "tanh"):
        raise g.error(f"gelu: unknown approximate={approximate!r}")
    return g.op("Gelu", x, approximate=approximate)


@register("torch.nn.functional.silu")
def silu(g, input, inplace=False):
    """silu(Tensor input, bool inplace=False) -> Tensor"""
    x = _float_input(g, input, "silu")
    return g.op("Mul", x, g.op("Sigmoid", x))


@register("torch.nn.functional.mish", opsets=(17, 17))
def mish(g, input, inplace=False):
    """mish(Tensor input, bool inplace=False) -> Tensor"""
    x = _float_input(g, input, "mish")
    return g.op("Mul", x, g.op("Tanh", g.op("Softplus", x)))


@register("torch.nn.functional.mish", opsets=(18, 23))
def mish_18(g, input, inplace=False):
    """mish(Tensor input, bool inplace=False) -> Tensor  (ONNX Mish, opset 18)"""
    return g.op("Mish", _float_input(g, input, "mish"))


@register("torch.nn.functional.hardswish")
def hardswish(g, input, inplace=False):
    """hardswish(Tensor input, bool inplace=False) -> Tensor"""
    return g.op("HardSwish", _float_input(g, input, "hardswish"))


@register("torch.nn.functional.hardsigmoid")
def hardsigmoid(g, input, inplace=False):
    """hardsigmoid(Tensor input, bool inplace=False) -> Tensor"""
    return g.op("HardSigmoid", _float_input(g, input, "hardsigmoid"), alpha=1.0 / 6.0, beta=0.5)


@register("torch.nn.functional.hardtanh", "torch.nn.functional.hardtanh_")
def hardtanh(g, input, min_val=-1.0, max_val=1.0, inplace=False):
    """hardtanh(Tensor input, float min_val=-1.0, float max_val=1.0, bool inplace=False) -> Tensor"""
    x = require_value(g, input, "hardtanh")
    if is_bool(x.dtype):
        raise g.error("hardtanh does not take bool tensors")
    if not is_float(x.dtype) and (isinstance(min_val, float) or isinstance(max_val, float)):
        min_val, max_val = int(min_val), int(max_val)
    return g.op("Clip", x, g.const(min_val, x.dtype), g.const(max_val, x.dtype))


@register("torch.nn.functional.softplus")
def softplus(g, input, beta=1.0, threshold=20.0):
    """softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor"""
    x = _float_input(g, input, "softplus")
    bx = x if beta == 1 else g.op("Mul", x, _c(g, beta, x))
    soft = g.op("Softplus", bx)
    if beta != 1:
        soft = g.op("Div", soft, _c(g, beta, x))
    return g.op("Where", g.op("Greater", bx, _c(g, threshold, x)), x, soft)


@register("torch.nn.functional.softsign")
def softsign(g, input):
    """softsign(Tensor input) -> Tensor  (integers give float32)"""
    return g.op("Softsign", as_float(g, require_value(g, input, "softsign")))


@register("torch.nn.functional.tanhshrink")
def tanhshrink(g, input):
    """tanhshrink(Tensor input) -> Tensor  (integers give float32)"""
    x = as_float(g, require_value(g, input, "tanhshrink"))
    return g.op("Sub", x, g.op("Tanh", x))


@register("torch.nn.functional.logsigmoid")
def logsigmoid(g, input):
    """log_sigmoid(Tensor self) -> Tensor  (min(x, 0) - log1p(exp(-|x|)))"""
    x = _float_input(g, input, "logsigmoid")
    tail = g.op("Log", g.op("Add", _c(g, 1.0, x), g.op("Exp", g.op("Neg", g.op("Abs", x)))))
    return g.op("Sub", g.op("Min", x, _c(g, 0.0, x)), tail)


@register("torch.prelu", "torch.nn.functional.prelu")
def prelu(g, input, weight):
    """prelu(Tensor self, Tensor weight) -> Tensor  (weight along dim 1)"""
    x = _float_input(g, input, "prelu")
    w = require_value(g, weight, "prelu", "weight")
    if w.dtype != x.dtype:
        raise g.error("prelu: weight and input dtypes differ")
    if x.rank is None or w.rank not in (0, 1):
        raise g.error("prelu needs an input of known rank and a 0-d or 1-d weight")
    if w.rank == 0:
        pass
    elif x.rank == 0:
        w = g.op("Reshape", w, g.const(torch.zeros(0, dtype=torch.int64)))
    elif x.rank >= 2:
        w = g.op("Reshape", w, g.const([-1] + [1] * (x.rank - 2), torch.int64))
    return g.op("PRelu", x, w)


@register("torch.nn.functional.rrelu", "torch.nn.functional.rrelu_", "torch.rrelu")
def rrelu(g, input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """rrelu(Tensor input, float lower=1/8, float upper=1/3, bool training=False, bool inplace=False) -> Tensor"""
    if training:
        raise g.error("rrelu in training mode draws random slopes", hint="call model.eval() before export")
    return g.op("LeakyRelu", _float_input(g, input, "rrelu"), alpha=float((lower + upper) / 2))


@register("torch.nn.functional.glu")
def glu(g, input, dim=-1):
    """glu(Tensor self, int dim=-1) -> Tensor  (first half * sigmoid(second half))"""
    x = _float_input(g, input, "glu")
    d = normalize_dim(g, dim, x.rank, "glu")
    if x.rank == 0:
        raise g.error("glu does not support 0-d tensors")
    n = g.size(x, d)
    if isinstance(n, int):
        if n % 2:
            raise g.error(f"glu: halving dimension must be even, but dimension {d} is size {n}")
        half: int | Value = n // 2
        half_v = g.const([half], torch.int64)
    else:
        half_v = g.unsqueeze(g.op("Div", n, g.const(2, torch.int64)), [0])
    axes = g.const([d], torch.int64)
    a = g.op("Slice", x, g.const([0], torch.int64), half_v, axes)
    b = g.op("Slice", x, half_v, g.const([2**62], torch.int64), axes)
    return g.op("Mul", a, g.op("Sigmoid", b))


@register("torch.threshold", "torch.nn.functional.threshold", "torch.threshold_", "torch.nn.functional.threshold_")
def threshold(g, input, threshold, value, inplace=False):
    """threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor"""
    x = require_value(g, input, "threshold")
    if is_bool(x.dtype):
        raise g.error("threshold does not take bool tensors")
    # torch converts threshold and value to the input dtype first.
    keep = g.op("Greater", x, g.const(torch.tensor(threshold).to(x.dtype)))
    return where(g, keep, x, g.const(torch.tensor(value).to(x.dtype)))


@register("torch.nn.functional.hardshrink", "torch.hardshrink", "Tensor.hardshrink")
def hardshrink(g, input, lambd=0.5):
    """hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor"""
    x = _float_input(g, input, "hardshrink")
    keep = g.op("Greater", g.op("Abs", x), _c(g, lambd, x))
    return g.op("Where", keep, x, _c(g, 0.0, x))


@register("torch.nn.functional.softshrink")
def softshrink(g, input, lambd=0.5):
    """softshrink(Tensor self, Scalar lambd=0.5) -> Tensor"""
    x = _float_input(g, input, "softshrink")
    lam = _c(g, lambd, x)
    up = g.op("Where", g.op("Greater", x, lam), g.op("Sub", x, lam), _c(g, 0.0, x))
    return g.op("Where", g.op("Less", x, g.op("Neg", lam)), g.op("Add", x, lam), up)
