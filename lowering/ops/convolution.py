"""Convolutions: ``F.conv{1,2,3}d``, ``F.conv_transpose{1,2,3}d``, ``F.unfold`` (im2col)
and their ``nn`` modules.
"""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops._nn_common import _batched, _channel_view, _channels, _float_input, _ntuple, _unbatch, _with_rank
from lowering.ops.padding import pad
from lowering.ops.registry import ModuleCall, register
from lowering.ops.shape import dims_of, prod_of_dims, reshape

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
            # As torch's `_conv_forward`: F.pad in that mode by the module's own padding, then no padding.
            padded = pad(g, input, list(m._reversed_padding_repeated_twice), mode=m.padding_mode)
            return _conv(g, type(m).__name__, nsp, padded, mod.param("weight"), mod.param("bias"), m.stride,
                         (0,) * nsp, m.dilation, m.groups)
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
