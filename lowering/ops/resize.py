"""Resizing: ``F.interpolate``/``F.upsample*`` and the ``nn.Upsample*`` modules, and
``F.pixel_shuffle``/``F.pixel_unshuffle`` with their modules.

interpolate maps torch's coordinate rules onto Resize: nearest -> ``asymmetric`` +
``floor``, nearest-exact -> ``half_pixel`` + ``round_prefer_ceil``, linear modes ->
``align_corners`` or ``half_pixel``, bicubic with ``cubic_coeff_a=-0.75``.  A
``scale_factor`` that float32 cannot represent exactly is refused on a dynamic axis,
since ONNX sizes the output with a float32 product and torch with a double one; so is
one that leaves an axis's size unchanged (onnxruntime then copies that axis, torch
still resamples it with ``1/scale``).  ``mode='area'`` is adaptive average pooling.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import require_value
from lowering.ops._nn_common import _float_input
from lowering.ops.pooling import _adaptive
from lowering.ops.registry import ModuleCall, register
from lowering.ops.shape import dim_size, dims_of, known_rank, prod_of_dims, reshape

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
