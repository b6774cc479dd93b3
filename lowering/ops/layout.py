"""Layout ops real model code calls: ``diff``, ``repeat_interleave``, ``meshgrid``,
``Tensor.unfold`` (sliding windows) and ``F.fold`` (col2im).

``diff`` is slicing (``x[1:] - x[:-1]``, ``!=`` for bool, as torch), repeated ``n``
times after concatenating ``prepend``/``append``.  ``repeat_interleave`` with an int is
Unsqueeze + Expand + Reshape; with a repeats *tensor* the output length is data
(``repeats.sum()``): the source index of every output position is a CumSum of a
ScatterElements(add) of ones at the running ends of the repeats, then one Gather -- no
dim is baked into a constant, so it runs for every repeats tensor.  ``output_size`` is
only a hint for torch (it skips a device sync); the length is always computed from the
repeats, so a wrong hint cannot make a silently different graph.  ``unfold`` is one
Gather of a (windows, size) index grid and a Transpose; ``fold`` a ScatterElements(add)
of every column into the padded image at constant positions.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_int
from lowering.ops._common import _tensor_attr, check_out, require_value
from lowering.ops.registry import register
from lowering.ops.shape import (
    INT64_MAX,
    dim_size,
    dims_of,
    int_arg,
    is_graph_int,
    known_rank,
    normalize_axis,
    reshape,
    slice_axis,
    static_int,
)


def _i64(g: GraphBuilder, n: int | Value) -> Value:
    return g.const(n, torch.int64) if isinstance(n, int) else g.cast(n, torch.int64)


# ---------------------------------------------------------------------------- diff


@register("torch.diff", "Tensor.diff")
def diff(g, input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor"""
    check_out(g, out, "diff")
    x = require_value(g, input, "diff")
    rank = known_rank(g, x, "diff")
    if rank == 0:
        raise g.error("diff expects input to be at least one-dimensional (torch raises)")
    n = static_int(g, n, "diff", "n")
    if n < 0:
        raise g.error(f"order must be non-negative but got {n} (torch raises)")
    d = normalize_axis(g, dim, rank, "diff")
    if n == 0:
        return x  # torch ignores prepend/append then
    parts = []
    for what, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        if isinstance(extra, (bool, int, float)):
            raise g.error(f"diff: {what} must be a tensor (torch raises for a number)")
        e = require_value(g, extra, "diff", what)
        if e.rank != rank:
            raise g.error("diff expects prepend or append to be the same dimension as input (torch raises)")
        parts.append((what, e))
    if parts:
        dt = g.result_type(x, *[e for _, e in parts])
        pieces = [g.cast(e, dt) for w, e in parts if w == "prepend"] + [g.cast(x, dt)]
        pieces += [g.cast(e, dt) for w, e in parts if w == "append"]
        x = g.op("Concat", *pieces, axis=d)
    for _ in range(n):
        hi = slice_axis(g, x, d, 1, INT64_MAX)
        lo = slice_axis(g, x, d, 0, -1)
        if is_bool(x.dtype):
            x = g.op("Xor", hi, lo)
        else:
            x = g.op("Sub", hi, lo)
    return x


# ---------------------------------------------------------------------------- repeat_interleave


def _repeat_int(g: GraphBuilder, x: Value, r: int | Value, d: int) -> Value:
    """Every slice of ``x`` along ``d`` repeated ``r`` times in place."""
    rank = x.rank
    assert rank is not None
    if isinstance(r, int) and r == 1:
        return x
    y = g.unsqueeze(x, [d + 1])
    r1 = r if isinstance(r, int) else g.cast(r, torch.int64)
    y = g.op("Expand", y, g.shape_tensor(dims_of(g, x, 0, d + 1) + [r1] + dims_of(g, x, d + 1, rank)))
    n = dim_size(g, x, d)
    merged: int | Value
    if isinstance(n, int) and isinstance(r1, int):
        merged = n * r1
    else:
        merged = g.op("Mul", _i64(g, n), _i64(g, r1))
    return reshape(g, y, dims_of(g, x, 0, d) + [merged] + dims_of(g, x, d + 1, rank))


def _source_index(g: GraphBuilder, reps: Value) -> Value:
    """For 1-d non-negative ``reps`` of length n: the 1-d int64 index i of every output
    position (``i`` repeated ``reps[i]`` times), of length ``reps.sum()``."""
    ends = g.op("CumSum", reps, g.const(0, torch.int64))
    total = g.reduce("ReduceSum", reps, None, False)
    slots = g.op("Add", total, g.const(1, torch.int64))
    zeros = g.op("ConstantOfShape", g.unsqueeze(slots, [0]), value=_i64_attr(0))
    ones = g.op("ConstantOfShape", g.shape_of(reps), value=_i64_attr(1))
    # A negative repeat (torch raises) gets an out-of-range position: onnxruntime fails too.
    ends = g.op("Where", g.op("Less", reps, g.const(0, torch.int64)), g.const(INT64_MAX, torch.int64), ends)
    marks = g.op("ScatterElements", zeros, ends, ones, axis=0, reduction="add")
    starts = g.op("CumSum", marks, g.const(0, torch.int64))
    return g.op("Slice", starts, g.const([0], torch.int64), g.unsqueeze(total, [0]), g.const([0], torch.int64))


