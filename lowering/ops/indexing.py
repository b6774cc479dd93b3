"""Indexing: ``t[idx]`` and ``t[idx] = v``, gather/scatter, index_select, index_add/
index_copy, masked_scatter, take*, topk/sort, nonzero, tril/triu, pad, one_hot.

``operator.getitem`` follows PyTorch's own indexing (``torch/csrc/autograd/
python_variable_indexing.cpp``), which differs from NumPy in one respect: an int (or a
0-d integer tensor) selects -- it is never an advanced index -- so ``x[:, 0, :, idx]``
keeps ``idx``'s dims in place.  Basic items (ints, slices with positive steps, None,
Ellipsis, True) become one Slice, Gathers and one Unsqueeze; then the advanced items:

* one bool mask alone -> Compress over the mask's dims flattened into one;
* one integer index tensor -> Gather at its axis;
* several (masks become index tensors through NonZero) -> broadcast, GatherND over the
  indexed axes moved to the front, and the result dims moved back where torch puts
  them (in place when the indexed axes are adjacent, first otherwise).

``operator.setitem(t, idx, v)`` returns the new value of ``t`` (the interpreter rebinds
the name).  It indexes an iota of ``t``'s flat positions with the same ``idx`` -- so
every index form getitem takes is supported, with the same semantics -- and scatters
``v`` (cast to ``t``'s dtype, broadcast to the indexed shape) there; a bool mask with a
scalar value is a plain Where.  Duplicate positions in an index tensor keep one of the
written values, as on torch's CPU backend (which one is unspecified in both).

``index_add``/``index_copy`` are one ScatterElements (reduction add / none) with the
1-d index broadcast along ``dim`` to ``source``'s shape.  ``masked_scatter`` gives the
k-th True position of the (broadcast) mask source's k-th element: one ScatterND of the
first ``count`` source elements at ``NonZero(mask)`` -- however many Trues the mask holds
at run time.  Where torch raises on the data (a negative index, a source shorter than the
mask's Trues), the graph fails on onnxruntime instead of answering.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float, is_int
from lowering.ops._common import check_out, require_value, where as _where
from lowering.ops.registry import register
from lowering.ops.shape import (
    INT64_MAX,
    dim_size,
    dims_of,
    flatten_dims,
    int_arg,
    is_graph_int,
    known_rank,
    normalize_axis,
    reshape,
    slice_axis,
)

# ---------------------------------------------------------------------------- index items


class _Item:
    """One entry of a normalized index: kind is int | slice | none | tensor | mask."""

    __slots__ = ("kind", "value", "ndim")

    def __init__(self, kind: str, value: Any = None, ndim: int = 1):
        self.kind = kind
        self.value = value
        self.ndim = ndim  # input dims consumed


def _const_index(g: GraphBuilder, seq: Any) -> Value:
    try:
        t = torch.tensor(seq)
    except (TypeError, ValueError, RuntimeError) as e:
        raise g.error(f"indexing with the list {seq!r} is not supported: {e}") from None
    if t.dtype not in (torch.bool, torch.int64):
        raise g.error(f"indexing with a list of {t.dtype} values is not supported (torch raises)")
    return g.const(t)


def _items(g: GraphBuilder, x: Value, idx: Any) -> list[_Item]:
    raw = list(idx) if isinstance(idx, tuple) else [idx]
    items: list[_Item | str] = []
    for e in raw:
        if e is None:
            items.append(_Item("none", ndim=0))
        elif e is Ellipsis:
            items.append("...")
        elif isinstance(e, bool):
            if not e:
                raise g.error("indexing with False (an empty new dim) is not supported")
            items.append(_Item("none", ndim=0))
        elif isinstance(e, (int, np.integer)):
            items.append(_Item("int", int(e)))
        elif isinstance(e, slice):
            items.append(_slice_item(g, e))
        elif isinstance(e, (list, torch.Tensor)):
            v = _const_index(g, e) if isinstance(e, list) else g.const(e)
            items.append(_tensor_item(g, v))
        elif isinstance(e, Value):
            if is_graph_int(e):
                items.append(_Item("int", g.cast(e, torch.int64)))
            else:
                items.append(_tensor_item(g, e))
        else:
            raise g.error(f"indexing a tensor with {type(e).__name__} {e!r} is not supported")
    n_ell = sum(1 for e in items if e == "...")
    if n_ell > 1:
        raise g.error("an index can only have a single ellipsis ('...') (torch raises)")
    consumed = sum(e.ndim for e in items if isinstance(e, _Item))
    rank = x.rank
    if rank is None:
        if n_ell:
            raise g.error("indexing with '...' needs the rank of the tensor")
        return [e for e in items if isinstance(e, _Item)]
    if consumed > rank:
        raise g.error(f"too many indices for tensor of dimension {rank} (torch raises)")
    out: list[_Item] = []
    for e in items:
        if e == "...":
            out.extend(_Item("slice", (None, None, 1)) for _ in range(rank - consumed))
        else:
            out.append(e)  # type: ignore[arg-type]
    return out


def _bound(g: GraphBuilder, b: Any, what: str) -> int | Value | None:
    if b is None:
        return None
    return int_arg(g, b, "indexing", f"a slice {what}")


def _slice_item(g: GraphBuilder, s: slice) -> _Item:
    step = s.step
    if step is None:
        step = 1
    if isinstance(step, Value) or isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise g.error("a slice step must be a Python int known at export time")
    step = int(step)
    if step <= 0:
        raise g.error(
            f"slice step {step}: tensor slices need a positive step (torch raises)",
            hint="use torch.flip for a reversed view",
        )
    return _Item("slice", (_bound(g, s.start, "start"), _bound(g, s.stop, "stop"), step))


def _tensor_item(g: GraphBuilder, v: Value) -> _Item:
    if v.dtype in (torch.bool, torch.uint8):
        if v.rank is None:
            raise g.error("indexing with a mask of unknown rank")
        if v.rank == 0:
            raise g.error("indexing with a 0-d bool tensor (a data-dependent new dim) is not supported")
        return _Item("mask", g.cast(v, torch.bool), ndim=v.rank)
    if not is_int(v.dtype):
        raise g.error(f"tensors used as indices must be long, int, byte or bool tensors, got {v.dtype} (torch raises)")
    if v.rank is None:
        raise g.error("indexing with an index tensor of unknown rank")
    return _Item("tensor", g.cast(v, torch.int64))


def _is_full(item: _Item) -> bool:
    start, stop, step = item.value
    return step == 1 and (start is None or (isinstance(start, int) and start == 0)) and stop is None


# ---------------------------------------------------------------------------- getitem


def _basic(g: GraphBuilder, x: Value, items: list[_Item]) -> tuple[Value, list[tuple[int, _Item]]]:
    """Apply ints, slices and None; returns the result and the advanced items with their
    axis in it."""
    rank = x.rank
    assert rank is not None
    starts: list[int | Value] = []
    ends: list[int | Value] = []
    axes: list[int] = []
    steps: list[int] = []
    squeeze_axes: list[int] = []
    gathers: list[tuple[int, Value]] = []
    axis = 0
    slots: list[str | tuple[int, _Item]] = []  # per result dim: "keep" | "none" | advanced
    for it in items:
        if it.kind == "none":
            slots.append("none")
            continue
        if it.kind == "int":
            i = it.value
            n = x.shape[axis]
            if isinstance(i, int):
                if isinstance(n, int) and not -n <= i < n:
                    raise g.error(f"index {i} is out of bounds for dimension {axis} with size {n} (torch raises)")
                starts.append(i)
                ends.append(i + 1 if i != -1 else INT64_MAX)
                axes.append(axis)
                steps.append(1)
                squeeze_axes.append(axis)
            else:
                gathers.append((axis, i))
            axis += 1
            continue
        if it.kind == "slice":
            if not _is_full(it):
                start, stop, step = it.value
                starts.append(0 if start is None else start)
                ends.append(INT64_MAX if stop is None else stop)
                axes.append(axis)
                steps.append(step)
            slots.append("keep")
            axis += 1
            continue
        for _ in range(it.ndim):
            slots.append(("adv", it))  # type: ignore[arg-type]
        axis += it.ndim
    slots.extend("keep" for _ in range(rank - axis))
    if axes:
        x = g.op(
            "Slice",
            x,
            g.shape_tensor(starts),
            g.shape_tensor(ends),
            g.const(axes, torch.int64),
            None if all(s == 1 for s in steps) else g.const(steps, torch.int64),
        )
    # Value ints select from the highest axis down, so lower axes keep their numbers;
    # Python ints were sliced to size 1 above and are squeezed together.
    removed = sorted([(a, "squeeze", None) for a in squeeze_axes] + [(a, "gather", v) for a, v in gathers], key=lambda t: -t[0])
    pending: list[int] = []
    for a, how, v in removed:
        if how == "gather":
            if pending:
                x = g.squeeze(x, sorted(pending))
                pending = []
            x = g.op("Gather", x, v, axis=a)
        else:
            pending.append(a)
    if pending:
        x = g.squeeze(x, sorted(pending))
    none_axes = [i for i, s in enumerate(slots) if s == "none"]
    if none_axes:
        x = g.unsqueeze(x, none_axes)
    adv: list[tuple[int, _Item]] = []
    seen: set[int] = set()
    for i, s in enumerate(slots):
        if isinstance(s, tuple) and id(s[1]) not in seen:
            seen.add(id(s[1]))
            adv.append((i, s[1]))
    return x, adv


def _mask_only(g: GraphBuilder, x: Value, pos: int, mask: Value) -> Value:
    k = mask.rank
    if x.shape is not None and mask.shape is not None:
        for j, (a, b) in enumerate(zip(x.shape[pos : pos + k], mask.shape)):
            if isinstance(a, int) and isinstance(b, int) and a != b:
                raise g.error(
                    f"the shape of the mask {tuple(mask.shape)} does not match the shape of the indexed tensor "
                    f"at index {pos + j} (torch raises)"
                )
    if k > 1:
        x = flatten_dims(g, x, pos, pos + k - 1)
        mask = reshape(g, mask, [-1])
    return g.op("Compress", x, mask, axis=pos)


def _nonneg(g: GraphBuilder, idx: Value, n: int | Value) -> Value:
    n_v = g.const(n, torch.int64) if isinstance(n, int) else n
    return g.op("Where", g.op("Less", idx, g.const(0, torch.int64)), g.op("Add", idx, n_v), idx)


def _advanced(g: GraphBuilder, x: Value, adv: list[tuple[int, _Item]]) -> Value:
    rank = x.rank
    assert rank is not None
    if len(adv) == 1 and adv[0][1].kind == "mask":
        return _mask_only(g, x, adv[0][0], adv[0][1].value)
    if len(adv) == 1:
        pos, it = adv[0]
        return g.op("Gather", x, it.value, axis=pos)
    # Masks become one index tensor per mask dim (torch: mask.nonzero()).
    axes: list[int] = []
    indices: list[Value] = []
    for pos, it in adv:
        if it.kind == "mask":
            nz = g.op("NonZero", it.value)
            for j in range(it.ndim):
                axes.append(pos + j)
                indices.append(g.op("Gather", nz, g.const(j, torch.int64), axis=0))
        else:
            axes.append(pos)
            indices.append(it.value)
    if any(v.rank is None for v in indices):
        raise g.error("advanced indexing needs index tensors of known rank")
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    indices = [_nonneg(g, v, dim_size(g, x, a)) for v, a in zip(indices, axes)]
    zero = None
    for v in indices:
        z = g.op("Mul", v, g.const(0, torch.int64))
        zero = z if zero is None else g.op("Add", zero, z)
    nb = max(v.rank for v in indices)
    stacked = g.op("Concat", *[g.unsqueeze(g.op("Add", v, zero), [-1]) for v in indices], axis=-1)
    rest = [a for a in range(rank) if a not in axes]
    front = axes + rest
    xt = x if front == list(range(rank)) else g.op("Transpose", x, perm=front)
    out = g.op("GatherND", xt, stacked)
    if adjacent and axes[0] > 0:
        p = axes[0]
        n_rest = len(rest)
        perm = [nb + i for i in range(p)] + list(range(nb)) + [nb + i for i in range(p, n_rest)]
        out = g.op("Transpose", out, perm=perm)
    return out


def getitem(g: GraphBuilder, x: Value, idx: Any) -> Value:
    """``x[idx]`` with PyTorch's indexing semantics (see the module docstring)."""
    items = _items(g, x, idx)
    if x.rank is None:
        if any(it.kind != "slice" and it.kind != "int" and it.kind != "none" for it in items):
            raise g.error("advanced indexing needs the rank of the indexed tensor")
        raise g.error("indexing needs the rank of the indexed tensor")
    y, adv = _basic(g, x, items)
    return _advanced(g, y, adv) if adv else y


