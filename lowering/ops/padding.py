"""Padding: ``F.pad`` (constant, reflect, replicate, circular) and ``constant_pad_nd``."""

from __future__ import annotations

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import (
    INT64_MAX,
    dim_size,
    known_rank,
    slice_axis,
)


# ---------------------------------------------------------------------------- pad


def _pad_circular(g: GraphBuilder, x: Value, pairs: list[tuple[int, int, int]]) -> Value:
    for axis, left, right in pairs:
        n = x.shape[axis]
        if isinstance(n, int) and (left > n or right > n):
            raise g.error("pad(mode='circular'): padding value causes wrapping around more than once (torch raises)")
        pieces = []
        if left:
            pieces.append(slice_axis(g, x, axis, -left, INT64_MAX))
        pieces.append(x)
        if right:
            pieces.append(slice_axis(g, x, axis, 0, right))
        if len(pieces) > 1:
            x = g.op("Concat", *pieces, axis=axis)
    return x


def _pad_by_gather(g: GraphBuilder, x: Value, pairs: list[tuple[int, int, int]], mode: str) -> Value:
    """Non-constant padding with negative widths: each axis gathers from the index map
    torch's own ``F.pad`` makes of ``arange(n)`` (static n), or, for replicate,
    ``clamp(j - left, 0, n - 1)`` computed in the graph."""
    import torch.nn.functional as F

    for axis, left, right in pairs:
        n = dim_size(g, x, axis)
        if isinstance(n, int):
            try:
                idx = F.pad(torch.arange(n, dtype=torch.float64).reshape(1, 1, n), (left, right), mode=mode)
            except (RuntimeError, ValueError) as e:
                raise g.error(f"pad(mode={mode!r}) of a dim of size {n} by ({left}, {right}): {e} (torch raises)") from None
            x = g.op("Gather", x, g.const(idx.reshape(-1).to(torch.int64)), axis=axis)
            continue
        if mode != "replicate":
            raise g.error(f"pad(mode={mode!r}) with negative widths needs a static dim size")
        total = g.op("Add", n, g.const(left + right, torch.int64))
        j = g.op("Range", g.const(-left, torch.int64), g.op("Sub", total, g.const(left, torch.int64)), g.const(1, torch.int64))
        hi = g.op("Sub", n, g.const(1, torch.int64))
        idx = g.op("Min", g.op("Max", j, g.const(0, torch.int64)), hi)
        x = g.op("Gather", x, idx, axis=axis)
    return x


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "circular"}


@register("torch.nn.functional.pad")
def pad(g, input, pad, mode="constant", value=None):
    """pad(Tensor input, SymInt[] pad, str mode="constant", float? value=None) -> Tensor"""
    x = require_value(g, input, "pad")
    rank = known_rank(g, x, "pad")
    if mode not in _PAD_MODES:
        raise g.error(f"pad: mode {mode!r} is not supported (torch has constant, reflect, replicate, circular)")
    pads = [int(p) if isinstance(p, (int, np.integer)) and not isinstance(p, bool) else p for p in pad]
    if not all(isinstance(p, int) for p in pads):
        return _pad_by_graph_widths(g, x, rank, pads, mode, value)
    if len(pads) % 2 or len(pads) // 2 > rank:
        raise g.error(f"pad: padding length {len(pads)} must be even and at most twice the rank {rank} (torch raises)")
    if mode != "constant" and value not in (None, 0, 0.0):
        raise g.error(f"pad: padding mode {mode!r} doesn't take in value argument (torch raises)")
    # pad lists (left, right) pairs from the last dim backwards.
    pairs = [(rank - 1 - i, pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)]
    pairs = [p for p in pairs if p[1] or p[2]]
    if not pairs:
        return x
    if mode != "constant" and any(l < 0 or r < 0 for _, l, r in pairs):
        return _pad_by_gather(g, x, pairs, mode)
    if mode == "circular":
        return _pad_circular(g, x, pairs)
    # Negative widths crop first (torch allows them for constant and replicate).
    crop = [(a, min(l, 0), min(r, 0)) for a, l, r in pairs if l < 0 or r < 0]
    for a, l, r in crop:
        x = slice_axis(g, x, a, -l, r if r < 0 else INT64_MAX)
    begins = [0] * rank
    ends = [0] * rank
    for a, l, r in pairs:
        begins[a], ends[a] = max(l, 0), max(r, 0)
    if not any(begins) and not any(ends):
        return x
    onnx_mode = _PAD_MODES[mode]
    if onnx_mode == "reflect":
        for a, l, r in pairs:
            n = x.shape[a]
            if isinstance(n, int) and (l >= n or r >= n):
                raise g.error(
                    f"pad(mode='reflect'): padding ({l}, {r}) should be less than the dimension size {n} (torch raises)"
                )
    cval = None
    if onnx_mode == "constant":
        cval = g.const(torch.tensor(0 if value is None else value).to(x.dtype))
    return g.op("Pad", x, g.const(begins + ends, torch.int64), cval, mode=onnx_mode)


def _pad_by_graph_widths(g: GraphBuilder, x: Value, rank: int, pads: list, mode: str, value) -> Value:
    """Widths computed in the graph (`(k - h % k) % k` of a dynamic `h = x.shape[2]`):
    ONNX Pad takes its pads as a tensor, built here from the ints and graph ints. Constant
    padding with a negative width crops, as torch's does; for reflect and replicate,
    onnxruntime raises where its Pad and torch's differ (some negative widths), and agrees
    everywhere else (measured over every width in -4..4 on two axes). Circular padding
    slices by its widths, which must then be known."""
    for p in pads:
        if isinstance(p, int):
            continue
        if not isinstance(p, Value) or p.rank != 0 or p.dtype.is_floating_point or p.dtype == torch.bool:
            raise g.error(f"pad: a pad width must be an int or an integer computed in the graph, got {p!r}",
                          "compute the widths as ints, e.g. pad_h = (k - h % k) % k with h = x.shape[2]")
    if len(pads) % 2 or len(pads) // 2 > rank:
        raise g.error(f"pad: padding length {len(pads)} must be even and at most twice the rank {rank} (torch raises)")
    if mode == "circular":
        raise g.error("pad(mode='circular') with widths computed from a dynamic axis is not supported by untrace",
                      "use mode='constant', 'reflect' or 'replicate', or make the axis static")
    if mode != "constant" and value not in (None, 0, 0.0):
        raise g.error(f"pad: padding mode {mode!r} doesn't take in value argument (torch raises)")
    begins: list = [0] * rank
    ends: list = [0] * rank
    for i in range(len(pads) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = pads[2 * i], pads[2 * i + 1]
    widths = g.shape_tensor(begins + ends)
    cval = None
    if mode == "constant":
        cval = g.const(torch.tensor(0 if value is None else value).to(x.dtype))
    return g.op("Pad", x, widths, cval, mode=_PAD_MODES[mode])


@register("torch.constant_pad_nd")
def constant_pad_nd(g, input, pad, value=0):
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"""
    return globals()["pad"](g, input, pad, "constant", value)

