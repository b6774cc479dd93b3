"""Shape and layout ops: view/reshape/flatten, permutations, squeeze/unsqueeze,
split/chunk/unbind, and the shape helpers the other families share (expand/repeat are
in ``expansion``, cat/stack in ``concatenation``, narrow/select/flip/roll in ``slicing``).

Sizes may mix Python ints and 0-d graph ints (``x.shape[0]`` on a dynamic axis); a
symbolic dim is never baked into a constant: dims that are not static are read from
``Shape`` in the graph.  ``Reshape`` is emitted with ``allowzero=1`` whenever a target
dim may be 0, because torch's 0 means an empty dim, not "copy the input dim".

Ops whose *number of outputs* depends on a dim (``split`` with an int size, ``chunk``,
``unbind``) or whose result rank depends on a dim's value (``squeeze`` of a dim that
may or may not be 1) need that dim to be static and refuse otherwise: ONNX values
have a fixed arity and rank.

The helpers without a leading underscore (``dims_of``, ``reshape``, ``flatten_dims``,
``normalize_axis``, ...) are shared with the indexing and nn families.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from lowering.graph import GraphBuilder, Value, is_bool, is_float
from lowering.ops._common import normalize_dim, require_value
from lowering.ops.registry import register

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# ---------------------------------------------------------------------------- helpers


def known_rank(g: GraphBuilder, x: Value, name: str) -> int:
    """The rank of ``x``, refusing when ONNX could not infer it."""
    if x.rank is None:
        raise g.error(f"{name} needs the rank of its input, which is unknown here")
    return x.rank


def is_graph_int(v: Any) -> bool:
    """A 0-d integer graph value (a shape-level int such as ``x.shape[0]``)."""
    return isinstance(v, Value) and v.rank == 0 and not is_float(v.dtype) and not is_bool(v.dtype) and not v.dtype.is_complex


def int_arg(g: GraphBuilder, v: Any, name: str, what: str) -> int | Value:
    """A Python int or a 0-d graph int (cast to int64)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if is_graph_int(v):
        return g.cast(v, torch.int64)
    raise g.error(f"{name}: {what} must be an int, got {v!r}")


def static_int(g: GraphBuilder, v: Any, name: str, what: str) -> int:
    """A Python int known at export time."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    raise g.error(f"{name}: {what} must be a Python int known at export time, got {v!r}")


def normalize_axis(g: GraphBuilder, dim: Any, rank: int, name: str) -> int:
    """``dim`` in ``[-rank, rank)`` as a non-negative int (rank 0 allows -1/0 like torch)."""
    return normalize_dim(g, dim, rank, name)


def dims_of(g: GraphBuilder, x: Value, start: int = 0, end: int | None = None) -> list[int | Value]:
    """``x.shape[start:end]`` as a list for ``g.shape_tensor``: static dims as ints, and
    each run of non-static dims as one 1-d slice of ``Shape(x)``."""
    rank = x.rank
    assert rank is not None
    end = rank if end is None else end
    out: list[int | Value] = []
    i = start
    while i < end:
        d = x.shape[i]
        if isinstance(d, int):
            out.append(d)
            i += 1
            continue
        j = i
        while j < end and not isinstance(x.shape[j], int):
            j += 1
        out.append(g.op("Shape", x, start=i, end=j))
        i = j
    return out


def dim_size(g: GraphBuilder, x: Value, dim: int) -> int | Value:
    """``x.shape[dim]``: an int when static, else a 0-d int64 Value."""
    return g.size(x, dim)


def prod_of_dims(g: GraphBuilder, x: Value, start: int, end: int) -> int | Value:
    """The product of ``x.shape[start:end]``: an int when static, else a 1-d [1] Value."""
    dims = x.shape[start:end]
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)  # type: ignore[arg-type]
    return g.op("ReduceProd", g.op("Shape", x, start=start, end=end), keepdims=1)


def reshape(g: GraphBuilder, x: Value, target: Sequence[int | Value] | Value) -> Value:
    """Reshape with torch semantics (0 is an empty dim, -1 is inferred)."""
    if isinstance(target, Value):
        return g.op("Reshape", x, g.cast(target, torch.int64), allowzero=1)
    items = list(target)
    if x.static_shape is not None and all(isinstance(d, int) for d in items) and tuple(items) == x.static_shape:
        return x
    allowzero = 1 if any(isinstance(d, Value) or d == 0 for d in items) else 0
    return g.op("Reshape", x, g.shape_tensor(items), allowzero=allowzero)


def flatten_dims(g: GraphBuilder, x: Value, start: int, end: int) -> Value:
    """``x`` with dims ``start..end`` (inclusive, normalized) merged into one."""
    rank = x.rank
    assert rank is not None
    if start == end:
        return x
    merged = prod_of_dims(g, x, start, end + 1)
    target = dims_of(g, x, 0, start) + [merged] + dims_of(g, x, end + 1, rank)
    return reshape(g, x, target)


def size_list(g: GraphBuilder, size: tuple, name: str, *, allow_minus_one: bool = True) -> list[int | Value] | Value:
    """``*size`` as torch takes it (varargs or one sequence / torch.Size): Python ints and
    0-d graph ints, or one 1-d int64 shape value."""
    if len(size) == 1 and isinstance(size[0], (list, tuple, torch.Size)):
        size = tuple(size[0])
    if len(size) == 1 and isinstance(size[0], Value) and size[0].rank == 1:
        if is_float(size[0].dtype) or is_bool(size[0].dtype):
            raise g.error(f"{name}: a shape must be integral, got a {size[0].dtype} tensor")
        return g.cast(size[0], torch.int64)
    out: list[int | Value] = []
    for s in size:
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            s = int(s)
            if s < (-1 if allow_minus_one else 0):
                raise g.error(f"{name}: invalid size {s}")
            out.append(s)
        elif is_graph_int(s):
            out.append(g.cast(s, torch.int64))
        else:
            raise g.error(f"{name}: a size must be an int, got {s!r}")
    return out


def _dims_arg(dims: tuple) -> tuple:
    """``*dims`` varargs or one sequence."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple, torch.Size)):
        return tuple(dims[0])
    return dims