@register("operator.getitem", "Tensor.__getitem__")
def getitem_op(g, self, index):
    """__getitem__(Tensor self, index) -> Tensor  (ints, slices, None, ..., masks, index tensors)"""
    x = require_value(g, self, "indexing")
    return getitem(g, x, index)


# ---------------------------------------------------------------------------- setitem


def _is_plain(e: Any) -> bool:
    """An index item whose meaning is known at export time (no graph values in it)."""
    if isinstance(e, slice):
        return all(b is None or (isinstance(b, (int, np.integer)) and not isinstance(b, bool)) for b in (e.start, e.stop, e.step))
    return e is None or e is Ellipsis or isinstance(e, (bool, int, np.integer))


def _positions(g: GraphBuilder, x: Value, idx: Any) -> Value:
    """The flat positions ``x[idx]`` reads, in the shape of ``x[idx]``."""
    static = x.static_shape
    plain = all(_is_plain(e) for e in (idx if isinstance(idx, tuple) else (idx,)))
    if static is not None and plain:
        iota_t = torch.arange(math.prod(static), dtype=torch.int64).reshape(static)
        try:
            return g.const(iota_t[idx])
        except (IndexError, TypeError, ValueError, RuntimeError) as e:
            raise g.error(f"index {idx!r}: {e} (torch raises)") from None
    n = g.numel(x)
    n_v = g.const(n, torch.int64) if isinstance(n, int) else n
    iota = g.op("Range", g.const(0, torch.int64), n_v, g.const(1, torch.int64))
    iota = reshape(g, iota, list(static) if static is not None else g.shape_of(x))
    return getitem(g, iota, idx)