def _i64_attr(v: int):
    return _tensor_attr(torch.tensor(v, dtype=torch.int64))


@register("torch.repeat_interleave", "Tensor.repeat_interleave")
def repeat_interleave(g, input, repeats=None, dim=None, *, output_size=None, out=None):
    """repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor |
    repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor |
    repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor"""
    check_out(g, out, "repeat_interleave")
    x = require_value(g, input, "repeat_interleave")
    if output_size is not None and not isinstance(output_size, int) and not is_graph_int(output_size):
        raise g.error(f"repeat_interleave: output_size must be an int, got {output_size!r}")
    if repeats is None:  # repeat_interleave(repeats): the indices of arange(n), repeated
        if not is_int(x.dtype) or x.rank != 1:
            raise g.error("repeat_interleave: repeats must be 0-dim or 1-dim tensor (torch raises)")
        return _source_index(g, g.cast(x, torch.int64))
    if dim is None:
        x = reshape(g, x, [-1])
        d = 0
    else:
        rank = known_rank(g, x, "repeat_interleave")
        if rank == 0:
            raise g.error("repeat_interleave of a 0-d tensor with a dim: dimension out of range (torch raises)")
        d = normalize_axis(g, dim, rank, "repeat_interleave")
    if isinstance(repeats, (int, bool)) or is_graph_int(repeats):
        r = int_arg(g, repeats, "repeat_interleave", "repeats")
        if isinstance(r, int) and r < 0:
            raise g.error("repeat_interleave: repeats can not be negative (torch raises)")
        return _repeat_int(g, x, r, d)
    reps = require_value(g, repeats, "repeat_interleave", "repeats")
    if not is_int(reps.dtype) or reps.dtype == torch.uint8:
        raise g.error(f"repeat_interleave: repeats has to be Long or Int tensor, got {reps.dtype} (torch raises)")
    if reps.rank is None or reps.rank > 1:
        raise g.error("repeat_interleave: repeats must be 0-dim or 1-dim tensor (torch raises)")
    reps = g.cast(reps, torch.int64)
    if reps.rank == 0 or reps.static_shape == (1,):
        return _repeat_int(g, x, reshape(g, reps, []), d)
    n = dim_size(g, x, d)
    if isinstance(n, int) and reps.static_shape is not None and reps.static_shape[0] != n:
        raise g.error("repeat_interleave: repeats must have the same size as input along dim (torch raises)")
    # A repeats tensor of dynamic length may still be 1: Expand broadcasts it to n.
    reps = g.op("Expand", reps, g.shape_tensor([n]))
    return g.op("Gather", x, _source_index(g, reps), axis=d)


# ---------------------------------------------------------------------------- meshgrid


@register("torch.meshgrid")
def meshgrid(g, *tensors, indexing=None):
    """meshgrid(Tensor[] tensors, *, str? indexing=None) -> Tensor[]  (indexing None is "ij", as torch)"""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise g.error("meshgrid expects a non-empty TensorList (torch raises)")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise g.error(f'meshgrid: indexing must be "ij" or "xy", got {indexing!r} (torch raises)')
    vals = [require_value(g, t, "meshgrid", "each input") for t in tensors]
    for v in vals:
        if v.rank not in (0, 1):
            raise g.error("meshgrid: expected 0D or 1D tensors (torch raises)")
        if v.dtype != vals[0].dtype:
            raise g.error("meshgrid expects all tensors to have the same dtype (torch raises)")
    vals = [g.unsqueeze(v, [0]) if v.rank == 0 else v for v in vals]
    k = len(vals)
    # xy: the grid is (n1, n0, n2, ...) and the first two inputs swap their axes.
    axis_of = list(range(k))
    if indexing == "xy" and k >= 2:
        axis_of[0], axis_of[1] = 1, 0
    order = sorted(range(k), key=lambda i: axis_of[i])
    full = g.shape_tensor([dim_size(g, vals[i], 0) for i in order])
    outs = []
    for i, v in enumerate(vals):
        shape = [1] * k
        shape[axis_of[i]] = -1
        outs.append(g.op("Expand", reshape(g, v, shape), full))
    return tuple(outs)


# ---------------------------------------------------------------------------- unfold / fold


