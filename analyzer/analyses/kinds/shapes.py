"""What a tensor's shape depends on, beyond its values: the pieces a split returns, a
tensor sized by data (`nonzero`, a boolean mask, `repeat_interleave` by tensor repeats,
`split` by sizes from `.tolist()`), its rows and its sizes. Used by the call semantics
(`calls`) and the expressions (`expressions`) of the value-kind analysis."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.kinds.values import (
    DATA,
    FIXED_ROWS,
    KNOWN_WHEN_TRACED,
    PARAM_VALUED,
    ROWS,
    SHAPE,
    SPLIT_PIECES,
    STATIC,
    VALUES_INDICES,
    Value,
)
from analyzer.analyses.ranges import index_bounds
from analyzer.frontend import ir


def pieces(name: str, args, kwargs, piece: Value, arg_nodes=()) -> Value:
    """The tuple a tensor-splitting call returns (``args``: those after the tensor, and
    ``arg_nodes`` their expressions, keywords included): `unbind` gives one piece per row
    of a dimension (`ROWS`) -- unless it is counted from the end (`unbind(-1)`: the
    coordinates of a box, fixed by the model); `split` by sizes that are data
    (`sizes.tolist()`) gives pieces sized by data, as many as there are sizes."""
    if name == "unbind":
        dim = next((a.value for a in arg_nodes if a.keyword == "dim"), None)
        if dim is None:
            dim = next((a.value for a in arg_nodes if a.keyword is None), None)
        from_end = isinstance(dim, ir.UnaryOp) and dim.op == "-"
        return Value.container(piece, ref=None if from_end else ROWS)
    if name in ("split", "split_with_sizes", "tensor_split"):
        sizes = args[0] if args else next((v for k, v in kwargs.items() if k in _SPLIT_SIZES), None)
        if sizes is not None and _values_are_data(sizes):
            return Value.container(replace(piece, shape_level=DATA), level=DATA)
    return Value.container(piece, ref=VALUES_INDICES if name in _VALUES_INDICES else SPLIT_PIECES if name in _SPLITS else None)


_SPLITS = frozenset({"split", "split_with_sizes", "tensor_split", "chunk", "hsplit", "vsplit", "dsplit"})

# The splits whose result is the named tuple `(values, indices)`.
_VALUES_INDICES = frozenset({"topk", "sort", "kthvalue", "mode", "cummax", "cummin", "max", "min", "median", "nanmedian"})


def call_args(node) -> list:
    return list(node.args) if isinstance(node, ir.Call) else []


_SPLIT_SIZES = ("split_size_or_sections", "split_size", "split_sizes", "sections", "indices", "indices_or_sections")


def repeats_are_data(args, kwargs) -> bool:
    """`repeat_interleave` by repeats that are tensor values: its length is their sum."""
    repeats = args[0] if args else kwargs.get("repeats")
    return repeats is not None and repeats.type == "tensor" and _values_are_data(repeats)


def _values_are_data(v: Value) -> bool:
    if v.type == "tensor":
        return v.certain and v.ref not in KNOWN_WHEN_TRACED
    if v.type == "container":
        elem = v.elem
        return elem is not None and (elem.type == "python" and max(elem.level, elem.ctl) >= DATA or _values_are_data(elem))
    return False


def size_level(shape_level: Level, dim) -> Level:
    """What `t.shape[dim]` / `t.size(dim)` depends on: a tensor sized by data (`nonzero`,
    a boolean mask, `unique`) has data only in its first dimension; the others (a box's 4,
    the feature size) are the shapes they were."""
    if shape_level >= DATA and isinstance(dim, ir.Const) and isinstance(dim.value, int) and dim.value != 0:
        return SHAPE
    if shape_level >= DATA and isinstance(dim, ir.UnaryOp) and dim.op == "-" and isinstance(dim.operand, ir.Const):
        return SHAPE  # `t.shape[-1]`
    return shape_level


def row_of(tensor: Value) -> Value:
    """One row of ``tensor``, as iteration yields it: a tensor sized by data (`nonzero`)
    has rows of the sizes of its other dimensions; the rows of a tensor known when traced
    (`torch.arange(x.shape[1]) + past_length`) are known when traced too."""
    ref = tensor.ref if tensor.ref in KNOWN_WHEN_TRACED else None
    return replace(Value.tensor(tensor.certain, min(tensor.shape_level, SHAPE), ref=ref, origin="row"),
                   bound=index_bounds.row(tensor.bound))


def rows_fixed_by_model(tensor: Value) -> bool:
    """Whether iterating ``tensor`` runs a count the model fixes (`FIXED_ROWS`): no
    unrolling over the example's size, whatever the rows' values are. A param-valued
    tensor (a parameter, a buffer, a constant built from static Python values, and what
    is computed from those alone) has the size the model gave it."""
    return tensor.origin == FIXED_ROWS or tensor.ref == PARAM_VALUED


def counted_range(name: str, args, kwargs) -> bool:
    """`torch.arange(n)` / `torch.randperm(n)` of sizes the model fixes."""
    sizes = list(args) + [v for k, v in kwargs.items() if k in ("start", "end", "step", "n")]
    return name in ("torch.arange", "torch.randperm") and bool(sizes) and all(
        v.type == "python" and max(v.level, v.ctl) == STATIC for v in sizes)


def rows_level(tensor: Value) -> Level:
    """What the number of rows of ``tensor`` depends on, as the length of what iterating it
    builds: data for a tensor sized by data, static when the model fixes it, else shape."""
    if tensor.shape_level >= DATA:
        return DATA
    return STATIC if rows_fixed_by_model(tensor) else SHAPE


def row_count_level(tensor: Value) -> Level:
    """What the number of rows of ``tensor`` depends on, as a trip count: data for a
    tensor sized by data (`nonzero`, a boolean mask); otherwise static, since iterating
    a tensor is its own finding (UT105)."""
    return DATA if tensor.shape_level >= DATA else STATIC
