"""``torch.nn`` module dispatch and the modules that are one ``F.*`` call: containers
(``Sequential``, ``Identity``), the activation modules, ``Linear``/``Bilinear`` (and
``F.bilinear``), ``Flatten``/``Unflatten`` and the padding modules.

A module lowering reads its configuration from the live module (``mod.module``) and its
parameters as initializers named after their path (``mod.param("weight")``), then
lowers exactly what the module's ``forward`` calls: ``nn.Conv2d`` is ``F.conv2d`` with
the module's stride/padding/..., ``nn.GELU`` is the ``F.gelu`` lowering registered for
the target opset.  The other ``torch.nn`` families: ``convolution``, ``pooling``,
``normalization``, ``resize``, ``attention``, ``dropout``, ``distance``.
"""

from __future__ import annotations

from typing import Any

from lowering.graph import GraphBuilder
from lowering.ops._common import require_value
from lowering.ops._nn_common import _call, _child, _float_input, _refuse_training
from lowering.ops.indexing import pad as _f_pad
from lowering.ops.registry import ModuleCall, canonical_name, lookup, register
from lowering.ops.shape import dim_size, dims_of, flatten, known_rank, reshape, unflatten

# ---------------------------------------------------------------------------- module dispatch


def lower_module(g: GraphBuilder, mod: ModuleCall, *args: Any, **kwargs: Any) -> Any:
    """Lower one call of ``mod.module`` through the lowering registered for its class;
    NotImplemented when its class has none (the interpreter then lowers the module's
    own ``forward`` source)."""
    name = canonical_name(type(mod.module))
    fn = lookup(name, g.opset) if name is not None else None
    if fn is None:
        return NotImplemented
    return fn(g, mod, *args, **kwargs)


@register("torch.nn.Sequential")
def sequential(g, mod: ModuleCall, input):
    """Sequential.forward(input): each child in order"""
    x = input
    for name, child in mod.module.named_children():
        out = lower_module(g, _child(mod, name, child), x)
        if out is NotImplemented:
            raise g.error(
                f"{type(child).__module__}.{type(child).__qualname__} (child {mod.name(name)!r} of a Sequential) "
                "has no registered lowering",
                hint="register one with lowering.ops.register_lowering, or let the interpreter lower its forward",
            )
        x = out
    return x


@register("torch.nn.Identity")
def identity(g, mod: ModuleCall, input, *args, **kwargs):
    """Identity.forward(input) -> input"""
    return input


# ---------------------------------------------------------------------------- activation modules


def _activation(qualname: str, *attrs: str, fixed: dict | None = None):
    def lower(g, mod: ModuleCall, input):
        kwargs = {a: getattr(mod.module, a) for a in attrs}
        kwargs.update(fixed or {})
        return _call(g, qualname, input, **kwargs)

    return lower


_ACTIVATIONS: dict[str, tuple] = {
    "torch.nn.ReLU": ("torch.nn.functional.relu",),
    "torch.nn.ReLU6": ("torch.nn.functional.relu6",),
    "torch.nn.LeakyReLU": ("torch.nn.functional.leaky_relu", "negative_slope"),
    "torch.nn.ELU": ("torch.nn.functional.elu", "alpha"),
    "torch.nn.SELU": ("torch.nn.functional.selu",),
    "torch.nn.CELU": ("torch.nn.functional.celu", "alpha"),
    "torch.nn.GELU": ("torch.nn.functional.gelu", "approximate"),
    "torch.nn.SiLU": ("torch.nn.functional.silu",),
    "torch.nn.Mish": ("torch.nn.functional.mish",),
    "torch.nn.Hardswish": ("torch.nn.functional.hardswish",),
    "torch.nn.Hardsigmoid": ("torch.nn.functional.hardsigmoid",),
    "torch.nn.Hardtanh": ("torch.nn.functional.hardtanh", "min_val", "max_val"),
    "torch.nn.Softplus": ("torch.nn.functional.softplus", "beta", "threshold"),
    "torch.nn.Softsign": ("torch.nn.functional.softsign",),
    "torch.nn.Tanh": ("torch.tanh",),
    "torch.nn.Sigmoid": ("torch.sigmoid",),
    "torch.nn.Tanhshrink": ("torch.nn.functional.tanhshrink",),
    "torch.nn.LogSigmoid": ("torch.nn.functional.logsigmoid",),
    "torch.nn.GLU": ("torch.nn.functional.glu", "dim"),
    "torch.nn.Threshold": ("torch.nn.functional.threshold", "threshold", "value"),
    "torch.nn.Softmax": ("torch.nn.functional.softmax", "dim"),
    "torch.nn.LogSoftmax": ("torch.nn.functional.log_softmax", "dim"),
    "torch.nn.Softmin": ("torch.nn.functional.softmin", "dim"),
    "torch.nn.Hardshrink": ("torch.nn.functional.hardshrink", "lambd"),
    "torch.nn.Softshrink": ("torch.nn.functional.softshrink", "lambd"),
}

