"""torchvision's detection operators: ``nms``, ``roi_align`` and ``MultiScaleRoIAlign``, as
ONNX's NonMaxSuppression and RoiAlign.

``nms(boxes[N, 4], scores[N], iou_threshold)`` keeps, greedily in descending score order,
every box whose IoU with each box kept before it is at most ``iou_threshold``, and returns
the kept indices in descending score order. ONNX NonMaxSuppression with one batch and one
class (boxes ``[1, N, 4]``, scores ``[1, 1, N]``, ``center_point_box=0`` for corner boxes,
no score threshold, up to N boxes) makes the same greedy selection in the same order and
suppresses a box when its IoU is above the threshold, as torchvision does; the third column
of its ``[K, 3]`` result is the box index. (Boxes of equal score may be kept in another
order, as torchvision itself warns between CPU and GPU.)

``batched_nms`` is not lowered here: it is interpreted from torchvision's source, so that
its choice between the coordinate trick and a loop over the categories (on the number of
boxes) is an ONNX If, and the loop a Loop.

``roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned)`` is ONNX
RoiAlign in ``avg`` mode: ``boxes`` is a ``[K, 5]`` tensor (batch index, x1, y1, x2, y2)
or a list of ``[L_i, 4]`` tensors, one per image. ``aligned=True`` shifts the box by half a
pixel (``coordinate_transformation_mode="half_pixel"``), ``aligned=False`` does not
(``"output_half_pixel"``, which also makes each box at least one pixel wide and high, as
torchvision does). torchvision's adaptive ``sampling_ratio=-1`` (``ceil(box / output)``
points per bin) is ONNX's ``sampling_ratio=0``. ``spatial_scale`` may be a graph value (a
scale computed from dynamic sizes): the boxes are then scaled before the RoiAlign, which
is the same product torchvision computes.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import reshape


def _check_boxes(g: GraphBuilder, boxes: Any, op: str) -> Value:
    b = require_value(g, boxes, op, "boxes")
    if b.rank != 2 or b.shape is not None and b.shape[1] not in (4, None):
        raise g.error(f"{op}: boxes must have shape [N, 4], got {b.shape}")
    if not is_float(b.dtype):
        raise g.error(f"{op}: boxes must be floating point, got {b.dtype}")
    return b


def _threshold(g: GraphBuilder, iou_threshold: Any) -> Value:
    if isinstance(iou_threshold, Value):
        return g.cast(reshape(g, iou_threshold, [1]), torch.float32)
    return g.const([float(iou_threshold)], torch.float32)


def nms_indices(g: GraphBuilder, boxes: Value, scores: Value, iou_threshold: Any) -> Value:
    """int64 [K]: the indices NMS keeps, in descending score order."""
    count = g.op("Shape", boxes, start=0, end=1)  # every box may be kept
    selected = g.op("NonMaxSuppression", g.unsqueeze(g.cast(boxes, torch.float32), [0]),
                    g.unsqueeze(g.cast(scores, torch.float32), [0, 1]), count, _threshold(g, iou_threshold),
                    center_point_box=0)
    return g.op("Gather", selected, g.const(2, torch.int64), axis=1)


@register("torchvision.ops.boxes.nms")
def nms(g, boxes, scores, iou_threshold):
    """nms(Tensor boxes[N, 4], Tensor scores[N], float iou_threshold) -> Tensor[K] (int64)"""
    b = _check_boxes(g, boxes, "nms")
    s = require_value(g, scores, "nms", "scores")
    if s.rank != 1:
        raise g.error(f"nms: scores must have shape [N], got {s.shape}")
    return nms_indices(g, b, s, iou_threshold)


def _rois(g: GraphBuilder, input: Value, boxes: Any) -> tuple[Value, Value]:
    """(rois [K, 4] in input's dtype, batch indices [K] int64) from a [K, 5] tensor or a
    list of per-image [L_i, 4] tensors."""
    if isinstance(boxes, (list, tuple)):
        parts = [require_value(g, b, "roi_align", "boxes") for b in boxes]
        if not parts:
            raise g.error("roi_align: an empty list of boxes")
        ids = [g.op("Expand", g.const(k, torch.int64), g.op("Shape", p, start=0, end=1)) for k, p in enumerate(parts)]
        rois = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)
        batch = ids[0] if len(ids) == 1 else g.op("Concat", *ids, axis=0)
        return g.cast(rois, input.dtype), batch
    b = require_value(g, boxes, "roi_align", "boxes")
    if b.rank != 2 or b.shape is not None and b.shape[1] not in (5, None):
        raise g.error(f"roi_align: boxes must be a [K, 5] tensor or a list of [L, 4] tensors, got shape {b.shape}")
    batch = g.cast(g.op("Gather", b, g.const(0, torch.int64), axis=1), torch.int64)
    rois = g.op("Slice", b, g.const([1], torch.int64), g.const([5], torch.int64), g.const([1], torch.int64))
    return g.cast(rois, input.dtype), batch


def _pair(g: GraphBuilder, output_size: Any) -> tuple[int, int]:
    size = (output_size, output_size) if not isinstance(output_size, (list, tuple)) else tuple(output_size)
    if any(isinstance(s, Value) for s in size):
        raise g.error("roi_align: output_size comes from the graph (a dynamic size), but ONNX RoiAlign takes it as "
                      "an attribute", hint="pass output_size as Python ints")
    if len(size) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) for s in size):
        raise g.error(f"roi_align: output_size must be an int or two ints known at export time, got {output_size!r}")
    return size


@register("torchvision.ops.roi_align.roi_align")
def roi_align(g, input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """roi_align(Tensor input[N, C, H, W], Tensor[K, 5] | list[Tensor[L, 4]] boxes, int | (int, int) output_size,
    float spatial_scale=1.0, int sampling_ratio=-1, bool aligned=False) -> Tensor[K, C, oh, ow]"""
    x = require_value(g, input, "roi_align", "input")
    if x.rank != 4 or not is_float(x.dtype):
        raise g.error(f"roi_align: input must be a 4-d floating-point tensor, got rank {x.rank} {x.dtype}")
    if not isinstance(sampling_ratio, int) or not isinstance(aligned, bool):
        raise g.error("roi_align: sampling_ratio and aligned must be known at export time")
    height, width = _pair(g, output_size)
    rois, batch = _rois(g, x, boxes)
    if isinstance(spatial_scale, Value):
        rois = g.op("Mul", rois, g.cast(spatial_scale, x.dtype))
        spatial_scale = 1.0
    return g.op("RoiAlign", x, rois, batch, mode="avg", output_height=height, output_width=width,
                sampling_ratio=max(sampling_ratio, 0), spatial_scale=float(spatial_scale),
                coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel")


# ---------------------------------------------------------------------------- MultiScaleRoIAlign


def _power_of_two_scale(g: GraphBuilder, feature_size: int | Value, image_size: int | Value) -> float | Value:
    """torchvision's `_infer_scale`: `2 ** round(log2(feature / image))`, the log taken in
    float32. A Python float when both sizes are known, a 0-d float32 graph value otherwise."""
    if isinstance(feature_size, int) and isinstance(image_size, int):
        return 2 ** float(torch.tensor(float(feature_size) / float(image_size)).log2().round())
    ratio = g.op("Div", g.cast(g.as_value(feature_size), torch.float64), g.cast(g.as_value(image_size), torch.float64))
    log2 = g.op("Div", g.op("Log", g.cast(ratio, torch.float32)), g.const(float(torch.tensor(2.0).log()), torch.float32))
    return g.op("Pow", g.const(2.0, torch.float32), g.op("Round", log2))


def _level_of(g: GraphBuilder, scale: float | Value) -> int | Value:
    """`int(-log2(scale))` for a power-of-two scale: the pyramid level of a feature map."""
    if isinstance(scale, float):
        return int(-torch.log2(torch.tensor(scale, dtype=torch.float32)).item())
    log2 = g.op("Div", g.op("Log", scale), g.const(float(torch.tensor(2.0).log()), torch.float32))
    return g.cast(g.op("Neg", g.op("Round", log2)), torch.int64)


def _box_levels(g: GraphBuilder, boxes: list[Value], k_min, k_max, canonical_scale: int, canonical_level: int) -> Value:
    """torchvision's LevelMapper: `floor(k0 + log2(sqrt(area) / s0) + 1e-6)`, clamped to
    [k_min, k_max], minus k_min (int64, one per box)."""
    cat = boxes[0] if len(boxes) == 1 else g.op("Concat", *boxes, axis=0)
    x1, y1, x2, y2 = (g.op("Gather", cat, g.const(j, torch.int64), axis=1) for j in range(4))
    s = g.op("Sqrt", g.op("Mul", g.op("Sub", x2, x1), g.op("Sub", y2, y1)))
    log2 = g.op("Div", g.op("Log", g.op("Div", s, g.const(float(canonical_scale), s.dtype))),
                g.const(float(torch.tensor(2.0).log()), s.dtype))
    target = g.op("Floor", g.op("Add", g.op("Add", g.const(float(canonical_level), s.dtype), log2),
                                g.const(1e-6, s.dtype)))
    low, high = (g.cast(g.as_value(k), s.dtype) for k in (k_min, k_max))
    target = g.op("Min", g.op("Max", target, low), high)
    return g.op("Sub", g.cast(target, torch.int64), g.cast(g.as_value(k_min), torch.int64))


@register("torchvision.ops.poolers.MultiScaleRoIAlign")
def multiscale_roi_align(g, call, x, boxes, image_shapes):
    """MultiScaleRoIAlign.forward(dict[str, Tensor] x, list[Tensor[L, 4]] boxes, list[(h, w)] image_shapes) -> Tensor

    Each box is pooled from the feature map of its pyramid level: RoiAlign on every level,
    and the level's result taken where the box belongs (a box belongs to exactly one)."""
    m = call.module
    features = [v for k, v in x.items() if k in m.featmap_names]
    if not features or not image_shapes:
        raise g.error("MultiScaleRoIAlign: no feature maps or no image shapes")
    if m.scales is not None and m.map_levels is not None:  # set by an earlier eager call
        scales = list(m.scales)
        k_min, k_max = m.map_levels.k_min, m.map_levels.k_max
        canonical_scale, canonical_level = m.map_levels.s0, m.map_levels.lvl0
    else:
        image_h = image_shapes[0][0]
        for shape in image_shapes[1:]:
            h = shape[0]
            image_h = max(h, image_h) if isinstance(h, int) and isinstance(image_h, int) else g.op(
                "Max", g.as_value(h), g.as_value(image_h))
        scales = [_power_of_two_scale(g, g.size(f, f.rank - 2), image_h) for f in features]
        k_min, k_max = _level_of(g, scales[0]), _level_of(g, scales[-1])
        canonical_scale, canonical_level = m.canonical_scale, m.canonical_level
    pooled = [roi_align(g, f, list(boxes), m.output_size, scale, m.sampling_ratio) for f, scale in zip(features, scales)]
    if len(features) == 1:
        return pooled[0]
    levels = g.unsqueeze(_box_levels(g, list(boxes), k_min, k_max, canonical_scale, canonical_level), [1, 2, 3])
    result = g.op("Expand", g.const(0.0, pooled[0].dtype), g.op("Shape", pooled[0]))
    for level in reversed(range(len(features))):
        result = g.op("Where", g.op("Equal", levels, g.const(level, torch.int64)), pooled[level], result)
    return result