def _fit_value(g: GraphBuilder, value: Any, x: Value, target: Value) -> Value:
    """``value`` as x's dtype, broadcast to ``target``'s shape (torch's copy_ rules: a
    value with more dims must have leading size-1 dims)."""
    if isinstance(value, (bool, int, float)):
        v = g.const(torch.tensor(value).to(x.dtype))
    elif isinstance(value, Value):
        v = g.cast(value, x.dtype)
    elif isinstance(value, torch.Tensor):
        v = g.const(value.to(x.dtype))
    else:
        raise g.error(f"cannot assign {type(value).__name__} to a tensor slice")
    if v.rank is None or target.rank is None:
        raise g.error("index assignment needs the ranks of the value and of the indexed region")
    if v.rank > target.rank:
        extra = v.rank - target.rank
        lead = v.shape[:extra]
        if not all(d == 1 for d in lead):
            raise g.error(f"index assignment: cannot broadcast a value of shape {v.shape} to the indexed region")
        v = g.squeeze(v, list(range(extra)))
    if v.static_shape is not None and target.static_shape is not None and v.static_shape == target.static_shape:
        return v
    return g.op("Expand", v, g.shape_of(target))


def _simple_mask(g: GraphBuilder, x: Value, idx: Any) -> Value | None:
    if isinstance(idx, Value) and idx.dtype in (torch.bool, torch.uint8) and idx.rank is not None and x.rank is not None:
        if 0 < idx.rank <= x.rank:
            return g.cast(idx, torch.bool)
    return None