def concat(g: GraphBuilder, values: Sequence[Value], axis: int) -> Value:
    values = list(values)
    return values[0] if len(values) == 1 else g.op("Concat", *values, axis=axis)


def slice_axis(g: GraphBuilder, x: Value, axis: int, start: int | Value, end: int | Value, step: int = 1) -> Value:
    """``x`` sliced on one axis (ONNX clamping, which is Python's for positive steps)."""
    return g.op(
        "Slice",
        x,
        g.shape_tensor([start]),
        g.shape_tensor([end]),
        g.const([axis], torch.int64),
        g.const([step], torch.int64) if step != 1 else None,
    )


def _split_sizes(g: GraphBuilder, x: Value, dim: int, n: int, sizes: list[int]) -> tuple[Value, ...]:
    if len(sizes) == 1:
        return (x,)
    parts = g.op("Split", x, g.const(sizes, torch.int64), axis=dim, outputs=len(sizes))
    return tuple(parts)


def _static_dim(g: GraphBuilder, x: Value, dim: int, name: str, why: str) -> int:
    d = x.shape[dim]
    if not isinstance(d, int):
        raise g.error(
            f"{name}: dim {dim} has no static size ({d or 'unknown'}), and {why}",
            hint="make that axis static in the export (it is not dynamic in the model), or slice explicitly",
        )
    return d


# ---------------------------------------------------------------------------- view / reshape


@register("Tensor.view")
def view(g, self, *size):
    """view(Tensor(a) self, SymInt[] size) -> Tensor(a)  |  view.dtype(Tensor self, ScalarType dtype)"""
    x = require_value(g, self, "view")
    if len(size) == 1 and isinstance(size[0], torch.dtype):
        if size[0] == x.dtype:
            return x
        raise g.error(
            f"view(dtype) reinterprets the bytes of a {x.dtype} tensor as {size[0]}; ONNX has no bitcast",
            hint="use .to(dtype) if a value conversion is meant",
        )
    return reshape(g, x, size_list(g, size, "view"))


@register("torch.reshape")
def reshape_fn(g, input, shape):
    """reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
    return reshape(g, require_value(g, input, "reshape"), size_list(g, (shape,), "reshape"))


@register("Tensor.reshape")
def tensor_reshape(g, self, *shape):
    """Tensor.reshape(Tensor(a) self, *SymInt shape) -> Tensor(a)"""
    return reshape(g, require_value(g, self, "reshape"), size_list(g, shape, "reshape"))


@register("Tensor.view_as", "Tensor.reshape_as")
def view_as(g, self, other):
    """view_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    x = require_value(g, self, "view_as")
    o = require_value(g, other, "view_as", "other")
    if o.static_shape is not None:
        return reshape(g, x, list(o.static_shape))
    return reshape(g, x, g.shape_of(o))


