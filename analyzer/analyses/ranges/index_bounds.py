"""Static bounds on index values: the row indices `nonzero()` returns along an axis whose
size the model fixes are below that size, so a test that one equals the size is never
true, for every input.

The mixture-of-experts loop reads

    expert_mask = one_hot(top_k_index, num_classes=self.num_experts).permute(2, 1, 0)
    expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert_idx in expert_hit:
        expert_idx = expert_idx[0]
        if expert_idx == self.num_experts:  # never true: rows of an axis of that size
            continue

The loop is the finding (UT102); the test in it is not: the trace's "not taken" is what
eager does for every input. With `num_classes=self.num_experts + 1` the test can be true
and stays a finding -- unless the indices one-hot encodes are themselves known to be below
`self.num_experts` (`axis_sizes`: the router's `topk` over its `num_experts` logits, passed
in by every caller, `caller_bounds`): then only the first `self.num_experts` classes can
be hot, and the test is again never true.

A tensor's `Value.bound` carries what is known, as a tagged tuple:

- `("axis", axis, ndim, size)`: dimension ``axis`` has the size ``size`` (counted from
  the end when negative, ``ndim`` None when the number of dimensions is unknown);
- `("column", col, size)`: the result of `nonzero()`: column ``col`` holds indices along
  an axis of size ``size``, so they are below it;
- `("row", col, size)`: one row of that result, as iteration yields it;
- `("below", size)`: a single index below ``size``;
- `("index", size)`: every entry of the tensor is an index below ``size``;
- `("hot", axis, ndim, size)`: along dimension ``axis``, only the first ``size``
  positions can hold a nonzero (the one-hot encoding of an `("index", size)` tensor).

``size`` is the text of the expression: only attributes of `self` and integer constants
with arithmetic on them, which a forward does not rebind, so the same text at the test
is the same number; or, where the construction tells where the number came from, its
symbol (`symbolic_sizes`: `@config.num_experts`), to which the test's text is named."""

from __future__ import annotations

from analyzer.analyses.ranges.axis_sizes import argument as _argument
from analyzer.analyses.ranges.axis_sizes import fixed_size as _fixed_size
from analyzer.analyses.ranges.axis_sizes import index_piece, sized_result
from analyzer.analyses.ranges.axis_sizes import int_value as _int
from analyzer.frontend import expr_text, ir

_ONE_HOT = ("torch.nn.functional.one_hot",)
_GREATER = ("greater", "gt", "ne", "not_equal", "ge", "greater_equal", "lt", "le", "less", "less_equal", "eq")


def after_call(name: str, arg_bounds: list, node) -> tuple | None:
    """The bound of the result of a call to ``name`` (a qualified torch function, or a
    tensor method), ``arg_bounds`` the bounds of its arguments (the receiver first for a
    method), ``node`` its expression."""
    if not isinstance(node, ir.Call):
        return None
    recv_bound = arg_bounds[0] if arg_bounds else None
    if name in _ONE_HOT:
        if recv_bound is not None and recv_bound[0] == "index":
            return ("hot", -1, None, recv_bound[1])  # classes past the indices' bound stay cold
        classes = _argument(node, 1, "num_classes")
        if classes is not None and _fixed_size(classes) and not _is_negative_one(classes):
            return ("axis", -1, None, expr_text(classes))
        return None
    sized = sized_result(name, arg_bounds, node)
    if sized is not None:
        return sized
    indices = index_piece(name, recv_bound, node)
    if indices is not None and indices[0] < 0:
        return indices[1]  # `argmax(-1)`, `argsort(-1)`: one tensor of indices
    if recv_bound is None or recv_bound[0] not in ("axis", "hot"):
        return None
    short = name.rsplit(".", 1)[-1]
    kind, axis, ndim, size = recv_bound
    if short == "permute":
        return _permuted(kind, axis, ndim, size, _ints(node, skip=0 if "." not in name else 1))
    if short == "sum":
        return _summed(kind, axis, ndim, size, node, skip=0 if "." not in name else 1)
    if short in _GREATER:
        other = _argument(node, 0 if "." not in name else 1, "other")
        if not isinstance(other, ir.Const) or not isinstance(other.value, (int, float)) or isinstance(other.value, bool):
            return None
        return recv_bound if kind == "axis" or zero_stays_false(short, other.value) else None
    if short == "nonzero" and not any(a.keyword == "as_tuple" for a in node.args):
        axis = axis if axis >= 0 else (ndim + axis if ndim is not None else None)
        return ("column", axis, size) if axis is not None else None
    return None


