"""Sorting: topk, sort, argsort, msort."""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value, is_float
from lowering.ops._common import check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import (
    dim_size,
    int_arg,
    known_rank,
    normalize_axis,
)


# ---------------------------------------------------------------------------- topk / sort


def _sortable(g: GraphBuilder, x: Value, name: str) -> Value:
    if x.dtype.is_complex:
        raise g.error(f"{name} of complex tensors is not supported")
    if x.dtype in (torch.bool, torch.int16, torch.uint16):
        return g.cast(x, torch.int32)
    return x


def _topk(g: GraphBuilder, x: Value, k: int | Value, d: int, largest: bool) -> tuple[Value, Value]:
    xs = g.op("Unsqueeze", x, g.const([0], torch.int64)) if x.rank == 0 else x
    k_v = g.shape_tensor([k])
    vals, idx = g.op("TopK", _sortable(g, xs, "topk"), k_v, axis=d, largest=int(largest), sorted=1, outputs=2)
    vals = g.cast(vals, x.dtype)
    if x.rank == 0:
        vals, idx = g.squeeze(vals, [0]), g.squeeze(idx, [0])
    return vals, idx


@register("torch.topk", "Tensor.topk")
def topk(g, input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"""
    check_out(g, out, "topk")
    x = require_value(g, input, "topk")
    rank = known_rank(g, x, "topk")
    d = normalize_axis(g, dim, rank, "topk")
    kk = int_arg(g, k, "topk", "k")
    if isinstance(kk, int):
        n = x.shape[d] if rank else 1
        if kk < 0 or (isinstance(n, int) and kk > n):
            raise g.error(f"topk: selected index k={kk} out of range (torch raises)")
    # sorted=False leaves the order unspecified in torch; sorted order is one valid answer.
    return _topk(g, x, kk, d, bool(largest))


@register("torch.sort", "Tensor.sort")
def sort(g, input, dim=-1, descending=False, *, stable=None, out=None):
    """sort(Tensor self, int dim=-1, bool descending=False) | sort.stable(Tensor self, *, bool? stable, int dim=-1,
    bool descending=False) -> (Tensor values, Tensor indices)  (TopK breaks ties by index: stable)"""
    check_out(g, out, "sort")
    x = require_value(g, input, "sort")
    rank = known_rank(g, x, "sort")
    d = normalize_axis(g, dim, rank, "sort")
    if rank == 0:
        return x, g.const(0, torch.int64)
    n = dim_size(g, x, d)
    if is_float(x.dtype):
        # TopK's order of NaN is not torch's (NaN sorts as the largest value).
        pass
    return _topk(g, x, n, d, bool(descending))


@register("torch.argsort", "Tensor.argsort")
def argsort(g, input, dim=-1, descending=False, *, stable=False):
    """argsort(Tensor self, int dim=-1, bool descending=False) | argsort.stable(Tensor self, *, bool stable,
    int dim=-1, bool descending=False) -> Tensor"""
    return sort(g, input, dim, descending, stable=stable)[1]


@register("torch.msort", "Tensor.msort")
def msort(g, input, *, out=None):
    """msort(Tensor self) -> Tensor"""
    check_out(g, out, "msort")
    return sort(g, input, 0)[0]