@register("torch.flatten", "Tensor.flatten")
def flatten(g, input, start_dim=0, end_dim=-1):
    """flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"""
    x = require_value(g, input, "flatten")
    rank = known_rank(g, x, "flatten")
    if rank == 0:
        return g.unsqueeze(x, [0])
    s = normalize_axis(g, start_dim, rank, "flatten")
    e = normalize_axis(g, end_dim, rank, "flatten")
    if s > e:
        raise g.error("flatten() has invalid args: start_dim cannot come after end_dim (torch raises)")
    return flatten_dims(g, x, s, e)


@register("torch.ravel", "Tensor.ravel")
def ravel(g, input):
    """ravel(Tensor(a) self) -> Tensor(a)"""
    return flatten(g, input)


@register("torch.unflatten", "Tensor.unflatten")
def unflatten(g, input, dim, sizes):
    """unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)"""
    x = require_value(g, input, "unflatten")
    rank = known_rank(g, x, "unflatten")
    if rank == 0:
        raise g.error("unflatten: a 0-d tensor has no dimension to unflatten (torch raises)")
    d = normalize_axis(g, dim, rank, "unflatten")
    sz = size_list(g, (sizes,), "unflatten")
    if isinstance(sz, Value):
        raise g.error("unflatten: sizes must be a sequence of ints")
    if not sz:
        raise g.error("unflatten: sizes must be non-empty (torch raises)")
    if sum(1 for s in sz if isinstance(s, int) and s == -1) > 1:
        raise g.error("unflatten: only one dimension can be inferred (torch raises)")
    return reshape(g, x, dims_of(g, x, 0, d) + list(sz) + dims_of(g, x, d + 1, rank))


# ---------------------------------------------------------------------------- permutations


def _transpose(g: GraphBuilder, x: Value, perm: list[int]) -> Value:
    if perm == sorted(perm):
        return x
    return g.op("Transpose", x, perm=perm)


@register("torch.permute")
def permute(g, input, dims):
    """permute(Tensor(a) self, int[] dims) -> Tensor(a)"""
    x = require_value(g, input, "permute")
    rank = known_rank(g, x, "permute")
    dims = _dims_arg((dims,)) if not isinstance(dims, int) else (dims,)
    if len(dims) != rank:
        raise g.error(f"permute: number of dims ({len(dims)}) doesn't match the input rank ({rank}) (torch raises)")
    perm = [normalize_axis(g, d, rank, "permute") for d in dims]
    if len(set(perm)) != len(perm):
        raise g.error("permute: repeated dim (torch raises)")
    return _transpose(g, x, perm)


@register("Tensor.permute")
def tensor_permute(g, self, *dims):
    """Tensor.permute(Tensor(a) self, *int dims) -> Tensor(a)"""
    return permute(g, self, _dims_arg(dims))


@register(
    "torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes", "torch.swapdims", "Tensor.swapdims",
    "Tensor.transpose_", "Tensor.swapaxes_", "Tensor.swapdims_",
)
def transpose(g, input, dim0, dim1):
    """transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    x = require_value(g, input, "transpose")
    rank = known_rank(g, x, "transpose")
    a = normalize_axis(g, dim0, rank, "transpose")
    b = normalize_axis(g, dim1, rank, "transpose")
    if rank < 2 or a == b:
        return x
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return _transpose(g, x, perm)


@register("torch.t", "Tensor.t", "Tensor.t_")
def t(g, input):
    """t(Tensor(a) self) -> Tensor(a)  (0-d and 1-d unchanged)"""
    x = require_value(g, input, "t")
    rank = known_rank(g, x, "t")
    if rank > 2:
        raise g.error(f"t() expects a tensor with <= 2 dimensions, but self is {rank}D (torch raises)")
    return x if rank < 2 else g.op("Transpose", x, perm=[1, 0])


@register("torch.movedim", "Tensor.movedim", "torch.moveaxis", "Tensor.moveaxis")
def movedim(g, input, source, destination):
    """movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)"""
    x = require_value(g, input, "movedim")
    rank = known_rank(g, x, "movedim")
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise g.error("movedim: source and destination must have the same number of dims (torch raises)")
    src = [normalize_axis(g, d, rank, "movedim") for d in src]
    dst = [normalize_axis(g, d, rank, "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise g.error("movedim: repeated dim (torch raises)")
    perm: list[int | None] = [None] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(rank) if i not in src)
    full = [p if p is not None else next(rest) for p in perm]
    return _transpose(g, x, full)


# ---------------------------------------------------------------------------- squeeze / unsqueeze


@register("torch.squeeze", "Tensor.squeeze", "Tensor.squeeze_")
def squeeze(g, input, dim=None):
    """squeeze(Tensor(a) self) / squeeze.dim(self, int dim) / squeeze.dims(self, int[] dim) -> Tensor(a)"""
    x = require_value(g, input, "squeeze")
    rank = known_rank(g, x, "squeeze")
    if rank == 0:
        if dim is not None:
            for d in [dim] if isinstance(dim, int) else dim:
                normalize_axis(g, d, rank, "squeeze")
        return x
    if dim is None:
        dims = list(range(rank))
    elif isinstance(dim, (list, tuple)):
        dims = sorted({normalize_axis(g, d, rank, "squeeze") for d in dim})
    else:
        dims = [normalize_axis(g, dim, rank, "squeeze")]
    axes = []
    for d in dims:
        size = x.shape[d]
        if not isinstance(size, int):
            raise g.error(
                f"squeeze: whether dim {d} is removed depends on its size, which is not static ({size or 'unknown'})",
                hint="squeeze only axes whose size is fixed in the export, or use reshape/flatten",
            )
        if size == 1:
            axes.append(d)
    return g.squeeze(x, axes) if axes else x


@register("torch.unsqueeze", "Tensor.unsqueeze", "Tensor.unsqueeze_")
def unsqueeze(g, input, dim):
    """unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
    x = require_value(g, input, "unsqueeze")
    rank = known_rank(g, x, "unsqueeze")
    return g.unsqueeze(x, [normalize_axis(g, dim, rank + 1, "unsqueeze")])


