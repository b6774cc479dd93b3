"""Joining tensors: cat / concat, stack, hstack, vstack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import concat, known_rank, normalize_axis


# ---------------------------------------------------------------------------- cat / stack


def _tensor_list(g: GraphBuilder, tensors: Any, name: str) -> list[Value]:
    if isinstance(tensors, Value):
        raise g.error(f"{name} expects a list or tuple of tensors, got one tensor", hint="pass [t] or use unbind first")
    if not isinstance(tensors, (list, tuple)):
        raise g.error(f"{name} expects a list or tuple of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise g.error(f"{name} expects a non-empty list of tensors (torch raises)")
    return [require_value(g, t, name, "each element") for t in tensors]


def _common_dtype(vals: Sequence[Value]) -> torch.dtype:
    dt = vals[0].dtype
    for v in vals[1:]:
        dt = torch.promote_types(dt, v.dtype)
    return dt


@register("torch.cat", "torch.concat", "torch.concatenate")
def cat(g, tensors, dim=0, *, axis=None, out=None):
    """cat(Tensor[] tensors, int dim=0) -> Tensor  (promotes dtypes; skips legacy empty 1-d tensors)"""
    check_out(g, out, "cat")
    if axis is not None:
        dim = axis
    vals = _tensor_list(g, tensors, "cat")
    dt = _common_dtype(vals)
    for v in vals:
        if v.rank is None:
            raise g.error("cat needs the rank of every input")
        if v.rank == 0:
            raise g.error("cat: zero-dimensional tensor cannot be concatenated (torch raises)")
    # torch skips 1-d tensors of size 0 when concatenating tensors of another rank.
    ranks = {v.rank for v in vals if v.shape != (0,)}
    if ranks:
        if len(ranks) > 1:
            raise g.error("cat: tensors must have the same number of dimensions (torch raises)")
        rank = ranks.pop()
        vals = [v for v in vals if v.rank == rank]
    else:
        rank = 1
    d = normalize_axis(g, dim, rank, "cat")
    vals = [g.cast(v, dt) for v in vals]
    return concat(g, vals, d)


@register("torch.stack")
def stack(g, tensors, dim=0, *, out=None):
    """stack(Tensor[] tensors, int dim=0) -> Tensor"""
    check_out(g, out, "stack")
    vals = _tensor_list(g, tensors, "stack")
    dt = _common_dtype(vals)
    rank = vals[0].rank
    if rank is None or any(v.rank != rank for v in vals):
        raise g.error("stack expects each tensor to be equal size (ranks differ or are unknown)")
    d = normalize_axis(g, dim, rank + 1, "stack")
    return concat(g, [g.unsqueeze(g.cast(v, dt), [d]) for v in vals], d)


@register("torch.hstack")
def hstack(g, tensors, *, out=None):
    """hstack(Tensor[] tensors) -> Tensor"""
    check_out(g, out, "hstack")
    vals = [v if v.rank != 0 else g.unsqueeze(v, [0]) for v in _tensor_list(g, tensors, "hstack")]
    return cat(g, vals, 0 if vals[0].rank == 1 else 1)


@register("torch.vstack", "torch.row_stack")
def vstack(g, tensors, *, out=None):
    """vstack(Tensor[] tensors) -> Tensor"""
    check_out(g, out, "vstack")
    vals = []
    for v in _tensor_list(g, tensors, "vstack"):
        r = known_rank(g, v, "vstack")
        vals.append(g.unsqueeze(v, list(range(2 - r))) if r < 2 else v)
    return cat(g, vals, 0)