@register("Tensor.unfold")
def unfold(g, self, dimension, size, step):
    """unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)"""
    x = require_value(g, self, "unfold")
    rank = known_rank(g, x, "unfold")
    d = normalize_axis(g, dimension, rank, "unfold")
    size = static_int(g, size, "unfold", "size")
    step = static_int(g, step, "unfold", "step")
    if size < 0:
        raise g.error(f"unfold: size is {size} but must be >= 0 (torch raises)")
    if step <= 0:
        raise g.error(f"unfold: step is {step} but must be > 0 (torch raises)")
    if rank == 0:
        if size > 1:
            raise g.error(f"unfold: maximum size for tensor at dimension 0 is 1 but size is {size} (torch raises)")
        return g.unsqueeze(x, [0]) if size == 1 else reshape(g, x, [0])
    n = dim_size(g, x, d)
    if isinstance(n, int):
        if size > n:
            raise g.error(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size} (torch raises)")
        count: int | Value = (n - size) // step + 1
        starts = g.const(torch.arange(count, dtype=torch.int64).mul(step).reshape(-1, 1))
    else:
        count = g.op("Add", g.op("Div", g.op("Sub", n, g.const(size, torch.int64)), g.const(step, torch.int64)),
                     g.const(1, torch.int64))
        starts = g.op("Range", g.const(0, torch.int64), g.op("Mul", count, g.const(step, torch.int64)), g.const(step, torch.int64))
        starts = g.unsqueeze(starts, [1])
    idx = g.op("Add", starts, g.const(torch.arange(size, dtype=torch.int64).reshape(1, -1)))
    y = g.op("Gather", x, idx, axis=d)  # [..., count, size, ...rest]
    perm = list(range(d + 1)) + list(range(d + 2, rank + 1)) + [d + 1]
    return y if perm == list(range(rank + 1)) else g.op("Transpose", y, perm=perm)


def _pair(g: GraphBuilder, v: Any, name: str, what: str) -> tuple[int, int]:
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            raise g.error(f"{name}: {what} must be an int or a pair of ints")
        return static_int(g, v[0], name, what), static_int(g, v[1], name, what)
    k = static_int(g, v, name, what)
    return k, k


@register("torch.nn.functional.fold")
def fold(g, input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """fold(Tensor input, int[2] output_size, int[2] kernel_size, int[2] dilation=1, int[2] padding=0, int[2] stride=1) -> Tensor"""
    x = require_value(g, input, "fold")
    rank = known_rank(g, x, "fold")
    if rank not in (2, 3):
        raise g.error("fold: expected 2D or 3D (batched) input tensor (torch raises)")
    (oh, ow), (kh, kw) = _pair(g, output_size, "fold", "output_size"), _pair(g, kernel_size, "fold", "kernel_size")
    (dh, dw), (ph, pw), (sh, sw) = (_pair(g, dilation, "fold", "dilation"), _pair(g, padding, "fold", "padding"),
                                    _pair(g, stride, "fold", "stride"))
    if min(kh, kw, dh, dw, sh, sw) <= 0 or min(ph, pw) < 0:
        raise g.error("fold: kernel_size, dilation and stride must be positive and padding non-negative (torch raises)")
    hp, wp = oh + 2 * ph, ow + 2 * pw
    bh, bw = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if bh <= 0 or bw <= 0:
        raise g.error("fold: the given output_size, kernel_size, dilation, padding and stride give no blocks (torch raises)")
    blocks = bh * bw
    if rank == 2:
        x = g.unsqueeze(x, [0])
    ck, length = dim_size(g, x, 1), dim_size(g, x, 2)
    if isinstance(ck, int) and ck % (kh * kw):
        raise g.error(f"fold: expected size of input's dimension 1 to be divisible by the product of kernel_size, got {ck} (torch raises)")
    if isinstance(length, int) and length != blocks:
        raise g.error(f"fold: expected input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {blocks}, "
                      f"but got {length} (torch raises)")
    ki = torch.arange(kh).repeat_interleave(kw) * dh
    kj = torch.arange(kw).repeat(kh) * dw
    bi = torch.arange(bh).repeat_interleave(bw) * sh
    bj = torch.arange(bw).repeat(bh) * sw
    pos = (ki[:, None] + bi[None, :]) * wp + (kj[:, None] + bj[None, :])  # [kh*kw, L]
    nb = dim_size(g, x, 0)
    c: int | Value = ck // (kh * kw) if isinstance(ck, int) else g.op("Div", ck, g.const(kh * kw, torch.int64))
    cols = reshape(g, x, [nb, c, kh * kw * blocks])
    idx = g.op("Expand", g.const(pos.reshape(1, 1, -1).to(torch.int64)), g.shape_of(cols))
    # onnxruntime has no half-precision or bool ScatterElements(add): sum in float32 / int64.
    work = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.bool: torch.int64}.get(x.dtype, x.dtype)
    zeros = g.op("Expand", g.const(torch.zeros((), dtype=work)), g.shape_tensor([nb, c, hp * wp]))
    img = g.cast(g.op("ScatterElements", zeros, idx, g.cast(cols, work), axis=2, reduction="add"), x.dtype)
    img = reshape(g, img, [nb, c, hp, wp])
    if ph or pw:
        img = g.op("Slice", img, g.const([ph, pw], torch.int64), g.const([ph + oh, pw + ow], torch.int64),
                   g.const([2, 3], torch.int64))
    return g.squeeze(img, [0]) if rank == 2 else img