# ---------------------------------------------------------------------------- split / chunk / unbind


@register("torch.split", "Tensor.split", "Tensor.split_with_sizes", "torch.split_with_sizes")
def split(g, tensor, split_size_or_sections, dim=0):
    """split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]  |
    split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]"""
    x = require_value(g, tensor, "split")
    rank = known_rank(g, x, "split")
    if rank == 0:
        raise g.error("split expects at least a 1-dimensional tensor (torch raises)")
    d = normalize_axis(g, dim, rank, "split")
    if isinstance(split_size_or_sections, (list, tuple)) and any(
            isinstance(s, Value) for s in split_size_or_sections):
        return _split_by_graph_sizes(g, x, d, list(split_size_or_sections))
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [static_int(g, s, "split", "a section size") for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise g.error("split: split sizes must be non-negative (torch raises)")
        n = x.shape[d]
        if isinstance(n, int) and sum(sizes) != n:
            raise g.error(f"split: sizes {sizes} do not sum to the dim size {n} (torch raises)")
        if not sizes:
            raise g.error("split: empty list of sizes")
        return _split_sizes(g, x, d, n, sizes)
    size = static_int(g, split_size_or_sections, "split", "split_size")
    n = _static_dim(g, x, d, "split", "the number of pieces depends on it")
    if size < 0 or (size == 0 and n != 0):
        raise g.error(f"split: split_size can only be 0 if the dimension size is 0, got {size} (torch raises)")
    sizes = [t.shape[0] for t in torch.empty((n, 0)).split(size, 0)]
    return _split_sizes(g, x, d, n, sizes)


def _split_by_graph_sizes(g: GraphBuilder, x: Value, d: int, sizes: list) -> tuple[Value, ...]:
    """`torch.split(h, lengths.tolist())` with a static number of pieces whose sizes the
    graph computes: ONNX Split with the sizes as a tensor input. Sizes that do not sum to
    the dim, or a negative size, raise in onnxruntime as in torch."""
    for s in sizes:
        if isinstance(s, Value) and (s.rank != 0 or s.dtype.is_floating_point or s.dtype == torch.bool):
            raise g.error(f"split: a section size must be an int or an integer computed in the graph, got {s!r}")
        if not isinstance(s, (int, Value)) or isinstance(s, bool):
            raise g.error(f"split: a section size must be an int, got {s!r}")
        if isinstance(s, int) and s < 0:
            raise g.error("split: split sizes must be non-negative (torch raises)")
    if len(sizes) == 1:
        return (x,)
    piece = tuple(None if i == d else n for i, n in enumerate(x.shape))
    return tuple(g.op("Split", x, g.shape_tensor(sizes), axis=d, outputs=len(sizes),
                      out_dtype=[x.dtype] * len(sizes), out_shape=[piece] * len(sizes)))


@register("torch.chunk", "Tensor.chunk")
def chunk(g, input, chunks, dim=0):
    """chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]"""
    x = require_value(g, input, "chunk")
    rank = known_rank(g, x, "chunk")
    if rank == 0:
        raise g.error("chunk expects at least a 1-dimensional tensor (torch raises)")
    chunks = static_int(g, chunks, "chunk", "chunks")
    if chunks <= 0:
        raise g.error("chunk expects `chunks` to be greater than 0 (torch raises)")
    d = normalize_axis(g, dim, rank, "chunk")
    n = x.shape[d]
    if not isinstance(n, int):
        return _chunk_dynamic_axis(g, x, d, chunks)
    sizes = [t.shape[0] for t in torch.empty((n, 0)).chunk(chunks, 0)]
    return _split_sizes(g, x, d, n, sizes)


class DynamicChunks(tuple):
    """`chunk`'s pieces along a dynamic axis. As a tuple, the `chunks` pieces eager returns
    when the axis is long enough (unpacking, indexing). Iterated (`lowering.interp.
    guarded_items`), piece i exists where `i < count` and is `piece(g, i)`, a slice that is
    empty, not an error, past the end."""

    value: Value
    dim: int
    step: Value
    count: Value

    def piece(self, g: GraphBuilder, i: int) -> Value:
        start = g.op("Mul", g.const(i, torch.int64), self.step)
        end = g.op("Min", g.op("Add", start, self.step), g.size(self.value, self.dim))
        return slice_axis(g, self.value, self.dim, start, end)


def _chunk_dynamic_axis(g: GraphBuilder, x: Value, d: int, chunks: int) -> tuple[Value, ...]:
    """`chunk` along a dynamic axis of size n: pieces of step = ceil(n / chunks), the last
    one what is left, ceil(n / step) of them (`chunks` empty ones when n is 0). Eager
    returns fewer than `chunks` pieces when the last would be empty (n=4, chunks=3 gives
    two). Iterating over them runs the body for each piece that exists (`DynamicChunks`); as a tuple
    of fixed arity, the last size is made negative exactly then, and ONNX Split fails at
    run time instead of returning a wrong number of pieces (eager code that unpacks the
    pieces fails there too)."""
    if chunks == 1:
        return (x,)
    n = g.size(x, d)
    step = g.op("Div", g.op("Add", n, g.const(chunks - 1, torch.int64)), g.const(chunks, torch.int64))
    last = g.op("Sub", n, g.op("Mul", step, g.const(chunks - 1, torch.int64)))
    fewer = g.op("And", g.op("Greater", n, g.const(0, torch.int64)),
                 g.op("LessOrEqual", last, g.const(0, torch.int64)))
    last = g.op("Where", fewer, g.const(-1, torch.int64), last)
    pieces = DynamicChunks(_split_by_graph_sizes(g, x, d, [step] * (chunks - 1) + [last]))
    one = g.const(1, torch.int64)
    count = g.op("Div", g.op("Sub", g.op("Add", n, step), one), g.op("Max", step, one))
    pieces.count = g.op("Where", g.op("Equal", n, g.const(0, torch.int64)), g.const(chunks, torch.int64), count)
    pieces.value, pieces.dim, pieces.step = x, d, step
    return pieces


@register("torch.unbind", "Tensor.unbind")
def unbind(g, input, dim=0):
    """unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"""
    x = require_value(g, input, "unbind")
    rank = known_rank(g, x, "unbind")
    if rank == 0:
        raise g.error("unbind: dimension specified as 0 but tensor has no dimensions (torch raises)")
    d = normalize_axis(g, dim, rank, "unbind")
    n = _static_dim(g, x, d, "unbind", "the number of results depends on it")
    return tuple(g.op("Gather", x, g.const(i, torch.int64), axis=d) for i in range(n))


# ---------------------------------------------------------------------------- tensor_split / hsplit / vsplit / dsplit


@register("torch.tensor_split", "Tensor.tensor_split")
def tensor_split(g, input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """tensor_split.sections(Tensor self, SymInt sections, int dim=0) -> Tensor[]  |
    tensor_split.indices(Tensor self, SymInt[] indices, int dim=0) -> Tensor[]  |
    tensor_split.tensor_indices_or_sections(Tensor self, Tensor tensor_indices_or_sections, int dim=0) -> Tensor[]

    ``sections`` n: n pieces, the first ``size % n`` one longer (a dynamic axis is fine:
    the count is n, the sizes come from the graph).  ``indices``: the pieces
    ``x[:i0], x[i0:i1], ..., x[ik:]`` with Python's slice clamping (they may be empty or
    overlap), one Slice each; an index may be computed in the graph.  A 1-d int64 tensor
    is a list of indices (its length must be static), a 0-d one a section count (its value
    must be known at export time: it sets the number of results)."""
    given = [a for a in (indices_or_sections, sections, indices, tensor_indices_or_sections) if a is not None]
    if len(given) != 1:
        raise g.error("tensor_split takes exactly one of indices_or_sections / sections / indices")
    spec = given[0]
    x = require_value(g, input, "tensor_split")
    rank = known_rank(g, x, "tensor_split")
    if rank == 0:
        raise g.error("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims "
                      "(torch raises)")
    d = normalize_axis(g, dim, rank, "tensor_split")
    if isinstance(spec, Value):
        if spec.dtype != torch.int64:
            raise g.error(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                          f"{spec.dtype} (torch raises)")
        if spec.rank == 0:
            known = g.const_value(spec)
            if known is None:
                raise g.error("tensor_split: a 0-d tensor of sections computed in the graph sets the number of "
                              "results, which must be known at export time",
                              hint="pass the number of sections as a Python int")
            spec = int(known)
        elif spec.rank == 1:
            count = spec.shape[0]
            if not isinstance(count, int):
                raise g.error("tensor_split: the number of indices (the length of the 1-d index tensor) sets the "
                              "number of results, which must be static",
                              hint="give the index tensor a static length, or pass a list of ints")
            spec = [g.op("Gather", spec, g.const(i, torch.int64), axis=0) for i in range(count)]
        else:
            raise g.error("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                          f"one-dimensional tensor, but got a tensor with {spec.rank} dims (torch raises)")
    if isinstance(spec, (list, tuple)):
        bounds = [int_arg(g, i, "tensor_split", "an index") for i in spec]
        starts = [0, *bounds]
        ends = [*bounds, INT64_MAX]
        return tuple(slice_axis(g, x, d, s, e) for s, e in zip(starts, ends))
    n = static_int(g, spec, "tensor_split", "sections")
    if n <= 0:
        raise g.error(f"tensor_split: number of sections must be larger than 0, got {n} (torch raises)")
    return _sections(g, x, d, n)


def _sections(g: GraphBuilder, x: Value, d: int, n: int) -> tuple[Value, ...]:
    """``n`` pieces along ``d``: the first ``size % n`` of ``size // n + 1``, the rest ``size // n``."""
    size = x.shape[d]
    if isinstance(size, int):
        sizes = [size // n + (1 if i < size % n else 0) for i in range(n)]
        return _split_sizes(g, x, d, size, sizes)
    if n == 1:
        return (x,)
    size = g.size(x, d)
    base = g.op("Div", size, g.const(n, torch.int64))
    extra = g.op("Mod", size, g.const(n, torch.int64))
    sizes = [g.op("Add", base, g.cast(g.op("Less", g.const(i, torch.int64), extra), torch.int64)) for i in range(n)]
    return _split_by_graph_sizes(g, x, d, sizes)


def _split_along(name: str, min_rank: int, axis_of_rank):
    def lower(g, input, indices_or_sections):
        x = require_value(g, input, name)
        rank = known_rank(g, x, name)
        if rank < min_rank:
            raise g.error(f"torch.{name} requires a tensor with at least {min_rank} dimension, but got a tensor "
                          f"with {rank} dimensions (torch raises)")
        d = axis_of_rank(rank)
        if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
            n = int(indices_or_sections)
            size = _static_dim(g, x, d, name, "an int split must divide it exactly, which torch checks")
            if n <= 0 or size % n:
                raise g.error(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                              f"{size} is not divisible by the split_size {n} (torch raises)")
        return tensor_split(g, x, indices_or_sections, d)

    lower.__name__ = name
    lower.__doc__ = (f"{name}(Tensor(a -> *) self, int sections | int[] indices) -> Tensor(a)[]  (tensor_split "
                     f"along dim {'1 (0 for 1-d)' if name == 'hsplit' else 0 if name == 'vsplit' else 2}; "
                     "an int must divide the dim)")
    return lower


register("torch.hsplit", "Tensor.hsplit")(_split_along("hsplit", 1, lambda r: 0 if r == 1 else 1))
register("torch.vsplit", "Tensor.vsplit")(_split_along("vsplit", 2, lambda r: 0))
register("torch.dsplit", "Tensor.dsplit")(_split_along("dsplit", 3, lambda r: 2))
