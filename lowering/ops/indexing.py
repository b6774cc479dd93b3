"""Indexing: ``t[idx]`` and ``t[idx] = v``, index_put, nonzero / argwhere (gather and
scatter are in ``gather_scatter``, sorting in ``sorting``, pad in ``padding``, tril /
triu and one_hot in ``masks``).

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
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_int
from lowering.ops._common import check_out, require_value, where as _where
from lowering.ops.padding import pad  # noqa: F401 - re-exported (modules imports it from here)
from lowering.ops.registry import register
from lowering.ops.shape import (
    INT64_MAX,
    dim_size,
    flatten_dims,
    int_arg,
    is_graph_int,
    known_rank,
    reshape,
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
