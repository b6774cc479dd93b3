"""Gathering and scattering along a dim, an index or a mask: gather, scatter /
scatter_add / scatter_reduce, index_add / index_copy, masked_scatter, index_select,
take / take_along_dim, masked_select.

``index_add``/``index_copy`` are one ScatterElements (reduction add / none) with the
1-d index broadcast along ``dim`` to ``source``'s shape.  ``masked_scatter`` gives the
k-th True position of the (broadcast) mask source's k-th element: one ScatterND of the
first ``count`` source elements at ``NonZero(mask)`` -- however many Trues the mask holds
at run time.  Where torch raises on the data (a negative index, a source shorter than the
mask's Trues), the graph fails on onnxruntime instead of answering.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float, is_int
from lowering.ops._common import check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import (
    INT64_MAX,
    dims_of,
    known_rank,
    normalize_axis,
    reshape,
)


# ---------------------------------------------------------------------------- gather / scatter


def _index(g: GraphBuilder, index: Any, name: str) -> Value:
    i = require_value(g, index, name, "index")
    if not is_int(i.dtype):
        raise g.error(f"{name}(): Expected dtype int64 for index, got {i.dtype} (torch raises)")
    return g.cast(i, torch.int64)


@register("torch.gather", "Tensor.gather")
def gather(g, input, dim, index, *, sparse_grad=False, out=None):
    """gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"""
    check_out(g, out, "gather")
    x = require_value(g, input, "gather")
    i = _index(g, index, "gather")
    rank = known_rank(g, x, "gather")
    d = normalize_axis(g, dim, rank, "gather")
    if i.rank != max(rank, 1) and not (rank == 0 and i.rank == 0):
        if not (rank == 0 and i.rank == 1):
            raise g.error("gather: index tensor must have the same number of dimensions as input (torch raises)")
    if rank == 0:
        r = g.op("GatherElements", g.unsqueeze(x, [0]), i if i.rank == 1 else g.unsqueeze(i, [0]), axis=0)
        return r if i.rank == 1 else g.squeeze(r, [0])
    return g.op("GatherElements", x, i, axis=d)


def _scatter(g: GraphBuilder, name: str, input: Any, dim: Any, index: Any, src: Any, reduction: str | None) -> Value:
    x = require_value(g, input, name)
    i = _index(g, index, name)
    rank = known_rank(g, x, name)
    d = normalize_axis(g, dim, rank, name)
    if rank == 0:
        # torch allows 0-d self/index/src (dim 0): scatter on 1-element views.
        x1 = g.unsqueeze(x, [0])
        i1 = i if i.rank == 1 else g.unsqueeze(i, [0])
        if isinstance(src, Value):
            s1 = g.cast(src, x.dtype)
            s1 = s1 if s1.rank == 1 else g.unsqueeze(s1, [0])
            s1 = g.op("Slice", s1, g.const([0], torch.int64), g.shape_of(i1))
        else:
            s1 = g.op("Expand", g.const(torch.tensor(src).to(x.dtype)), g.shape_of(i1))
        return g.squeeze(g.op("ScatterElements", x1, i1, s1, axis=0, reduction=reduction), [0])
    if i.rank != rank or (isinstance(src, Value) and src.rank != rank):
        raise g.error(f"{name}: index and src must have the same number of dimensions as self (torch raises)")
    if isinstance(src, Value):
        s = g.cast(src, x.dtype)
        if i.static_shape is None or s.static_shape != i.static_shape:
            s = g.op("Slice", s, g.const([0] * rank, torch.int64), g.shape_of(i))
    elif isinstance(src, (bool, int, float)):
        s = g.op("Expand", g.const(torch.tensor(src).to(x.dtype)), g.shape_of(i))
    else:
        raise g.error(f"{name}: src must be a tensor or a number, got {src!r}")
    if is_bool(x.dtype) and reduction is not None:
        raise g.error(f"{name} with a reduction on bool tensors is not supported")
    return g.op("ScatterElements", x, i, s, axis=d, reduction=reduction)


_REDUCE = {None: None, "add": "add", "multiply": "mul"}


@register("torch.scatter", "Tensor.scatter", "Tensor.scatter_")
def scatter(g, input, dim, index, src=None, value=None, *, reduce=None, out=None):
    """scatter.src(Tensor self, int dim, Tensor index, Tensor src, *, str? reduce=None) -> Tensor  |
    scatter.value(Tensor self, int dim, Tensor index, Scalar value, *, str? reduce=None) -> Tensor"""
    check_out(g, out, "scatter")
    if src is None:
        src = value
    if reduce not in _REDUCE:
        raise g.error(f"scatter: reduce argument must be either add or multiply, got {reduce!r} (torch raises)")
    return _scatter(g, "scatter", input, dim, index, src, _REDUCE[reduce])


@register("torch.scatter_add", "Tensor.scatter_add", "Tensor.scatter_add_")
def scatter_add(g, input, dim, index, src, *, out=None):
    """scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""
    check_out(g, out, "scatter_add")
    x = require_value(g, input, "scatter_add")
    if is_bool(x.dtype):
        raise g.error("scatter_add of bool tensors is not supported")
    return _scatter(g, "scatter_add", x, dim, index, require_value(g, src, "scatter_add", "src"), "add")