def setitem(g: GraphBuilder, x: Value, idx: Any, value: Any, accumulate: bool = False) -> Value:
    """The value of ``x`` after ``x[idx] = value`` (``+=`` with ``accumulate``)."""
    rank = known_rank(g, x, "index assignment")
    mask = _simple_mask(g, x, idx)
    scalar = isinstance(value, (bool, int, float)) or (isinstance(value, Value) and value.rank == 0)
    if mask is not None and scalar and not accumulate:
        if mask.shape is not None and x.shape is not None:
            for a, b in zip(x.shape, mask.shape):
                if isinstance(a, int) and isinstance(b, int) and a != b:
                    raise g.error(f"the shape of the mask {mask.shape} does not match the indexed tensor {x.shape} (torch raises)")
        m = g.unsqueeze(mask, list(range(mask.rank, rank))) if mask.rank < rank else mask
        v = g.const(torch.tensor(value).to(x.dtype)) if not isinstance(value, Value) else g.cast(value, x.dtype)
        return _where(g, m, v, x)
    pos = _positions(g, x, idx)
    upd = _fit_value(g, value, x, pos)
    flat_x = reshape(g, x, [-1]) if rank != 1 else x
    flat_pos = reshape(g, pos, [-1]) if pos.rank != 1 else pos
    flat_upd = reshape(g, upd, [-1]) if upd.rank != 1 else upd
    if accumulate:
        if is_bool(x.dtype):
            raise g.error("index_put with accumulate=True on a bool tensor is not supported")
        out = g.op("ScatterElements", flat_x, flat_pos, flat_upd, axis=0, reduction="add")
    else:
        out = g.op("ScatterElements", flat_x, flat_pos, flat_upd, axis=0)
    if rank == 1:
        return out
    return reshape(g, out, list(x.static_shape) if x.static_shape is not None else g.shape_of(x))