def zero_stays_false(comparison: str, other) -> bool:
    """Whether comparing 0 with ``other`` is false, so that cold positions stay cold."""
    if comparison in ("greater", "gt"):
        return other >= 0
    if comparison in ("ge", "greater_equal"):
        return other > 0
    if comparison in ("ne", "not_equal"):
        return other == 0
    if comparison == "eq":
        return other != 0
    return False


def row(bound) -> tuple | None:
    """The bound of one row of a tensor of bound ``bound``, as iteration yields it."""
    return ("row", bound[1], bound[2]) if bound is not None and bound[0] == "column" else None


def picked(bound, index_node) -> tuple | None:
    """The bound of ``row[index_node]``: the column's index, below the size."""
    if bound is not None and bound[0] == "row" and isinstance(index_node, ir.Const) and index_node.value == bound[1]:
        return ("below", bound[2])
    return None


def decided(test, bound, same=None) -> bool:
    """Whether the comparison ``test`` of an index of bound ``bound`` with its bound is the
    same for every input: false for `i == size`, `i >= size`, `i > size`, true for
    `i != size`, `i < size`, `i <= size`. ``same(text, size)`` tells whether a size text
    is a (symbolic, `symbolic_sizes`) size."""
    if bound is None or bound[0] != "below" or not isinstance(test, ir.Compare) or len(test.ops) != 1:
        return False
    if not (test.ops[0] in ("==", ">=", ">", "!=", "<", "<=") and _fixed_size(test.comparators[0])):
        return False
    text = expr_text(test.comparators[0])
    return text == bound[1] or same is not None and same(text, bound[1])


def _permuted(kind, axis, ndim, size, order) -> tuple | None:
    if not order or (ndim is not None and ndim != len(order)):
        return None
    n = len(order)
    order = [p % n for p in order]
    if sorted(order) != list(range(n)):
        return None
    return (kind, order.index(axis % n), n, size)


def _summed(kind, axis, ndim, size, node, skip) -> tuple | None:
    dims = _argument(node, skip, "dim")
    keep = _argument(node, skip + 1, "keepdim")
    if ndim is None or dims is None:
        return None  # a sum over everything, or over axes we cannot place
    if keep is not None and not (isinstance(keep, ir.Const) and keep.value is False):
        return None
    removed = _int_list(dims)
    if removed is None:
        return None
    removed = {d % ndim for d in removed}
    axis %= ndim
    if axis in removed:
        return None
    return (kind, axis - sum(1 for d in removed if d < axis), ndim - len(removed), size)


def _ints(node: ir.Call, skip: int) -> list[int] | None:
    positional = [a.value for a in node.args if a.keyword is None and not a.star][skip:]
    if len(positional) == 1 and isinstance(positional[0], (ir.Tuple, ir.List)):
        return _int_list(positional[0])
    return _int_list(ir.Tuple(positional)) if positional else None


def _int_list(node) -> list[int] | None:
    elts = node.elts if isinstance(node, (ir.Tuple, ir.List)) else [node]
    out = []
    for e in elts:
        value = _int(e)
        if value is None:
            return None
        out.append(value)
    return out


def _is_negative_one(e) -> bool:
    return _int(e) == -1