_SCATTER_REDUCE = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}


@register("torch.scatter_reduce", "Tensor.scatter_reduce", "Tensor.scatter_reduce_")
def scatter_reduce(g, input, dim, index, src, reduce, *, include_self=True, out=None):
    """scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor"""
    check_out(g, out, "scatter_reduce")
    x = require_value(g, input, "scatter_reduce")
    if reduce == "mean":
        raise g.error("scatter_reduce(reduce='mean') is not supported",
                      hint="scatter_add the values and the counts, then divide")
    if reduce not in _SCATTER_REDUCE:
        raise g.error(f"scatter_reduce: reduce must be one of sum, prod, amax, amin, mean; got {reduce!r}")
    if is_bool(x.dtype):
        raise g.error("scatter_reduce of bool tensors is not supported")
    op = _SCATTER_REDUCE[reduce]
    if op in ("max", "min") and g.opset < 18:
        raise g.error(f"scatter_reduce(reduce={reduce!r}) needs opset 18 (ScatterElements max/min)",
                      hint="export with opset >= 18")
    if not include_self:
        # Reset the scattered positions to the reduction's identity first.
        if reduce == "sum":
            ident: Any = 0
        elif reduce == "prod":
            ident = 1
        elif is_float(x.dtype):
            ident = float("-inf") if reduce == "amax" else float("inf")
        else:
            info = torch.iinfo(x.dtype)
            ident = info.min if reduce == "amax" else info.max
        x = _scatter(g, "scatter_reduce", x, dim, index, ident, None)
    return _scatter(g, "scatter_reduce", x, dim, index, require_value(g, src, "scatter_reduce", "src"), op)


def _index_scatter(g: GraphBuilder, name: str, input: Any, dim: Any, index: Any, source: Any, reduction: str | None) -> Value:
    """``input`` with the slices ``source.select(dim, i)`` written to (or added at)
    ``input.select(dim, index[i])``: the 1-d index broadcast to ``source``'s shape along
    ``dim``, then one ScatterElements."""
    x = require_value(g, input, name)
    src = require_value(g, source, name, "source")
    i = _index(g, index, name)
    if src.dtype != x.dtype:
        raise g.error(f"{name}(): self ({x.dtype}) and source ({src.dtype}) must have the same scalar type (torch raises)")
    if i.rank not in (0, 1):
        raise g.error(f"{name}(): Index is supposed to be a vector (torch raises)")
    rank = known_rank(g, x, name)
    d = normalize_axis(g, dim, rank, name)
    if src.rank != rank and not (rank == 0 and src.rank in (0, 1)):
        raise g.error(f"{name}(): source and self must have the same number of dimensions (torch raises)")
    if rank == 0:
        x1, s1 = g.unsqueeze(x, [0]), (src if src.rank == 1 else g.unsqueeze(src, [0]))
        i1 = i if i.rank == 1 else g.unsqueeze(i, [0])
        return g.squeeze(_index_scatter_nd(g, x1, 0, i1, s1, reduction), [0])
    if i.rank == 0:
        i = g.unsqueeze(i, [0])
    if x.shape is not None and src.shape is not None:
        for a, (n, m) in enumerate(zip(x.shape, src.shape)):
            if a != d and isinstance(n, int) and isinstance(m, int) and n != m:
                raise g.error(f"{name}(): source's dim {a} ({m}) must match self's ({n}) (torch raises)")
    k, m = i.shape[0], src.shape[d]
    if isinstance(k, int) and isinstance(m, int):
        if k != m:
            raise g.error(f"{name}(): number of indices ({k}) should be equal to source.size(dim) ({m}) (torch raises)")
    else:
        # Sizes known only at run time: a mismatch (torch raises) makes every index out of range.
        same = g.op("Equal", g.op("Shape", i), g.op("Shape", src, start=d, end=d + 1))
        i = g.op("Where", same, i, g.const(INT64_MAX, torch.int64))
    return _index_scatter_nd(g, x, d, i, src, reduction)


