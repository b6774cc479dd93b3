"""Normalization: batch, layer, RMS, group, instance and local response norm, functional
forms and ``nn`` modules.

Norms are spelled with ONNX's own ops where their semantics are torch's
(BatchNormalization, LayerNormalization, InstanceNormalization) and with primitive ops
where they are not at every opset (GroupNorm: GroupNormalization changed meaning at
opset 21; RMSNorm: only opset 23 has it).  Batch norm updating running statistics is
refused in training mode (call ``model.eval()``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops._nn_common import (
    _batched,
    _channel_view,
    _channels,
    _float_input,
    _ones_like_channels,
    _refuse_training,
    _unbatch,
)
from lowering.ops.registry import ModuleCall, register
from lowering.ops.shape import dim_size, dims_of, known_rank, prod_of_dims, reshape

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
