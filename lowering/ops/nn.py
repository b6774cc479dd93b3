"""``torch.nn`` modules and their ``F.*`` functional forms: convolutions, norms,
pooling, resizing, embeddings, dropout, attention, and the activation modules.

A module lowering reads its configuration from the live module (``mod.module``) and its
parameters as initializers named after their path (``mod.param("weight")``), then
lowers exactly what the module's ``forward`` calls: ``nn.Conv2d`` is ``F.conv2d`` with
the module's stride/padding/..., ``nn.GELU`` is the ``F.gelu`` lowering registered for
the target opset.  Function lowerings of other families are called through the registry
(``_call``), so opset variants and user overrides apply.

Policies:

* training mode is refused where it changes the result or mutates buffers (dropout with
  ``p > 0``, batch norm updating running statistics, ...): the message says to call
  ``model.eval()``.  ``F.*`` forms with ``training=False`` (or no running statistics to
  update) are lowered.
* norms are spelled with ONNX's own ops where their semantics are torch's
  (BatchNormalization, LayerNormalization, InstanceNormalization) and with primitive ops
  where they are not at every opset (GroupNorm: GroupNormalization changed meaning at
  opset 21; RMSNorm: only opset 23 has it).
* adaptive pooling to output size 1 is a Global*Pool; other sizes need a static input
  size that the output size divides (then the windows are a plain strided pool);
  anything else is refused.
* interpolate maps torch's coordinate rules onto Resize: nearest -> ``asymmetric`` +
  ``floor``, nearest-exact -> ``half_pixel`` + ``round_prefer_ceil``, linear modes ->
  ``align_corners`` or ``half_pixel``, bicubic with ``cubic_coeff_a=-0.75``.  A
  ``scale_factor`` that float32 cannot represent exactly is refused on a dynamic axis,
  since ONNX sizes the output with a float32 product and torch with a double one; so is
  one that leaves an axis's size unchanged (onnxruntime then copies that axis, torch
  still resamples it with ``1/scale``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import require_value
from lowering.ops.registry import ModuleCall, canonical_name, lookup, register
from lowering.ops.shape import (
    dim_size,
    dims_of,
    flatten,
    known_rank,
    prod_of_dims,
    normalize_axis,
    reshape,
    unflatten,
)
from lowering.ops.indexing import pad as _f_pad

# ---------------------------------------------------------------------------- helpers


def _call(g: GraphBuilder, qualname: str, *args: Any, **kwargs: Any) -> Any:
    """The registered lowering of ``qualname`` at the target opset, called."""
    fn = lookup(qualname, g.opset)
    if fn is None:
        raise g.error(f"{qualname} has no lowering at opset {g.opset}")
    return fn(g, *args, **kwargs)


def _float_input(g: GraphBuilder, x: Any, name: str, what: str = "input") -> Value:
    v = require_value(g, x, name, what)
    if not is_float(v.dtype):
        raise g.error(
            f"{name} of a {v.dtype} {what} is not supported: the ONNX op is defined for floating point only",
            hint=f"cast the {what} to float32 first",
        )
    return v


def _ntuple(g: GraphBuilder, v: Any, n: int, name: str, what: str) -> list[int]:
    if isinstance(v, (list, tuple, torch.Size)):
        items = list(v)
        if len(items) == 1:
            items = items * n
    else:
        items = [v] * n
    if len(items) != n:
        raise g.error(f"{name}: {what} must be an int or a tuple of {n} ints, got {v!r}")
    out = []
    for e in items:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)):
            raise g.error(f"{name}: {what} must be Python ints known at export time, got {v!r}")
        out.append(int(e))
    return out


def _batched(g: GraphBuilder, x: Value, nsp: int, name: str) -> tuple[Value, bool]:
    """``x`` with a batch dim (unbatched inputs get one), and whether it was added."""
    rank = known_rank(g, x, name)
    if rank == nsp + 2:
        return x, False
    if rank == nsp + 1:
        return g.unsqueeze(x, [0]), True
    raise g.error(f"{name}: expected a {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input, got {rank}D (torch raises)")


def _with_rank(v: Value, rank: int) -> Value:
    """``v`` with its rank recorded when ONNX inference could not give its shape (a
    Conv whose weight dims are symbolic, ...)."""
    return v if v.shape is not None else dataclasses.replace(v, shape=(None,) * rank)


def _unbatch(g: GraphBuilder, y: Value, added: bool) -> Value:
    return g.squeeze(y, [0]) if added else y


def _channels(x: Value) -> int | None:
    d = x.shape[1] if x.shape is not None and len(x.shape) > 1 else None
    return d if isinstance(d, int) else None


def _ones_like_channels(g: GraphBuilder, x: Value, value: float) -> Value:
    """A 1-d tensor of x.shape[1] entries filled with ``value`` (x's dtype)."""
    c = _channels(x)
    if c is not None:
        return g.const(torch.full((c,), value, dtype=x.dtype))
    from lowering.ops._common import fill

    return fill(g, g.op("Shape", x, start=1, end=2), value, x.dtype)


def _channel_view(g: GraphBuilder, v: Value, rank: int) -> Value:
    """A per-channel 1-d tensor shaped to broadcast against an (N, C, ...) tensor."""
    return reshape(g, v, [-1] + [1] * (rank - 2))


def _refuse_training(g: GraphBuilder, mod: ModuleCall, what: str) -> None:
    if mod.module.training:
        raise g.error(
            f"{type(mod.module).__name__} at {mod.path or '<root>'} is in training mode: {what}",
            hint="call model.eval() before exporting",
        )


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


def _child(mod: ModuleCall, name: str, child: torch.nn.Module) -> ModuleCall:
    return ModuleCall(child, mod.name(name), mod.graph)


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


# ---------------------------------------------------------------------------- convolutions


def _conv(g: GraphBuilder, name: str, nsp: int, input, weight, bias, stride, padding, dilation, groups) -> Value:
    x = _float_input(g, input, name)
    w = require_value(g, weight, name, "weight")
    if w.dtype != x.dtype:
        raise g.error(f"{name}: input ({x.dtype}) and weight ({w.dtype}) must have the same dtype (torch raises)")
    if w.rank != nsp + 2:
        raise g.error(f"{name}: expected a {nsp + 2}D weight, got {w.rank}D (torch raises)")
    x, added = _batched(g, x, nsp, name)
    strides = _ntuple(g, stride, nsp, name, "stride")
    dilations = _ntuple(g, dilation, nsp, name, "dilation")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise g.error(f"{name}: groups must be a positive Python int")
    if isinstance(padding, str):
        if padding == "valid":
            pads = [0] * (2 * nsp)
        elif padding == "same":
            if any(s != 1 for s in strides):
                raise g.error(f"{name}: padding='same' is not supported for strided convolutions (torch raises)")
            ks = w.shape[2:]
            if not all(isinstance(k, int) for k in ks):
                raise g.error(f"{name}: padding='same' needs a weight of static shape")
            total = [d * (k - 1) for d, k in zip(dilations, ks)]  # type: ignore[operator]
            pads = [t // 2 for t in total] + [t - t // 2 for t in total]
        else:
            raise g.error(f"{name}: invalid padding string {padding!r} (torch raises)")
    else:
        p = _ntuple(g, padding, nsp, name, "padding")
        pads = p + p
    b = None
    if bias is not None:
        b = g.cast(require_value(g, bias, name, "bias"), x.dtype)
    ks = w.shape[2:]
    kernel_shape = list(ks) if all(isinstance(k, int) for k in ks) else None
    y = g.op("Conv", x, w, b, strides=strides, pads=pads, dilations=dilations, group=groups, kernel_shape=kernel_shape)
    return _unbatch(g, _with_rank(y, nsp + 2), added)


@register("torch.nn.functional.conv1d")
def conv1d(g, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1]|str padding=0,
    SymInt[1] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv(g, "conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@register("torch.nn.functional.conv2d")
def conv2d(g, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2]|str padding=0,
    SymInt[2] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv(g, "conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@register("torch.nn.functional.conv3d")
def conv3d(g, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3]|str padding=0,
    SymInt[3] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv(g, "conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_module(nsp: int):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        if m.padding_mode != "zeros":
            raise g.error(
                f"{type(m).__name__}(padding_mode={m.padding_mode!r}) is not supported; only 'zeros' is",
                hint="pad explicitly with F.pad before a padding_mode='zeros' convolution",
            )
        return _conv(
            g, type(m).__name__, nsp, input, mod.param("weight"), mod.param("bias"), m.stride, m.padding, m.dilation, m.groups
        )

    lower.__name__ = f"conv{nsp}d_module"
    lower.__doc__ = f"Conv{nsp}d.forward(input) -> F.conv{nsp}d(input, self.weight, self.bias, ...)"
    return lower


register("torch.nn.Conv1d")(_conv_module(1))
register("torch.nn.Conv2d")(_conv_module(2))
register("torch.nn.Conv3d")(_conv_module(3))


def _conv_transpose(g: GraphBuilder, name: str, nsp: int, input, weight, bias, stride, padding, output_padding, groups, dilation) -> Value:
    x = _float_input(g, input, name)
    w = require_value(g, weight, name, "weight")
    if w.dtype != x.dtype:
        raise g.error(f"{name}: input ({x.dtype}) and weight ({w.dtype}) must have the same dtype (torch raises)")
    if w.rank != nsp + 2:
        raise g.error(f"{name}: expected a {nsp + 2}D weight, got {w.rank}D (torch raises)")
    if isinstance(padding, str):
        raise g.error(f"{name}: string padding is not supported for transposed convolutions (torch raises)")
    x, added = _batched(g, x, nsp, name)
    strides = _ntuple(g, stride, nsp, name, "stride")
    dilations = _ntuple(g, dilation, nsp, name, "dilation")
    p = _ntuple(g, padding, nsp, name, "padding")
    op = _ntuple(g, output_padding, nsp, name, "output_padding")
    for o, s, d in zip(op, strides, dilations):
        if o >= max(s, d):
            raise g.error(f"{name}: output padding must be smaller than either stride or dilation (torch raises)")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise g.error(f"{name}: groups must be a positive Python int")
    b = None if bias is None else g.cast(require_value(g, bias, name, "bias"), x.dtype)
    ks = w.shape[2:]
    kernel_shape = list(ks) if all(isinstance(k, int) for k in ks) else None
    # output_padding as asymmetric pads: torch's extra trailing rows are either cropped
    # rows of the full result (p >= op) or zeros beyond it (onnxruntime rejects
    # output_padding >= stride, which torch allows when the dilation is larger).
    pads_end = [max(pp - o, 0) for pp, o in zip(p, op)]
    extra = [max(o - pp, 0) for pp, o in zip(p, op)]
    y = g.op("ConvTranspose", x, w, None if any(extra) else b, strides=strides, pads=p + pads_end, dilations=dilations,
             group=groups, kernel_shape=kernel_shape)
    y = _with_rank(y, nsp + 2)
    if any(extra):
        y = g.op("Pad", y, g.const([0] * (nsp + 2) + [0, 0] + extra, torch.int64), g.const(0.0, y.dtype))
        if b is not None:  # the padded rows hold the bias alone, as in torch
            y = g.op("Add", y, _channel_view(g, b, nsp + 2))
    return _unbatch(g, y, added)


@register("torch.nn.functional.conv_transpose1d")
def conv_transpose1d(g, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0,
    SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] dilation=1) -> Tensor"""
    return _conv_transpose(g, "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


@register("torch.nn.functional.conv_transpose2d")
def conv_transpose2d(g, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0,
    SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor"""
    return _conv_transpose(g, "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation)


@register("torch.nn.functional.conv_transpose3d")
def conv_transpose3d(g, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0,
    SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) -> Tensor"""
    return _conv_transpose(g, "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


def _conv_transpose_module(nsp: int):
    def lower(g, mod: ModuleCall, input, output_size=None):
        m = mod.module
        if m.padding_mode != "zeros":
            raise g.error(f"{type(m).__name__}: only padding_mode='zeros' is supported (torch raises)")
        output_padding = m.output_padding
        if output_size is not None:
            x = require_value(g, input, type(m).__name__)
            static = x.static_shape
            if static is None or not all(isinstance(s, int) for s in output_size):
                raise g.error(
                    f"{type(m).__name__}(output_size=...) needs a static input shape and int sizes",
                    hint="pass output_padding in the module's constructor instead",
                )
            try:
                output_padding = m._output_padding(
                    torch.empty(static, device="meta"), list(output_size), m.stride, m.padding, m.kernel_size, nsp, m.dilation
                )
            except (ValueError, RuntimeError) as e:
                raise g.error(f"{type(m).__name__}: {e} (torch raises)") from None
        return _conv_transpose(
            g, type(m).__name__, nsp, input, mod.param("weight"), mod.param("bias"), m.stride, m.padding, output_padding,
            m.groups, m.dilation,
        )

    lower.__name__ = f"conv_transpose{nsp}d_module"
    lower.__doc__ = f"ConvTranspose{nsp}d.forward(input, output_size=None) -> F.conv_transpose{nsp}d(...)"
    return lower


register("torch.nn.ConvTranspose1d")(_conv_transpose_module(1))
register("torch.nn.ConvTranspose2d")(_conv_transpose_module(2))
register("torch.nn.ConvTranspose3d")(_conv_transpose_module(3))


@register("torch.nn.functional.unfold")
def unfold(g, input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
    (a grouped Conv with one-hot kernels: output channel c*kh*kw + i*kw + j)"""
    x = _float_input(g, input, "unfold")
    x, added = _batched(g, x, 2, "unfold")
    c = _channels(x)
    if c is None:
        raise g.error("unfold needs a static channel count")
    kh, kw = _ntuple(g, kernel_size, 2, "unfold", "kernel_size")
    eye = torch.eye(kh * kw, dtype=x.dtype).reshape(kh * kw, 1, kh, kw).repeat(c, 1, 1, 1)
    y = _conv(g, "unfold", 2, x, g.const(eye), None, stride, padding, dilation, c)
    y = reshape(g, y, dims_of(g, y, 0, 2) + [prod_of_dims(g, y, 2, 4)])
    return _unbatch(g, y, added)


@register("torch.nn.Unfold")
def unfold_module(g, mod: ModuleCall, input):
    """Unfold.forward(input) -> F.unfold(input, kernel_size, dilation, padding, stride)"""
    m = mod.module
    return unfold(g, input, m.kernel_size, m.dilation, m.padding, m.stride)


# ---------------------------------------------------------------------------- normalization


def _batch_stats_norm(g: GraphBuilder, x: Value, axes: list[int], eps: float) -> Value:
    mean = g.reduce("ReduceMean", x, axes, keepdims=True)
    centered = g.op("Sub", x, mean)
    var = g.reduce("ReduceMean", g.op("Mul", centered, centered), axes, keepdims=True)
    return g.op("Div", centered, g.op("Sqrt", g.op("Add", var, g.const(eps, x.dtype))))


def _affine(g: GraphBuilder, y: Value, weight: Value | None, bias: Value | None, rank: int) -> Value:
    if weight is not None:
        y = g.op("Mul", y, _channel_view(g, g.cast(weight, y.dtype), rank))
    if bias is not None:
        y = g.op("Add", y, _channel_view(g, g.cast(bias, y.dtype), rank))
    return y


@register("torch.nn.functional.batch_norm")
def batch_norm(g, input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05, *args):
    """batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? bias=None,
    bool training=False, float momentum=0.1, float eps=1e-05) -> Tensor"""
    x = _float_input(g, input, "batch_norm")
    rank = known_rank(g, x, "batch_norm")
    if rank < 2:
        raise g.error(f"batch_norm: expected at least a 2D input, got {rank}D (torch raises)")
    w = None if weight is None else require_value(g, weight, "batch_norm", "weight")
    b = None if bias is None else require_value(g, bias, "batch_norm", "bias")
    if training:
        if running_mean is not None or running_var is not None:
            raise g.error(
                "batch_norm(training=True) updates running_mean/running_var in place, which a graph cannot carry",
                hint="call model.eval() before exporting (or pass training=False)",
            )
        y = _batch_stats_norm(g, x, [0] + list(range(2, rank)), float(eps))
        return _affine(g, y, w, b, rank)
    if running_mean is None or running_var is None:
        raise g.error("batch_norm(training=False) needs running_mean and running_var (torch raises)")
    mean = g.cast(require_value(g, running_mean, "batch_norm", "running_mean"), x.dtype)
    var = g.cast(require_value(g, running_var, "batch_norm", "running_var"), x.dtype)
    scale = g.cast(w, x.dtype) if w is not None else _ones_like_channels(g, x, 1.0)
    shift = g.cast(b, x.dtype) if b is not None else _ones_like_channels(g, x, 0.0)
    return g.op("BatchNormalization", x, scale, shift, mean, var, epsilon=float(eps))


def _batch_norm_module(ranks: tuple[int, ...]):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        x = require_value(g, input, type(m).__name__)
        if x.rank not in ranks:
            raise g.error(f"{type(m).__name__}: expected a {' or '.join(f'{r}D' for r in ranks)} input, got {x.rank}D (torch raises)")
        _refuse_training(g, mod, "batch norm then normalizes with batch statistics and updates its running statistics")
        if m.running_mean is None:
            # track_running_stats=False: batch statistics even in eval mode.
            return batch_norm(g, x, None, None, mod.param("weight"), mod.param("bias"), True, 0.0, m.eps)
        return batch_norm(
            g, x, mod.param("running_mean"), mod.param("running_var"), mod.param("weight"), mod.param("bias"), False, 0.0, m.eps
        )

    lower.__doc__ = "BatchNorm.forward(input) -> F.batch_norm(input, running_mean, running_var, weight, bias, False, ...)"
    return lower


register("torch.nn.BatchNorm1d")(_batch_norm_module((2, 3)))
register("torch.nn.BatchNorm2d")(_batch_norm_module((4,)))
register("torch.nn.BatchNorm3d")(_batch_norm_module((5,)))


def _normalized_shape(g: GraphBuilder, shape: Any, name: str) -> list[int]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return [int(shape)]
    if isinstance(shape, (list, tuple, torch.Size)) and all(isinstance(s, (int, np.integer)) for s in shape):
        return [int(s) for s in shape]
    raise g.error(f"{name}: normalized_shape must be ints known at export time, got {shape!r}")


def _check_trailing(g: GraphBuilder, x: Value, shape: list[int], name: str) -> int:
    rank = known_rank(g, x, name)
    k = len(shape)
    if k == 0 or k > rank:
        raise g.error(f"{name}: normalized_shape {shape} does not fit an input of rank {rank} (torch raises)")
    for a, b in zip(x.shape[rank - k :], shape):
        if isinstance(a, int) and a != b:
            raise g.error(f"{name}: input shape {x.shape} does not end with normalized_shape {shape} (torch raises)")
    return rank


@register("torch.nn.functional.layer_norm")
def layer_norm(g, input, normalized_shape, weight=None, bias=None, eps=1e-05, *args):
    """layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None,
    float eps=1e-05) -> Tensor"""
    x = _float_input(g, input, "layer_norm")
    shape = _normalized_shape(g, normalized_shape, "layer_norm")
    _check_trailing(g, x, shape, "layer_norm")
    scale = g.cast(require_value(g, weight, "layer_norm", "weight"), x.dtype) if weight is not None else g.const(
        torch.ones(shape, dtype=x.dtype)
    )
    b = None if bias is None else g.cast(require_value(g, bias, "layer_norm", "bias"), x.dtype)
    return g.op("LayerNormalization", x, scale, b, axis=-len(shape), epsilon=float(eps))


@register("torch.nn.LayerNorm")
def layer_norm_module(g, mod: ModuleCall, input):
    """LayerNorm.forward(input) -> F.layer_norm(input, normalized_shape, weight, bias, eps)"""
    m = mod.module
    return layer_norm(g, input, list(m.normalized_shape), mod.param("weight"), mod.param("bias"), m.eps)


@register("torch.nn.functional.rms_norm")
def rms_norm(g, input, normalized_shape, weight=None, eps=None):
    """rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor"""
    x = _float_input(g, input, "rms_norm")
    shape = _normalized_shape(g, normalized_shape, "rms_norm")
    rank = _check_trailing(g, x, shape, "rms_norm")
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    axes = list(range(rank - len(shape), rank))
    ms = g.reduce("ReduceMean", g.op("Mul", x, x), axes, keepdims=True)
    y = g.op("Mul", x, g.op("Reciprocal", g.op("Sqrt", g.op("Add", ms, g.const(float(eps), x.dtype)))))
    if weight is not None:
        y = g.op("Mul", y, g.cast(require_value(g, weight, "rms_norm", "weight"), x.dtype))
    return y


@register("torch.nn.RMSNorm")
def rms_norm_module(g, mod: ModuleCall, input):
    """RMSNorm.forward(input) -> F.rms_norm(input, normalized_shape, weight, eps)"""
    m = mod.module
    return rms_norm(g, input, list(m.normalized_shape), mod.param("weight"), m.eps)


@register("torch.nn.functional.group_norm")
def group_norm(g, input, num_groups, weight=None, bias=None, eps=1e-05, *args):
    """group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor
    (primitive ops: GroupNormalization's scale changed meaning at opset 21)"""
    x = _float_input(g, input, "group_norm")
    rank = known_rank(g, x, "group_norm")
    if rank < 2:
        raise g.error(f"group_norm: expected at least a 2D input, got {rank}D (torch raises)")
    if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups <= 0:
        raise g.error("group_norm: num_groups must be a positive Python int")
    c = _channels(x)
    if c is not None and c % num_groups:
        raise g.error(f"group_norm: {c} channels are not divisible into {num_groups} groups (torch raises)")
    per_group = prod_of_dims(g, x, 1, rank)
    per_group = per_group // num_groups if isinstance(per_group, int) else g.op("Div", per_group, g.const(num_groups, torch.int64))
    grouped = reshape(g, x, [dim_size(g, x, 0), num_groups, per_group])
    y = _batch_stats_norm(g, grouped, [2], float(eps))
    y = reshape(g, y, list(x.static_shape) if x.static_shape is not None else g.shape_of(x))
    w = None if weight is None else require_value(g, weight, "group_norm", "weight")
    b = None if bias is None else require_value(g, bias, "group_norm", "bias")
    return _affine(g, y, w, b, rank)


@register("torch.nn.GroupNorm")
def group_norm_module(g, mod: ModuleCall, input):
    """GroupNorm.forward(input) -> F.group_norm(input, num_groups, weight, bias, eps)"""
    m = mod.module
    return group_norm(g, input, m.num_groups, mod.param("weight"), mod.param("bias"), m.eps)


@register("torch.nn.functional.instance_norm")
def instance_norm(
    g, input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-05, *args
):
    """instance_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight, Tensor? bias,
    bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor"""
    x = _float_input(g, input, "instance_norm")
    rank = known_rank(g, x, "instance_norm")
    if rank < 3:
        raise g.error(f"instance_norm: expected at least a 3D input (N, C, ...), got {rank}D")
    w = None if weight is None else g.cast(require_value(g, weight, "instance_norm", "weight"), x.dtype)
    b = None if bias is None else g.cast(require_value(g, bias, "instance_norm", "bias"), x.dtype)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise g.error("instance_norm: use_input_stats=False needs running_mean and running_var (torch raises)")
        return batch_norm(g, x, running_mean, running_var, w, b, False, momentum, eps)
    if running_mean is not None or running_var is not None:
        raise g.error(
            "instance_norm with use_input_stats=True updates running_mean/running_var in place, which a graph cannot carry",
            hint="call model.eval() before exporting",
        )
    scale = w if w is not None else _ones_like_channels(g, x, 1.0)
    shift = b if b is not None else _ones_like_channels(g, x, 0.0)
    return g.op("InstanceNormalization", x, scale, shift, epsilon=float(eps))


def _instance_norm_module(nsp: int):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        x = require_value(g, input, type(m).__name__)
        x, added = _batched(g, x, nsp, type(m).__name__)
        if m.track_running_stats:
            _refuse_training(g, mod, "instance norm then updates its running statistics")
        elif m.training:
            pass  # no running statistics: training and eval compute the same thing
        use_input_stats = m.training or not m.track_running_stats
        rm = mod.param("running_mean") if not use_input_stats else None
        rv = mod.param("running_var") if not use_input_stats else None
        y = instance_norm(g, x, rm, rv, mod.param("weight"), mod.param("bias"), use_input_stats, m.momentum, m.eps)
        return _unbatch(g, y, added)

    lower.__doc__ = f"InstanceNorm{nsp}d.forward(input) -> F.instance_norm(...)"
    return lower


register("torch.nn.InstanceNorm1d")(_instance_norm_module(1))
register("torch.nn.InstanceNorm2d")(_instance_norm_module(2))
register("torch.nn.InstanceNorm3d")(_instance_norm_module(3))


@register("torch.nn.LocalResponseNorm")
def local_response_norm_module(g, mod: ModuleCall, input):
    """LocalResponseNorm.forward(input) -> F.local_response_norm(input, size, alpha, beta, k)"""
    return local_response_norm(g, input, mod.module.size, mod.module.alpha, mod.module.beta, mod.module.k)


@register("torch.nn.functional.local_response_norm")
def local_response_norm(g, input, size, alpha=0.0001, beta=0.75, k=1.0):
    """local_response_norm(Tensor input, int size, float alpha=1e-4, float beta=0.75, float k=1.0) -> Tensor
    (x / (k + alpha * avg over channels [c - size//2, c + (size-1)//2] of x^2) ^ beta)"""
    x = _float_input(g, input, "local_response_norm")
    rank = known_rank(g, x, "local_response_norm")
    if rank < 3:
        raise g.error("local_response_norm: expected 3D or higher dimensionality input (torch raises)")
    sq = g.unsqueeze(g.op("Mul", x, x), [1])  # (N, 1, C, ...)
    lead, tail = size // 2, (size - 1) // 2
    pads = [0] * (rank + 1)
    pads_end = [0] * (rank + 1)
    pads[2], pads_end[2] = lead, tail
    padded = g.op("Pad", sq, g.const(pads + pads_end, torch.int64), g.const(0.0, x.dtype))
    div = g.squeeze(_window_sum(g, padded, size, rank), [1])
    div = g.op("Pow", g.op("Add", g.op("Mul", div, g.const(alpha / size, x.dtype)), g.const(float(k), x.dtype)), g.const(float(beta), x.dtype))
    return g.op("Div", x, div)


def _window_sum(g: GraphBuilder, padded: Value, size: int, rank: int) -> Value:
    """Sum over windows of ``size`` along axis 2 of an (N, 1, C+pad, ...) tensor (a
    Conv with a ones kernel, spatial dims flattened)."""
    flat = reshape(g, padded, dims_of(g, padded, 0, 3) + [-1]) if rank > 3 else padded
    kernel = g.const(torch.ones((1, 1, size, 1), dtype=padded.dtype))
    y = g.op("Conv", flat, kernel)
    if rank > 3:
        y = reshape(g, y, dims_of(g, y, 0, 3) + dims_of(g, padded, 3, rank + 1))
    return y


# ---------------------------------------------------------------------------- embedding


@register("torch.nn.functional.embedding")
def embedding(g, input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False,
    bool sparse=False) -> Tensor  (F.embedding argument order; max_norm renorms the looked-up rows)"""
    i = require_value(g, input, "embedding", "input")
    w = require_value(g, weight, "embedding", "weight")
    if is_float(i.dtype) or is_bool(i.dtype):
        raise g.error(f"embedding: indices must be an integer tensor, got {i.dtype} (torch raises)")
    if w.rank != 2:
        raise g.error("embedding: weight must be 2-D (torch raises)")
    rows = g.op("Gather", w, g.cast(i, torch.int64), axis=0)
    if max_norm is None:
        return rows
    # embedding_renorm_: rows whose norm exceeds max_norm are scaled to max_norm / (norm + 1e-7).
    p = float(norm_type)
    if p == 2.0:
        norm = g.reduce("ReduceL2", rows, [-1 if rows.rank is None else rows.rank - 1], keepdims=True)
    elif p == 1.0:
        norm = g.reduce("ReduceL1", rows, [rows.rank - 1], keepdims=True)
    else:
        s = g.reduce("ReduceSum", g.op("Pow", g.op("Abs", rows), g.const(p, rows.dtype)), [rows.rank - 1], keepdims=True)
        norm = g.op("Pow", s, g.const(1.0 / p, rows.dtype))
    mx = g.const(float(max_norm), rows.dtype)
    scale = g.op("Div", mx, g.op("Add", norm, g.const(1e-7, rows.dtype)))
    scale = g.op("Where", g.op("Greater", norm, mx), scale, g.const(1.0, rows.dtype))
    return g.op("Mul", rows, scale)


@register("torch.nn.Embedding")
def embedding_module(g, mod: ModuleCall, input):
    """Embedding.forward(input) -> F.embedding(input, weight, padding_idx, max_norm, norm_type, ...)"""
    m = mod.module
    return embedding(g, input, mod.param("weight"), m.padding_idx, m.max_norm, m.norm_type)


# ---------------------------------------------------------------------------- dropout


def _dropout(g: GraphBuilder, name: str, input, p, training) -> Value:
    x = require_value(g, input, name)
    if not 0.0 <= float(p) <= 1.0:
        raise g.error(f"{name}: dropout probability has to be between 0 and 1, but got {p} (torch raises)")
    if training and p > 0:
        raise g.error(
            f"{name} with training=True draws a random mask",
            hint="call model.eval() before exporting (or pass training=False)",
        )
    return x


@register("torch.nn.functional.dropout")
def dropout(g, input, p=0.5, training=True, inplace=False):
    """dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout", input, p, training)


@register("torch.nn.functional.dropout1d")
def dropout1d(g, input, p=0.5, training=True, inplace=False):
    """dropout1d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout1d", input, p, training)


@register("torch.nn.functional.dropout2d")
def dropout2d(g, input, p=0.5, training=True, inplace=False):
    """dropout2d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout2d", input, p, training)


@register("torch.nn.functional.dropout3d")
def dropout3d(g, input, p=0.5, training=True, inplace=False):
    """dropout3d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor"""
    return _dropout(g, "dropout3d", input, p, training)


@register("torch.nn.functional.alpha_dropout")
def alpha_dropout(g, input, p=0.5, training=False, inplace=False):
    """alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor"""
    return _dropout(g, "alpha_dropout", input, p, training)


@register("torch.nn.functional.feature_alpha_dropout")
def feature_alpha_dropout(g, input, p=0.5, training=False, inplace=False):
    """feature_alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor"""
    return _dropout(g, "feature_alpha_dropout", input, p, training)


def _dropout_module(name: str):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        if m.training and m.p > 0:
            _refuse_training(g, mod, f"{name} draws a random mask")
        return _dropout(g, name, input, m.p, False)

    lower.__name__ = name.lower() + "_module"
    lower.__doc__ = f"{name}.forward(input) -> input in eval mode"
    return lower


for _name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
    register(f"torch.nn.{_name}")(_dropout_module(_name))


# ---------------------------------------------------------------------------- pooling


def _pool_common(g: GraphBuilder, name: str, nsp: int, input, kernel_size, stride, padding):
    x = _float_input(g, input, name)
    x, added = _batched(g, x, nsp, name)
    k = _ntuple(g, kernel_size, nsp, name, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _ntuple(g, stride, nsp, name, "stride")
    p = _ntuple(g, padding, nsp, name, "padding")
    for kk, pp in zip(k, p):
        if pp > kk // 2:
            raise g.error(f"{name}: pad should be at most half of effective kernel size (torch raises)")
    if any(v <= 0 for v in k + s):
        raise g.error(f"{name}: kernel_size and stride must be positive (torch raises)")
    return x, added, k, s, p


def _max_pool(g: GraphBuilder, name: str, nsp: int, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    if return_indices:
        raise g.error(
            f"{name}(return_indices=True) is not supported: ONNX MaxPool indices are flattened over N, C too",
            hint="use return_indices=False",
        )
    x, added, k, s, p = _pool_common(g, name, nsp, input, kernel_size, stride, padding)
    d = _ntuple(g, dilation, nsp, name, "dilation")
    y = g.op("MaxPool", x, kernel_shape=k, strides=s, pads=p + p, dilations=d, ceil_mode=int(bool(ceil_mode)))
    return _unbatch(g, y, added)


@register("torch.nn.functional.max_pool1d")
def max_pool1d(g, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1,
    bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@register("torch.nn.functional.max_pool2d")
def max_pool2d(g, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1,
    bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@register("torch.nn.functional.max_pool3d")
def max_pool3d(g, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1,
    bool ceil_mode=False) -> Tensor"""
    return _max_pool(g, "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool_module(nsp: int):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        return _max_pool(
            g, type(m).__name__, nsp, input, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, m.return_indices
        )

    lower.__doc__ = f"MaxPool{nsp}d.forward(input) -> F.max_pool{nsp}d(input, ...)"
    return lower


register("torch.nn.MaxPool1d")(_max_pool_module(1))
register("torch.nn.MaxPool2d")(_max_pool_module(2))
register("torch.nn.MaxPool3d")(_max_pool_module(3))


def _avg_pool(g: GraphBuilder, name: str, nsp: int, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x, added, k, s, p = _pool_common(g, name, nsp, input, kernel_size, stride, padding)
    y = g.op(
        "AveragePool", x, kernel_shape=k, strides=s, pads=p + p, ceil_mode=int(bool(ceil_mode)),
        count_include_pad=int(bool(count_include_pad)),
    )
    if divisor_override is not None:
        if ceil_mode or (not count_include_pad and any(p)):
            raise g.error(f"{name}: divisor_override with ceil_mode or excluded padding is not supported")
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, int) or divisor_override == 0:
            raise g.error(f"{name}: divisor must be not zero (torch raises)")
        y = g.op("Mul", y, g.const(math.prod(k) / divisor_override, x.dtype))
    return _unbatch(g, y, added)


@register("torch.nn.functional.avg_pool1d")
def avg_pool1d(g, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False,
    bool count_include_pad=True) -> Tensor"""
    return _avg_pool(g, "avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@register("torch.nn.functional.avg_pool2d")
def avg_pool2d(g, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False,
    bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, "avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@register("torch.nn.functional.avg_pool3d")
def avg_pool3d(g, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False,
    bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(g, "avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _avg_pool_module(nsp: int):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        div = getattr(m, "divisor_override", None)
        return _avg_pool(
            g, type(m).__name__, nsp, input, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad, div
        )

    lower.__doc__ = f"AvgPool{nsp}d.forward(input) -> F.avg_pool{nsp}d(input, ...)"
    return lower


register("torch.nn.AvgPool1d")(_avg_pool_module(1))
register("torch.nn.AvgPool2d")(_avg_pool_module(2))
register("torch.nn.AvgPool3d")(_avg_pool_module(3))


def _adaptive(g: GraphBuilder, name: str, nsp: int, input, output_size, kind: str) -> Value:
    x = _float_input(g, input, name)
    x, added = _batched(g, x, nsp, name)
    if isinstance(output_size, (list, tuple, torch.Size)):
        outs = list(output_size)
        if len(outs) == 1 and nsp > 1:
            outs = outs * nsp
    else:
        outs = [output_size] * nsp
    if len(outs) != nsp:
        raise g.error(f"{name}: output_size must have {nsp} entries, got {output_size!r} (torch raises)")
    ins = x.shape[2:]
    resolved: list[int] = []
    for o, i in zip(outs, ins):
        if o is None:
            if not isinstance(i, int):
                raise g.error(f"{name}: output_size None keeps a dim whose size is not static")
            o = i
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)) or o < 0:
            raise g.error(f"{name}: output_size must be Python ints, got {output_size!r}")
        resolved.append(int(o))
    if all(o == 1 for o in resolved):
        y = g.op("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", x)
        return _unbatch(g, y, added)
    kernel = []
    for o, i in zip(resolved, ins):
        if not isinstance(i, int) or o == 0 or i % o:
            raise g.error(
                f"{name}: output size {tuple(resolved)} from input size {tuple(ins)} needs windows of varying size",
                hint="use an output size that divides a static input size (the windows are then a plain strided pool)",
            )
        kernel.append(i // o)
    if all(k == 1 for k in kernel):
        return _unbatch(g, x, added)
    y = g.op("AveragePool" if kind == "avg" else "MaxPool", x, kernel_shape=kernel, strides=kernel)
    return _unbatch(g, y, added)


@register("torch.nn.functional.adaptive_avg_pool1d")
def adaptive_avg_pool1d(g, input, output_size):
    """adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor"""
    return _adaptive(g, "adaptive_avg_pool1d", 1, input, output_size, "avg")


@register("torch.nn.functional.adaptive_avg_pool2d")
def adaptive_avg_pool2d(g, input, output_size):
    """adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"""
    return _adaptive(g, "adaptive_avg_pool2d", 2, input, output_size, "avg")


@register("torch.nn.functional.adaptive_avg_pool3d")
def adaptive_avg_pool3d(g, input, output_size):
    """adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor"""
    return _adaptive(g, "adaptive_avg_pool3d", 3, input, output_size, "avg")


def _adaptive_max(g: GraphBuilder, name: str, nsp: int, input, output_size, return_indices) -> Value:
    if return_indices:
        raise g.error(f"{name}(return_indices=True) is not supported", hint="use return_indices=False")
    return _adaptive(g, name, nsp, input, output_size, "max")


@register("torch.nn.functional.adaptive_max_pool1d")
def adaptive_max_pool1d(g, input, output_size, return_indices=False):
    """adaptive_max_pool1d(Tensor self, int[1] output_size) -> Tensor"""
    return _adaptive_max(g, "adaptive_max_pool1d", 1, input, output_size, return_indices)


@register("torch.nn.functional.adaptive_max_pool2d")
def adaptive_max_pool2d(g, input, output_size, return_indices=False):
    """adaptive_max_pool2d(Tensor self, int[2] output_size) -> Tensor"""
    return _adaptive_max(g, "adaptive_max_pool2d", 2, input, output_size, return_indices)


@register("torch.nn.functional.adaptive_max_pool3d")
def adaptive_max_pool3d(g, input, output_size, return_indices=False):
    """adaptive_max_pool3d(Tensor self, int[3] output_size) -> Tensor"""
    return _adaptive_max(g, "adaptive_max_pool3d", 3, input, output_size, return_indices)


def _adaptive_module(nsp: int, kind: str):
    def lower(g, mod: ModuleCall, input):
        m = mod.module
        name = type(m).__name__
        if kind == "max":
            return _adaptive_max(g, name, nsp, input, m.output_size, m.return_indices)
        return _adaptive(g, name, nsp, input, m.output_size, "avg")

    lower.__doc__ = f"Adaptive{kind.title()}Pool{nsp}d.forward(input)"
    return lower


for _n in (1, 2, 3):
    register(f"torch.nn.AdaptiveAvgPool{_n}d")(_adaptive_module(_n, "avg"))
    register(f"torch.nn.AdaptiveMaxPool{_n}d")(_adaptive_module(_n, "max"))


# ---------------------------------------------------------------------------- interpolate


def _scaled_size(g: GraphBuilder, x: Value, axis: int, scale: Any) -> Value:
    """floor(x.shape[axis] * scale) in double precision: 0-d int64."""
    size = g.cast(g.size(x, axis) if isinstance(g.size(x, axis), Value) else g.const(g.size(x, axis)), torch.float64)
    factor = g.cast(scale, torch.float64) if isinstance(scale, Value) else g.const(float(scale), torch.float64)
    return g.cast(g.op("Floor", g.op("Mul", size, factor)), torch.int64)


def _exact_f32(s: float) -> bool:
    return float(np.float32(s)) == float(s)


_RESIZE_MODES = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear", "bilinear": "linear",
                 "trilinear": "linear", "bicubic": "cubic"}
_MODE_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


def _check_antialias(g: GraphBuilder, mode: str, rank: int, align_corners) -> None:
    if mode not in ("bilinear", "bicubic") or rank != 4:
        raise g.error("interpolate(antialias=True) is restricted to the bilinear and bicubic modes and a 4-D input "
                      "(torch raises)")
    if g.opset < 18:
        raise g.error(f"interpolate(antialias=True) needs Resize's `antialias` attribute, new in opset 18 (exporting "
                      f"at opset {g.opset})", hint="export with opset=18 or later")
    if align_corners:
        raise g.error("interpolate(antialias=True, align_corners=True): onnxruntime's antialiased Resize samples "
                      "other points than torch's with align_corners=True",
                      hint="use align_corners=False (the default), or antialias=False")


@register("torch.nn.functional.interpolate", "torch.nn.functional.upsample")
def interpolate(g, input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None, antialias=False):
    """interpolate(Tensor input, int|int[]? size=None, float|float[]? scale_factor=None, str mode='nearest',
    bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor"""
    x = _float_input(g, input, "interpolate")
    rank = known_rank(g, x, "interpolate")
    nsp = rank - 2
    if nsp < 1 or nsp > 3:
        raise g.error(f"interpolate: expected a 3D, 4D or 5D input, got {rank}D (torch raises)")
    if mode == "area":
        if size is None:
            raise g.error("interpolate(mode='area') with scale_factor is not supported", hint="pass size=")
        return _adaptive(g, "interpolate(mode='area')", nsp, x, size, "avg")
    if mode not in _RESIZE_MODES:
        raise g.error(f"interpolate: mode {mode!r} is not supported")
    if mode in _MODE_RANK and _MODE_RANK[mode] != rank:
        raise g.error(f"interpolate: mode {mode!r} expects a {_MODE_RANK[mode]}D input, got {rank}D (torch raises)")
    linear_like = mode in ("linear", "bilinear", "trilinear", "bicubic")
    if align_corners is not None and not linear_like:
        raise g.error("interpolate: align_corners option can only be set with the interpolating modes (torch raises)")
    if antialias:
        _check_antialias(g, mode, rank, align_corners)
    if (size is None) == (scale_factor is None):
        raise g.error("interpolate: exactly one of size and scale_factor must be given (torch raises)")
    ins = x.shape[2:]
    attrs: dict[str, Any] = {"mode": _RESIZE_MODES[mode]}
    if mode == "nearest":
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    elif mode == "nearest-exact":
        attrs.update(coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    else:
        attrs["coordinate_transformation_mode"] = "align_corners" if align_corners else "half_pixel"
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    if antialias:
        # torch's antialiased kernels (PIL's): weights over the input pixels only,
        # renormalised, and Keys' cubic with a = -0.5, upsampling as well as downsampling.
        attrs.update(antialias=1, exclude_outside=1)
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.5
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple, torch.Size)) else [size] * nsp
        if len(sizes) != nsp:
            raise g.error(f"interpolate: size must have {nsp} entries, got {size!r} (torch raises)")
        for s in sizes:
            if isinstance(s, bool) or not (isinstance(s, (int, np.integer)) or (isinstance(s, Value) and s.rank == 0)):
                raise g.error(f"interpolate: size must be ints, got {size!r}")
        target = g.shape_tensor(dims_of(g, x, 0, 2) + [s if isinstance(s, Value) else int(s) for s in sizes])
        return g.op("Resize", x, None, None, target, **attrs)
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * nsp
    if len(scales) != nsp:
        raise g.error(f"interpolate: scale_factor must have {nsp} entries, got {scale_factor!r} (torch raises)")
    if recompute_scale_factor and any(isinstance(s, Value) or not isinstance(i, int) for i, s in zip(ins, scales)):
        # The output size is floor(size * scale) in double precision, as torch computes it;
        # the resize then maps coordinates by that size.
        outs = [_scaled_size(g, x, 2 + k, s) for k, s in enumerate(scales)]
        return g.op("Resize", x, None, None, g.shape_tensor(dims_of(g, x, 0, 2) + outs), **attrs)
    if any(isinstance(s, Value) for s in scales):
        raise g.error("interpolate: a scale_factor computed in the graph needs recompute_scale_factor=True",
                      hint="pass size= (or recompute_scale_factor=True)")
    scales = [float(s) for s in scales]
    if any(s <= 0 for s in scales):
        raise g.error("interpolate: scale_factor must be positive (torch raises)")
    out_static = [math.floor(i * s) if isinstance(i, int) else None for i, s in zip(ins, scales)]
    if recompute_scale_factor:
        target = g.shape_tensor(dims_of(g, x, 0, 2) + out_static)
        return g.op("Resize", x, None, None, target, **attrs)
    for i, s, o in zip(ins, scales, out_static):
        if _exact_f32(s):
            continue
        if o is None:
            raise g.error(
                f"interpolate: scale_factor {s} is not exact in float32 and dim size is dynamic; ONNX would size "
                "the output with a float32 product, torch with a double one",
                hint="pass size=, or a scale factor exact in float32 (2.0, 0.5, 1.5, ...)",
            )
        if math.floor(i * float(np.float32(s))) != o:
            raise g.error(
                f"interpolate: scale_factor {s} on a dim of size {i} gives {o} in torch but a different size in ONNX "
                "(float32 rounding)",
                hint="pass size= instead",
            )
    # onnxruntime resizes an axis whose size does not change as the identity; torch
    # still maps coordinates with 1/scale there (its linear kernels copy only when
    # every spatial size is unchanged).
    same = [s != 1.0 and isinstance(i, int) and i >= 2 and o == i for i, s, o in zip(ins, scales, out_static)]
    maybe_same = [s != 1.0 and not isinstance(i, int) and 1.0 < s < 1.5 for i, s in zip(ins, scales)]
    if any(maybe_same):
        raise g.error(
            f"interpolate: scale_factor {scales} may leave a dynamic dim's size unchanged, where onnxruntime and "
            "torch disagree",
            hint="pass size=, or make the spatial dims static",
        )
    if any(same):
        if all(same) and mode in ("linear", "bilinear", "trilinear"):
            return x
        raise g.error(
            f"interpolate: scale_factor {scales} leaves the size of a spatial dim unchanged ({tuple(ins)}), where "
            "onnxruntime copies and torch resamples",
            hint="pass size= instead",
        )
    scale_t = g.const(torch.tensor([1.0, 1.0] + scales, dtype=torch.float32))
    return g.op("Resize", x, None, scale_t, **attrs)


@register("torch.nn.functional.upsample_nearest")
def upsample_nearest(g, input, size=None, scale_factor=None):
    """upsample_nearest(input, size=None, scale_factor=None) -> interpolate(..., mode='nearest')"""
    return interpolate(g, input, size, scale_factor, "nearest")


@register("torch.nn.functional.upsample_bilinear")
def upsample_bilinear(g, input, size=None, scale_factor=None):
    """upsample_bilinear(input, size=None, scale_factor=None) -> interpolate(..., 'bilinear', align_corners=True)"""
    return interpolate(g, input, size, scale_factor, "bilinear", True)


@register("torch.nn.Upsample")
def upsample_module(g, mod: ModuleCall, input):
    """Upsample.forward(input) -> F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)"""
    m = mod.module
    return interpolate(g, input, m.size, m.scale_factor, m.mode, m.align_corners, getattr(m, "recompute_scale_factor", None))


@register("torch.nn.UpsamplingNearest2d")
def upsampling_nearest2d(g, mod: ModuleCall, input):
    """UpsamplingNearest2d.forward(input) -> F.interpolate(input, size, scale_factor, 'nearest')"""
    return interpolate(g, input, mod.module.size, mod.module.scale_factor, "nearest")


@register("torch.nn.UpsamplingBilinear2d")
def upsampling_bilinear2d(g, mod: ModuleCall, input):
    """UpsamplingBilinear2d.forward(input) -> F.interpolate(input, size, scale_factor, 'bilinear', align_corners=True)"""
    return interpolate(g, input, mod.module.size, mod.module.scale_factor, "bilinear", True)


# ---------------------------------------------------------------------------- pixel shuffle


def _div_dim(g: GraphBuilder, d: int | Value, r: int) -> int | Value:
    return d // r if isinstance(d, int) else g.op("Div", d, g.const(r, torch.int64))


@register("torch.nn.functional.pixel_shuffle")
def pixel_shuffle(g, input, upscale_factor):
    """pixel_shuffle(Tensor self, int upscale_factor) -> Tensor  (DepthToSpace, CRD)"""
    x = require_value(g, input, "pixel_shuffle")
    rank = known_rank(g, x, "pixel_shuffle")
    if rank < 3:
        raise g.error(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {rank} (torch raises)")
    r = int(upscale_factor)
    c = x.shape[-3]
    if isinstance(c, int) and c % (r * r):
        raise g.error(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by {r * r} (torch raises)")
    c, h, w = (dim_size(g, x, rank - 3 + i) for i in range(3))
    lead = dims_of(g, x, 0, rank - 3)
    c_out = _div_dim(g, c, r * r)
    h_out = h * r if isinstance(h, int) else g.op("Mul", h, g.const(r, torch.int64))
    w_out = w * r if isinstance(w, int) else g.op("Mul", w, g.const(r, torch.int64))
    if is_float(x.dtype):
        x4 = x if rank == 4 else reshape(g, x, [prod_of_dims(g, x, 0, rank - 3), c, h, w])
        y = g.op("DepthToSpace", x4, blocksize=r, mode="CRD")
    else:  # onnxruntime's DepthToSpace is float-only: the same permutation by hand
        six = reshape(g, x, [prod_of_dims(g, x, 0, rank - 3), c_out, r, r, h, w])
        y = g.op("Transpose", six, perm=[0, 1, 4, 2, 5, 3])
    return reshape(g, y, lead + [c_out, h_out, w_out])


@register("torch.nn.functional.pixel_unshuffle")
def pixel_unshuffle(g, input, downscale_factor):
    """pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor  (channel c*r*r + i*r + j; not SpaceToDepth's order)"""
    x = require_value(g, input, "pixel_unshuffle")
    rank = known_rank(g, x, "pixel_unshuffle")
    if rank < 3:
        raise g.error(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with {rank} (torch raises)")
    r = int(downscale_factor)
    for d in x.shape[-2:]:
        if isinstance(d, int) and d % r:
            raise g.error(f"pixel_unshuffle expects height and width to be divisible by {r} (torch raises)")
    c, h, w = (dim_size(g, x, rank - 3 + i) for i in range(3))
    lead = dims_of(g, x, 0, rank - 3)
    six = reshape(g, x, [prod_of_dims(g, x, 0, rank - 3), c, _div_dim(g, h, r), r, _div_dim(g, w, r), r])
    t = g.op("Transpose", six, perm=[0, 1, 3, 5, 2, 4])
    c_out = c * r * r if isinstance(c, int) else g.op("Mul", c, g.const(r * r, torch.int64))
    return reshape(g, t, lead + [c_out, _div_dim(g, h, r), _div_dim(g, w, r)])


@register("torch.nn.PixelShuffle")
def pixel_shuffle_module(g, mod: ModuleCall, input):
    """PixelShuffle.forward(input) -> F.pixel_shuffle(input, upscale_factor)"""
    return pixel_shuffle(g, input, mod.module.upscale_factor)


@register("torch.nn.PixelUnshuffle")
def pixel_unshuffle_module(g, mod: ModuleCall, input):
    """PixelUnshuffle.forward(input) -> F.pixel_unshuffle(input, downscale_factor)"""
    return pixel_unshuffle(g, input, mod.module.downscale_factor)


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


# ---------------------------------------------------------------------------- distances


@register("torch.nn.functional.cosine_similarity")
def cosine_similarity(g, x1, x2, dim=1, eps=1e-8):
    """cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor
    (sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)), ATen's formulation)"""
    a = require_value(g, x1, "cosine_similarity", "x1")
    b = require_value(g, x2, "cosine_similarity", "x2")
    a, b = g.promote(a, b)
    if not is_float(a.dtype):
        a, b = g.cast(a, torch.get_default_dtype()), g.cast(b, torch.get_default_dtype())
    known_rank(g, a, "cosine_similarity"), known_rank(g, b, "cosine_similarity")
    # ATen broadcasts first (expand_outplace), so norms run over broadcast dims too.
    a = g.op("Expand", a, g.shape_of(b))
    b = g.op("Expand", b, g.shape_of(a))
    rank = a.rank
    scalar = rank == 0
    if scalar:
        a, b, rank = g.unsqueeze(a, [0]), g.unsqueeze(b, [0]), 1
    d = normalize_axis(g, dim, rank, "cosine_similarity")
    e = g.const(float(eps), a.dtype)

    def unit(v: Value) -> Value:
        n = g.reduce("ReduceL2", v, [d], keepdims=True)
        return g.op("Div", v, g.op("Max", n, e))

    return g.reduce("ReduceSum", g.op("Mul", unit(a), unit(b)), [d], keepdims=False)


@register("torch.nn.CosineSimilarity")
def cosine_similarity_module(g, mod: ModuleCall, x1, x2):
    """CosineSimilarity.forward(x1, x2) -> F.cosine_similarity(x1, x2, dim, eps)"""
    return cosine_similarity(g, x1, x2, mod.module.dim, mod.module.eps)


@register("torch.nn.functional.pairwise_distance")
def pairwise_distance(g, x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor
    (norm(x1 - x2 + eps, p, dim=-1))"""
    a = require_value(g, x1, "pairwise_distance", "x1")
    b = require_value(g, x2, "pairwise_distance", "x2")
    a, b = g.promote(a, b)
    if not is_float(a.dtype):
        raise g.error(f"pairwise_distance of {a.dtype} tensors is not supported", hint="cast to float32 first")
    rank = max(known_rank(g, a, "pairwise_distance"), known_rank(g, b, "pairwise_distance"))
    diff = g.op("Add", g.op("Sub", a, b), g.const(float(eps), a.dtype))
    if rank == 0:
        return _call(g, "torch.linalg.vector_norm", diff, p, None, keepdim)
    return _call(g, "torch.linalg.vector_norm", diff, p, [rank - 1], keepdim)


@register("torch.nn.PairwiseDistance")
def pairwise_distance_module(g, mod: ModuleCall, x1, x2):
    """PairwiseDistance.forward(x1, x2) -> F.pairwise_distance(x1, x2, norm, eps, keepdim)"""
    m = mod.module
    return pairwise_distance(g, x1, x2, m.norm, m.eps, m.keepdim)


# ---------------------------------------------------------------------------- attention


def _mask_to_additive(g: GraphBuilder, mask: Value, dtype: torch.dtype, true_means_keep: bool) -> Value:
    """A bool mask as 0 / -inf of ``dtype``; a float mask cast to ``dtype``."""
    if mask.dtype == torch.bool:
        keep = mask if true_means_keep else g.op("Not", mask)
        return g.op("Where", keep, g.const(0.0, dtype), g.const(float("-inf"), dtype))
    if not is_float(mask.dtype):
        raise g.error(f"attention masks must be bool or floating point, got {mask.dtype} (torch raises)")
    return g.cast(mask, dtype)


def _causal_mask(g: GraphBuilder, q: Value, k: Value, dtype: torch.dtype) -> Value:
    lq = dim_size(g, q, q.rank - 2)
    lk = dim_size(g, k, k.rank - 2)
    if isinstance(lq, int) and isinstance(lk, int):
        keep = torch.ones(lq, lk, dtype=torch.bool).tril()
        return g.const(torch.zeros(lq, lk, dtype=dtype).masked_fill(~keep, float("-inf")))
    zero = g.const(0, torch.int64)
    one = g.const(1, torch.int64)
    rows = g.op("Range", zero, lq if isinstance(lq, Value) else g.const(lq, torch.int64), one)
    cols = g.op("Range", zero, lk if isinstance(lk, Value) else g.const(lk, torch.int64), one)
    keep = g.op("GreaterOrEqual", g.unsqueeze(rows, [1]), g.unsqueeze(cols, [0]))
    return g.op("Where", keep, g.const(0.0, dtype), g.const(float("-inf"), dtype))


def _safe_softmax(g: GraphBuilder, scores: Value) -> Value:
    """softmax over the last axis, 0 (not NaN) on rows that are entirely -inf."""
    axis = scores.rank - 1
    sm = g.op("Softmax", scores, axis=axis)
    all_masked = g.op("Equal", g.reduce("ReduceMax", scores, [axis], keepdims=True), g.const(float("-inf"), scores.dtype))
    return g.op("Where", all_masked, g.const(0.0, scores.dtype), sm)


@register("torch.nn.functional.scaled_dot_product_attention")
def scaled_dot_product_attention(g, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,
    float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"""
    q = _float_input(g, query, "scaled_dot_product_attention", "query")
    k = require_value(g, key, "scaled_dot_product_attention", "key")
    v = require_value(g, value, "scaled_dot_product_attention", "value")
    if dropout_p:
        raise g.error("scaled_dot_product_attention(dropout_p > 0) draws a random mask",
                      hint="pass dropout_p=0.0 in eval mode")
    if enable_gqa:
        raise g.error("scaled_dot_product_attention(enable_gqa=True) is not supported",
                      hint="repeat the key/value heads explicitly")
    for t in (q, k, v):
        if t.rank is None or t.rank < 2:
            raise g.error("scaled_dot_product_attention needs inputs of known rank >= 2")
    if is_causal and attn_mask is not None:
        raise g.error("scaled_dot_product_attention: _scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True (torch raises)")
    e = q.shape[-1]
    if scale is None:
        if not isinstance(e, int):
            e_v = g.cast(dim_size(g, q, q.rank - 1), q.dtype)
            s_v = g.op("Reciprocal", g.op("Sqrt", e_v))
        else:
            s_v = g.const(1.0 / math.sqrt(e), q.dtype)
    else:
        s_v = g.const(float(scale), q.dtype)
    kt = g.op("Transpose", k, perm=list(range(k.rank - 2)) + [k.rank - 1, k.rank - 2])
    scores = g.op("Mul", g.op("MatMul", q, kt), s_v)
    masked = False
    if is_causal:
        scores = g.op("Add", scores, _causal_mask(g, q, k, q.dtype))
        masked = True
    elif attn_mask is not None:
        m = require_value(g, attn_mask, "scaled_dot_product_attention", "attn_mask")
        scores = g.op("Add", scores, _mask_to_additive(g, m, q.dtype, true_means_keep=True))
        masked = True
    attn = _safe_softmax(g, scores) if masked else g.op("Softmax", scores, axis=scores.rank - 1)
    return g.op("MatMul", attn, v)


@register("torch.nn.MultiheadAttention")
def multihead_attention(g, mod: ModuleCall, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                        average_attn_weights=True, is_causal=False):
    """MultiheadAttention.forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (Tensor attn_output, Tensor? attn_weights)"""
    m = mod.module
    if not m._qkv_same_embed_dim:
        raise g.error("MultiheadAttention with kdim/vdim != embed_dim is not supported")
    if m.bias_k is not None or m.add_zero_attn:
        raise g.error("MultiheadAttention with add_bias_kv or add_zero_attn is not supported")
    if m.training and m.dropout > 0:
        _refuse_training(g, mod, "attention dropout draws a random mask")
    if is_causal and attn_mask is None:
        raise g.error("MultiheadAttention: need attn_mask if specifying the is_causal hint (torch raises)")
    q_in = _float_input(g, query, "MultiheadAttention", "query")
    k_in = require_value(g, key, "MultiheadAttention", "key")
    v_in = require_value(g, value, "MultiheadAttention", "value")
    E, H = m.embed_dim, m.num_heads
    D = E // H
    unbatched = q_in.rank == 2
    if q_in.rank not in (2, 3) or k_in.rank != q_in.rank or v_in.rank != q_in.rank:
        raise g.error("MultiheadAttention: query, key and value must all be 2-D (unbatched) or 3-D (torch raises)")
    # Work in (N, L, E).
    def to_nle(t: Value) -> Value:
        if unbatched:
            return g.unsqueeze(t, [0])
        return t if m.batch_first else g.op("Transpose", t, perm=[1, 0, 2])

    q_x, k_x, v_x = to_nle(q_in), to_nle(k_in), to_nle(v_in)
    w = mod.param("in_proj_weight")
    b = mod.param("in_proj_bias")

    def proj(x: Value, i: int) -> Value:
        wi = g.op("Slice", w, g.const([i * E], torch.int64), g.const([(i + 1) * E], torch.int64), g.const([0], torch.int64))
        y = g.op("MatMul", x, g.op("Transpose", wi, perm=[1, 0]))
        if b is not None:
            bi = g.op("Slice", b, g.const([i * E], torch.int64), g.const([(i + 1) * E], torch.int64), g.const([0], torch.int64))
            y = g.op("Add", y, bi)
        return y

    def heads(x: Value) -> Value:  # (N, L, E) -> (N, H, L, D)
        return g.op("Transpose", reshape(g, x, [dim_size(g, x, 0), dim_size(g, x, 1), H, D]), perm=[0, 2, 1, 3])

    q, k, v = heads(proj(q_x, 0)), heads(proj(k_x, 1)), heads(proj(v_x, 2))
    scores = g.op("MatMul", g.op("Mul", q, g.const(1.0 / math.sqrt(D), q.dtype)), g.op("Transpose", k, perm=[0, 1, 3, 2]))
    if attn_mask is not None:
        am = _mask_to_additive(g, require_value(g, attn_mask, "MultiheadAttention", "attn_mask"), q.dtype, False)
        if am.rank == 3:  # (N*H, L, S) -> (N, H, L, S)
            am = reshape(g, am, [-1, H, dim_size(g, am, 1), dim_size(g, am, 2)])
        elif am.rank != 2:
            raise g.error("MultiheadAttention: attn_mask must be 2-D or 3-D (torch raises)")
        scores = g.op("Add", scores, am)
    if key_padding_mask is not None:
        kpm = _mask_to_additive(g, require_value(g, key_padding_mask, "MultiheadAttention", "key_padding_mask"), q.dtype, False)
        kpm = g.unsqueeze(kpm, [0, 1, 2] if unbatched else [1, 2])  # (N, 1, 1, S)
        scores = g.op("Add", scores, kpm)
    attn = g.op("Softmax", scores, axis=3)
    out = g.op("MatMul", attn, v)  # (N, H, L, D)
    out = g.op("Transpose", out, perm=[0, 2, 1, 3])
    out = reshape(g, out, [dim_size(g, out, 0), dim_size(g, out, 1), E])
    out = _call(g, "torch.nn.functional.linear", out, _out_proj(g, mod, "weight"), _out_proj(g, mod, "bias"))
    if unbatched:
        out = g.squeeze(out, [0])
    elif not m.batch_first:
        out = g.op("Transpose", out, perm=[1, 0, 2])
    if not need_weights:
        return out, None
    weights = g.reduce("ReduceMean", attn, [1], keepdims=False) if average_attn_weights else attn
    if unbatched:
        weights = g.squeeze(weights, [0])
    return out, weights


def _out_proj(g: GraphBuilder, mod: ModuleCall, attr: str) -> Value | None:
    return _child(mod, "out_proj", mod.module.out_proj).param(attr)