def _index_scatter_nd(g: GraphBuilder, x: Value, d: int, i: Value, src: Value, reduction: str | None) -> Value:
    rank = x.rank
    assert rank is not None
    shape = [1] * rank
    shape[d] = -1
    # torch rejects a negative index here, ScatterElements would wrap it: make it out of
    # range (INT64_MAX), so onnxruntime fails where torch raises.
    i = g.op("Where", g.op("Less", i, g.const(0, torch.int64)), g.const(INT64_MAX, torch.int64), i)
    idx = g.op("Expand", reshape(g, i, shape), g.shape_of(src))
    if reduction == "add" and x.dtype in (torch.bool, torch.float16, torch.bfloat16):
        # bool + bool is "or" in torch: add as int64, nonzero is True.  onnxruntime has no
        # half-precision ScatterElements(add): the sums are made in float32.
        work = torch.int64 if is_bool(x.dtype) else torch.float32
        out = g.op("ScatterElements", g.cast(x, work), idx, g.cast(src, work), axis=d, reduction="add")
        return g.cast(out, x.dtype)
    return g.op("ScatterElements", x, idx, src, axis=d, reduction=reduction)


@register("torch.index_add", "Tensor.index_add", "Tensor.index_add_")
def index_add(g, input, dim, index, source, *, alpha=1, out=None):
    """index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor"""
    from lowering.ops.elementwise import _scaled

    check_out(g, out, "index_add")
    src = require_value(g, source, "index_add", "source")
    return _index_scatter(g, "index_add", input, dim, index, _scaled(g, src, alpha, "index_add"), "add")


@register("torch.index_copy", "Tensor.index_copy", "Tensor.index_copy_")
def index_copy(g, input, dim, index, source, *, out=None):
    """index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor  (duplicate indices: one of the
    written slices, unspecified in torch too)"""
    check_out(g, out, "index_copy")
    return _index_scatter(g, "index_copy", input, dim, index, source, None)


def _masked_scatter(g: GraphBuilder, name: str, input: Any, mask: Any, source: Any, inplace: bool) -> Value:
    x = require_value(g, input, name)
    m = require_value(g, mask, name, "mask")
    src = require_value(g, source, name, "source")
    if m.dtype != torch.bool:
        raise g.error(f"{name}: only supports boolean masks, but got mask with dtype {m.dtype} (torch raises)")
    if src.dtype != x.dtype:
        raise g.error(f"{name}: expected self and source to have same dtypes but got {x.dtype} and {src.dtype} (torch raises)")
    if inplace:
        # In place, self keeps its shape: the mask must broadcast to it.
        if m.rank is None or x.rank is None or m.rank > x.rank or any(
            isinstance(a, int) and isinstance(b, int) and b not in (1, a) for a, b in zip(x.shape[::-1], m.shape[::-1])
        ):
            raise g.error(f"{name}: the mask must broadcast to self's shape in place (torch raises)")
        xb = x
    else:
        xb = g.op("Expand", x, g.shape_of(m))
    mb = g.op("Expand", m, g.shape_of(xb))
    flat_m = reshape(g, mb, [-1])
    flat_x = reshape(g, xb, [-1])
    # The k-th True position takes source's k-th element: ScatterND of source[:count] at
    # NonZero(mask).  A source with fewer elements than the mask has Trues makes the
    # ScatterND fail at run time, as torch raises.
    where_true = g.op("Transpose", g.op("NonZero", flat_m), perm=[1, 0])  # (count, 1)
    count = g.op("Shape", where_true, start=0, end=1)
    picked = g.op("Slice", reshape(g, src, [-1]), g.const([0], torch.int64), count, g.const([0], torch.int64))
    out = g.op("ScatterND", flat_x, where_true, picked)
    return reshape(g, out, g.shape_of(xb))