for _qual, (_fn, *_attrs) in _ACTIVATIONS.items():
    _lower = _activation(_fn, *_attrs)
    _lower.__name__ = _qual.rsplit(".", 1)[1].lower()
    _lower.__qualname__ = _lower.__name__
    _lower.__module__ = __name__
    _lower.__doc__ = f"{_qual.rsplit('.', 1)[1]}.forward(input) -> {_fn}(input{''.join(', ' + a for a in _attrs)})"
    register(_qual)(_lower)


@register("torch.nn.PReLU")
def prelu_module(g, mod: ModuleCall, input):
    """PReLU.forward(input) -> F.prelu(input, self.weight)"""
    return _call(g, "torch.nn.functional.prelu", input, mod.param("weight"))


@register("torch.nn.RReLU")
def rrelu_module(g, mod: ModuleCall, input):
    """RReLU.forward(input) -> F.rrelu(input, lower, upper, self.training)"""
    _refuse_training(g, mod, "RReLU draws random slopes")
    return _call(g, "torch.nn.functional.rrelu", input, mod.module.lower, mod.module.upper, False)


@register("torch.nn.Softmax2d")
def softmax2d(g, mod: ModuleCall, input):
    """Softmax2d.forward(input) -> softmax over dim -3 (3D or 4D input)"""
    x = require_value(g, input, "Softmax2d")
    if x.rank not in (3, 4):
        raise g.error(f"Softmax2d: expected a 3D or 4D input, got {x.rank}D (torch raises)")
    return _call(g, "torch.nn.functional.softmax", x, -3)


# ---------------------------------------------------------------------------- linear


@register("torch.nn.Linear")
def linear_module(g, mod: ModuleCall, input):
    """Linear.forward(input) -> F.linear(input, self.weight, self.bias)"""
    return _call(g, "torch.nn.functional.linear", input, mod.param("weight"), mod.param("bias"))


@register("torch.nn.functional.bilinear")
def bilinear(g, input1, input2, weight, bias=None):
    """bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor
    (y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o])"""
    x1 = _float_input(g, input1, "bilinear", "input1")
    x2 = _float_input(g, input2, "bilinear", "input2")
    w = require_value(g, weight, "bilinear", "weight")
    if w.rank != 3:
        raise g.error("bilinear: weight must be 3-D (torch raises)")
    r = known_rank(g, x1, "bilinear")
    if r == 0 or x2.rank != r:
        raise g.error("bilinear: input1 and input2 must have the same number of dimensions (at least 1)")
    o_dim, i_dim, j_dim = (dim_size(g, w, k) for k in range(3))
    wt = g.op("Transpose", w, perm=[1, 0, 2])  # (I, O, J)
    w2 = reshape(g, wt, [i_dim, -1])
    t = g.op("MatMul", x1, w2)  # (..., O*J)
    t = reshape(g, t, dims_of(g, x1, 0, r - 1) + [o_dim, j_dim])
    y = g.reduce("ReduceSum", g.op("Mul", t, g.unsqueeze(x2, [r - 1])), [r], keepdims=False)
    if bias is not None:
        y = g.op("Add", y, require_value(g, bias, "bilinear", "bias"))
    return y


@register("torch.nn.Bilinear")
def bilinear_module(g, mod: ModuleCall, input1, input2):
    """Bilinear.forward(input1, input2) -> F.bilinear(input1, input2, self.weight, self.bias)"""
    return bilinear(g, input1, input2, mod.param("weight"), mod.param("bias"))


# ---------------------------------------------------------------------------- flatten / pad modules


@register("torch.nn.Flatten")
def flatten_module(g, mod: ModuleCall, input):
    """Flatten.forward(input) -> input.flatten(start_dim, end_dim)"""
    return flatten(g, input, mod.module.start_dim, mod.module.end_dim)


@register("torch.nn.Unflatten")
def unflatten_module(g, mod: ModuleCall, input):
    """Unflatten.forward(input) -> input.unflatten(dim, unflattened_size)"""
    return unflatten(g, input, mod.module.dim, list(mod.module.unflattened_size))


def _pad_module(mode: str):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        value = getattr(m, "value", None) if mode == "constant" else None
        return _f_pad(g, input, list(m.padding), mode, value)

    lower.__doc__ = f"Pad module forward(input) -> F.pad(input, self.padding, {mode!r})"
    return lower


for _n in (1, 2, 3):
    register(f"torch.nn.ZeroPad{_n}d", f"torch.nn.ConstantPad{_n}d")(_pad_module("constant"))
    register(f"torch.nn.ReflectionPad{_n}d")(_pad_module("reflect"))
    register(f"torch.nn.ReplicationPad{_n}d")(_pad_module("replicate"))
    register(f"torch.nn.CircularPad{_n}d")(_pad_module("circular"))
