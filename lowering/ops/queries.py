"""Queries answered at export time, and ``as_strided`` (refused).

untrace exports in float32 with autocast off: ``torch.autocast`` blocks in forward are
exported as plain code (no casts), so ``torch.is_autocast_enabled()`` and
``torch.is_autocast_cpu_enabled()`` are ``False`` in the exported graph -- which is what
the graph computes.  ``torch.get_autocast_dtype(device)`` and the deprecated
``get_autocast_gpu_dtype``/``get_autocast_cpu_dtype`` return torch's setting at export
time (the dtype autocast *would* use; nothing is cast with it).

``Tensor.element_size()`` is the dtype's size.  ``Tensor.stride()`` is known only where
the memory layout is: a graph input, a parameter, a buffer or a constant is dense and
row-major (every ONNX input is), so its strides are torch's contiguous strides (a size-0
or size-1 dim counts as 1), symbolic dims giving graph ints.  A value computed in forward
may be a view eager lays out differently (``x.t()``, ``expand``, slicing, and the ops
that keep their input's layout after one), which a graph value does not record: asking
its stride is refused rather than answered with a guess.

``as_strided`` reinterprets a tensor's storage: its result depends on memory that
several tensors may share (and on storage offsets), not on the values of its input, so
no graph is right for it in general; it is refused with what to write instead.
"""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value
from lowering.ops._common import require_value
from lowering.ops.registry import register
from lowering.ops.shape import known_rank, normalize_axis


@register("torch.is_autocast_enabled")
def is_autocast_enabled(g, device_type=None):
    """is_autocast_enabled() -> bool | is_autocast_enabled(str device_type) -> bool
    (False: untrace exports in float32 with autocast off)"""
    return False


@register("torch.is_autocast_cpu_enabled")
def is_autocast_cpu_enabled(g):
    """is_autocast_cpu_enabled() -> bool  (False: untrace exports in float32 with autocast off)"""
    return False


@register("torch.get_autocast_dtype")
def get_autocast_dtype(g, device_type):
    """get_autocast_dtype(str device_type) -> ScalarType  (torch's setting at export time; autocast itself is off)"""
    if not isinstance(device_type, str):
        raise g.error(f"get_autocast_dtype: device_type must be a string, got {device_type!r}")
    try:
        return torch.get_autocast_dtype(device_type)
    except (RuntimeError, ValueError) as e:
        raise g.error(f"get_autocast_dtype({device_type!r}): {e} (torch raises)") from None


@register("torch.get_autocast_gpu_dtype")
def get_autocast_gpu_dtype(g):
    """get_autocast_gpu_dtype() -> ScalarType  (torch's setting at export time; autocast itself is off)"""
    return torch.get_autocast_dtype("cuda")


@register("torch.get_autocast_cpu_dtype")
def get_autocast_cpu_dtype(g):
    """get_autocast_cpu_dtype() -> ScalarType  (torch's setting at export time; autocast itself is off)"""
    return torch.get_autocast_dtype("cpu")


@register("Tensor.element_size")
def element_size(g, self):
    """element_size(Tensor self) -> int"""
    x = require_value(g, self, "element_size")
    return torch.empty((), dtype=x.dtype).element_size()


def _dense(g: GraphBuilder, v: Value) -> bool:
    """A graph input, parameter, buffer or constant: laid out dense and row-major."""
    root = g.root
    return (
        any(i.name == v.name for i in root.inputs)
        or v.name in root._init_values
        or v.name in root._const_tensors
    )


@register("Tensor.stride")
def stride(g, self, dim=None):
    """stride(Tensor self) -> int[] | stride.int(Tensor self, int dim) -> int
    (of a graph input, parameter, buffer or constant: contiguous)"""
    x = require_value(g, self, "stride")
    rank = known_rank(g, x, "stride")
    if not _dense(g, x):
        raise g.error(
            "Tensor.stride() of a value computed in forward: its memory layout in eager PyTorch (a view such as "
            "x.t() or x.expand(...), or an op that keeps such a layout) is not part of an ONNX graph",
            hint="ask the stride of a forward input or a parameter, or drop the layout logic: ONNX tensors are dense",
        )
    strides: list[int | Value] = []
    acc: int | Value = 1
    for d in reversed(range(rank)):
        strides.append(acc)
        size = x.shape[d]
        if isinstance(size, int):
            step: int | Value = max(size, 1)
        else:
            step = g.op("Max", g.size(x, d), g.const(1, torch.int64))
        if isinstance(acc, int) and isinstance(step, int):
            acc = acc * step
        else:
            a = g.const(acc, torch.int64) if isinstance(acc, int) else acc
            b = g.const(step, torch.int64) if isinstance(step, int) else step
            acc = g.op("Mul", a, b)
    strides.reverse()
    if dim is None:
        return tuple(strides)
    if rank == 0:
        raise g.error("stride: a 0-d tensor has no dimensions (torch raises)")
    return strides[normalize_axis(g, dim, rank, "stride")]


_AS_STRIDED_WHY = (
    "as_strided reads the tensor's storage through explicit strides and offsets: its result depends on memory "
    "layout and on which tensors share that memory, not only on the values of its input, so no ONNX graph is right "
    "for it in general"
)
_AS_STRIDED_HINT = (
    "write the windows it makes with value ops: Tensor.unfold(dim, size, step) for sliding windows, "
    "expand/repeat for broadcast strides (stride 0), permute/reshape/slicing for the rest"
)


@register("Tensor.as_strided", "torch.as_strided", "Tensor.as_strided_", refuses=True)
def as_strided(g, input, size, stride, storage_offset=None):
    """as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)  (refused)"""
    raise g.error(_AS_STRIDED_WHY, hint=_AS_STRIDED_HINT)


@register("torch.is_same_size", "Tensor.is_same_size")
def is_same_size(g, input, other):
    """is_same_size(Tensor self, Tensor other) -> bool: a Python bool where the shapes
    decide at export time (static, or the same symbolic dims), else a 0-d graph bool."""
    a = require_value(g, input, "is_same_size")
    b = require_value(g, other, "is_same_size")
    ra, rb = known_rank(g, a, "is_same_size"), known_rank(g, b, "is_same_size")
    if ra != rb:
        return False
    pending = []
    for i in range(ra):
        da, db = a.shape[i], b.shape[i]
        if da is not None and da == db:
            continue
        if isinstance(da, int) and isinstance(db, int):
            return False
        pending.append(g.op("Equal", g.as_value(g.size(a, i), torch.int64), g.as_value(g.size(b, i), torch.int64)))
    if not pending:
        return True
    same = pending[0]
    for p in pending[1:]:
        same = g.op("And", same, p)
    return same