@register("torch.masked_scatter", "Tensor.masked_scatter")
def masked_scatter(g, input, mask, source):
    """masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor  (self and mask broadcast)"""
    return _masked_scatter(g, "masked_scatter", input, mask, source, False)


@register("Tensor.masked_scatter_")
def masked_scatter_(g, self, mask, source):
    """masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)  (the mask broadcasts to self)"""
    return _masked_scatter(g, "masked_scatter_", self, mask, source, True)


@register("torch.index_select", "Tensor.index_select")
def index_select(g, input, dim, index, *, out=None):
    """index_select(Tensor self, int dim, Tensor index) -> Tensor"""
    check_out(g, out, "index_select")
    x = require_value(g, input, "index_select")
    i = _index(g, index, "index_select")
    if i.rank not in (0, 1):
        raise g.error("index_select(): Index is supposed to be a vector (torch raises)")
    rank = known_rank(g, x, "index_select")
    d = normalize_axis(g, dim, rank, "index_select")
    if rank == 0:
        return x  # torch keeps a 0-d input 0-d (the index can only be 0)
    if i.rank == 0:
        i = g.unsqueeze(i, [0])
    return g.op("Gather", x, i, axis=d)


@register("torch.take", "Tensor.take")
def take(g, input, index):
    """take(Tensor self, Tensor index) -> Tensor"""
    x = require_value(g, input, "take")
    i = _index(g, index, "take")
    return g.op("Gather", reshape(g, x, [-1]), i, axis=0)


def _with_dim_one(g: GraphBuilder, v: Value, d: int) -> Value:
    """Shape(v) with entry ``d`` set to 1."""
    rank = v.rank
    assert rank is not None
    return g.shape_tensor(dims_of(g, v, 0, d) + [1] + dims_of(g, v, d + 1, rank))


@register("torch.take_along_dim", "Tensor.take_along_dim")
def take_along_dim(g, input, indices, dim=None, *, out=None):
    """take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor"""
    check_out(g, out, "take_along_dim")
    x = require_value(g, input, "take_along_dim")
    i = _index(g, indices, "take_along_dim")
    if dim is None:
        return g.op("GatherElements", reshape(g, x, [-1]), reshape(g, i, [-1]), axis=0)
    rank = known_rank(g, x, "take_along_dim")
    if i.rank != rank:
        raise g.error("take_along_dim: input and indices should have the same number of dimensions (torch raises)")
    if rank == 0:
        return gather(g, x, 0, i)
    d = normalize_axis(g, dim, rank, "take_along_dim")
    xb = g.op("Expand", x, _with_dim_one(g, i, d))
    ib = g.op("Expand", i, _with_dim_one(g, x, d))
    return g.op("GatherElements", xb, ib, axis=d)


@register("torch.masked_select", "Tensor.masked_select")
def masked_select(g, input, mask, *, out=None):
    """masked_select(Tensor self, Tensor mask) -> Tensor"""
    check_out(g, out, "masked_select")
    x = require_value(g, input, "masked_select")
    m = require_value(g, mask, "masked_select", "mask")
    if m.dtype != torch.bool:
        raise g.error(f"masked_select: expected a bool mask, got {m.dtype} (torch raises)")
    xb = g.op("Expand", x, g.shape_of(m))
    mb = g.op("Expand", m, g.shape_of(xb))
    return g.op("Compress", reshape(g, xb, [-1]), reshape(g, mb, [-1]), axis=0)

