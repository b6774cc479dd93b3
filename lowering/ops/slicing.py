"""One axis sliced: narrow / select, flip / fliplr / flipud, roll."""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import (INT64_MAX, INT64_MIN, _dims_arg, dim_size, int_arg, known_rank, normalize_axis, reshape,
                                slice_axis)


# ---------------------------------------------------------------------------- narrow / select


def _wrap_index(g: GraphBuilder, i: int | Value, n: int | Value) -> int | Value:
    """A possibly negative index made non-negative (``i + n`` when ``i < 0``)."""
    if isinstance(i, int):
        if i >= 0:
            return i
        if isinstance(n, int):
            return i + n
        return g.op("Add", g.const(i, torch.int64), n)
    n_v = g.as_value(n) if isinstance(n, int) else n
    return g.op("Where", g.op("Less", i, g.const(0, torch.int64)), g.op("Add", i, n_v), i)


@register("torch.narrow", "Tensor.narrow")
def narrow(g, input, dim, start, length):
    """narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)"""
    x = require_value(g, input, "narrow")
    rank = known_rank(g, x, "narrow")
    if rank == 0:
        raise g.error("narrow() cannot be applied to a 0-dim tensor (torch raises)")
    d = normalize_axis(g, dim, rank, "narrow")
    s = int_arg(g, start, "narrow", "start")
    ln = int_arg(g, length, "narrow", "length")
    n = dim_size(g, x, d)
    if isinstance(s, int) and isinstance(ln, int) and isinstance(n, int):
        s0 = s + n if s < 0 else s
        if not (0 <= s0 <= n) or ln < 0 or s0 + ln > n:
            raise g.error(f"narrow: start ({s}) + length ({ln}) exceeds dimension size ({n}) (torch raises)")
        if s0 == 0 and ln == n:
            return x
        return slice_axis(g, x, d, s0, s0 + ln)
    s0 = _wrap_index(g, s, n)
    end = s0 + ln if isinstance(s0, int) and isinstance(ln, int) else g.op("Add", g.as_value(s0), g.as_value(ln))
    return slice_axis(g, x, d, s0, end)


@register("torch.select", "Tensor.select")
def select(g, input, dim, index):
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"""
    x = require_value(g, input, "select")
    rank = known_rank(g, x, "select")
    if rank == 0:
        raise g.error("select() cannot be applied to a 0-dim tensor (torch raises)")
    d = normalize_axis(g, dim, rank, "select")
    i = int_arg(g, index, "select", "index")
    n = x.shape[d]
    if isinstance(i, int):
        if isinstance(n, int) and not -n <= i < n:
            raise g.error(f"select: index {i} out of range for dimension {d} of size {n} (torch raises)")
        return g.op("Gather", x, g.const(i, torch.int64), axis=d)
    return g.op("Gather", x, i, axis=d)


# ---------------------------------------------------------------------------- flip / roll


def _flip(g: GraphBuilder, x: Value, dims: list[int]) -> Value:
    if not dims:
        return x
    k = len(dims)
    return g.op(
        "Slice",
        x,
        g.const([-1] * k, torch.int64),
        g.const([INT64_MIN] * k, torch.int64),
        g.const(dims, torch.int64),
        g.const([-1] * k, torch.int64),
    )


@register("torch.flip")
def flip(g, input, dims):
    """flip(Tensor self, int[] dims) -> Tensor"""
    x = require_value(g, input, "flip")
    rank = known_rank(g, x, "flip")
    dims = [dims] if isinstance(dims, int) else list(dims)
    norm = [normalize_axis(g, d, rank, "flip") for d in dims]
    if len(set(norm)) != len(norm):
        raise g.error("flip: dims has a repeated dim (torch raises)")
    if rank == 0:
        return x
    return _flip(g, x, sorted(norm))


@register("Tensor.flip")
def tensor_flip(g, self, *dims_args, dims=None):
    """Tensor.flip(Tensor self, *int dims) -> Tensor"""
    if dims is not None and dims_args:
        raise g.error("flip: dims given both positionally and by keyword")
    return flip(g, self, dims if dims is not None else list(_dims_arg(dims_args)))


@register("torch.fliplr", "Tensor.fliplr")
def fliplr(g, input):
    """fliplr(Tensor self) -> Tensor"""
    x = require_value(g, input, "fliplr")
    if known_rank(g, x, "fliplr") < 2:
        raise g.error("fliplr: input tensor must be >= 2-d (torch raises)")
    return _flip(g, x, [1])


@register("torch.flipud", "Tensor.flipud")
def flipud(g, input):
    """flipud(Tensor self) -> Tensor"""
    x = require_value(g, input, "flipud")
    if known_rank(g, x, "flipud") < 1:
        raise g.error("flipud: input tensor must be >= 1-d (torch raises)")
    return _flip(g, x, [0])


def _roll_axis(g: GraphBuilder, x: Value, axis: int, shift: int | Value) -> Value:
    n = dim_size(g, x, axis)
    if isinstance(n, int) and isinstance(shift, int):
        if n == 0:
            return x
        s = shift % n
        if s == 0:
            return x
        cut: int | Value = n - s
    else:
        n_v = g.as_value(n) if isinstance(n, int) else n
        s_v = g.as_value(shift) if isinstance(shift, int) else shift
        # Mod of int64 follows the sign of the divisor (fmod=0), as Python's %; an
        # empty dim divides by 1 instead of 0 (both slices are empty then anyway).
        safe_n = g.op("Max", n_v, g.const(1, torch.int64))
        cut = g.op("Sub", n_v, g.op("Mod", s_v, safe_n))
    tail = slice_axis(g, x, axis, cut, INT64_MAX)
    head = slice_axis(g, x, axis, 0, cut)
    return g.op("Concat", tail, head, axis=axis)


@register("torch.roll", "Tensor.roll")
def roll(g, input, shifts, dims=None):
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"""
    x = require_value(g, input, "roll")
    rank = known_rank(g, x, "roll")
    shift_list = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    shift_list = [int_arg(g, s, "roll", "a shift") for s in shift_list]
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        if len(shift_list) != 1:
            raise g.error("roll: shifts must be a single value when dims is not given (torch raises)")
        flat = reshape(g, x, [-1]) if rank != 1 else x
        rolled = _roll_axis(g, flat, 0, shift_list[0])
        if rank == 1:
            return rolled
        return reshape(g, rolled, list(x.static_shape) if x.static_shape is not None else g.shape_of(x))
    dim_list = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if len(dim_list) != len(shift_list):
        raise g.error(f"roll: shifts and dimensions must align: {len(shift_list)} vs {len(dim_list)} (torch raises)")
    out = x
    for s, d in zip(shift_list, dim_list):
        out = _roll_axis(g, out, normalize_axis(g, d, rank, "roll"), s)
    return out