@register("operator.setitem", "Tensor.__setitem__")
def setitem_op(g, self, index, value):
    """__setitem__(Tensor self, index, Tensor|Scalar value) -> Tensor  (the new value of self)"""
    x = require_value(g, self, "index assignment")
    return setitem(g, x, index, value)


@register("torch.index_put", "Tensor.index_put", "Tensor.index_put_")
def index_put(g, input, indices, values, accumulate=False):
    """index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"""
    x = require_value(g, input, "index_put")
    if not isinstance(indices, (list, tuple)):
        raise g.error("index_put: indices must be a tuple of tensors")
    idx = tuple(slice(None) if i is None else require_value(g, i, "index_put", "an index") for i in indices)
    return setitem(g, x, idx, values, accumulate=bool(accumulate))


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


# ---------------------------------------------------------------------------- nonzero


@register("torch.nonzero", "Tensor.nonzero")
def nonzero(g, input, *, out=None, as_tuple=False):
    """nonzero(Tensor self) -> Tensor  (as_tuple=True: one 1-d index tensor per dim)"""
    check_out(g, out, "nonzero")
    x = require_value(g, input, "nonzero")
    rank = known_rank(g, x, "nonzero")
    if rank == 0:
        nz = g.op("NonZero", g.unsqueeze(x, [0]))  # (1, N), N in {0, 1}
        if as_tuple:
            return (g.op("Gather", nz, g.const(0, torch.int64), axis=0),)
        return g.op("Transpose", g.op("Slice", nz, g.const([0], torch.int64), g.const([0], torch.int64), g.const([0], torch.int64)), perm=[1, 0])
    nz = g.op("NonZero", x)
    if as_tuple:
        return tuple(g.op("Gather", nz, g.const(j, torch.int64), axis=0) for j in range(rank))
    return g.op("Transpose", nz, perm=[1, 0])


@register("torch.argwhere", "Tensor.argwhere")
def argwhere(g, input):
    """argwhere(Tensor self) -> Tensor"""
    return nonzero(g, input)


# ---------------------------------------------------------------------------- tril / triu


def _trilu(g: GraphBuilder, input: Any, diagonal: Any, upper: int, name: str) -> Value:
    x = require_value(g, input, name)
    if known_rank(g, x, name) < 2:
        raise g.error(f"{name}: input tensor must have at least 2 dimensions (torch raises)")
    k = int_arg(g, diagonal, name, "diagonal")
    k_v = g.const(k, torch.int64) if isinstance(k, int) else k
    if x.dtype in (torch.int64, torch.float32, torch.float64, torch.bool, torch.int32, torch.float16):
        return g.op("Trilu", x, k_v, upper=upper)
    return g.cast(g.op("Trilu", g.cast(x, torch.int64), k_v, upper=upper), x.dtype)


@register("torch.tril", "Tensor.tril", "Tensor.tril_")
def tril(g, input, diagonal=0, *, out=None):
    """tril(Tensor self, int diagonal=0) -> Tensor"""
    check_out(g, out, "tril")
    return _trilu(g, input, diagonal, 0, "tril")


@register("torch.triu", "Tensor.triu", "Tensor.triu_")
def triu(g, input, diagonal=0, *, out=None):
    """triu(Tensor self, int diagonal=0) -> Tensor"""
    check_out(g, out, "triu")
    return _trilu(g, input, diagonal, 1, "triu")


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


# ---------------------------------------------------------------------------- one_hot


@register("torch.nn.functional.one_hot")
def one_hot(g, tensor, num_classes=-1):
    """one_hot(Tensor self, int num_classes=-1) -> Tensor  (int64)"""
    x = require_value(g, tensor, "one_hot")
    if x.dtype != torch.int64:
        raise g.error("one_hot is only applicable to index tensor of type LongTensor (torch raises)")
    n = int_arg(g, num_classes, "one_hot", "num_classes")
    if isinstance(n, int) and n == -1:
        if x.static_shape is not None and math.prod(x.static_shape) == 0:
            raise g.error("one_hot: can not infer total number of classes from empty tensor (torch raises)")
        depth: Value = g.op("Add", g.reduce("ReduceMax", x, None, False), g.const(1, torch.int64))
    elif isinstance(n, int):
        if n < -1:
            raise g.error("one_hot: num_classes should be positive (torch raises)")
        depth = g.const(n, torch.int64)
    else:
        depth = n
    classes = g.op("Range", g.const(0, torch.int64), depth, g.const(1, torch.int64))
    return g.cast(g.op("Equal", g.unsqueeze(x, [-1]), classes), torch.int64)
