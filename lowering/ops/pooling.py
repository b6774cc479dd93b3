"""Pooling: max, average and adaptive pooling, functional forms and ``nn`` modules.

Adaptive pooling to output size 1 is a Global*Pool; other sizes need a static input
size that the output size divides (then the windows are a plain strided pool);
anything else is refused.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._nn_common import _batched, _float_input, _ntuple, _unbatch
from lowering.ops.registry import ModuleCall, register

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
