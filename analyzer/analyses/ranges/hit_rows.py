"""Emptiness tests on the nonzeros of a row that the loop visits because it has one.

    expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert_idx in expert_hit:
        expert_idx = expert_idx.item()
        top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
        if token_idx.numel() == 0:     # never true: the row's sum is > 0
            continue

A row ``e`` of `(M.sum(<every axis but 0>) > 0).nonzero()` has a nonzero sum, so `M[e]`
is not all zeros and each index tensor `torch.where(M[e])` returns has at least one
entry: `numel() == 0` is False for every input (and `!= 0`, `> 0` True). The trace's
branch is eager's. Decided only when the function binds the mask and the hit rows once
(the mask before the rows, no write into the mask anywhere), the loop iterates the rows
themselves, and between the loop head and the test the row is only picked (`e[0]`,
`e.item()`, `int(e.item())`, `torch.sym_int(e.item())`) and the mask only indexed by it (`M[e]`, `.squeeze(0)`);
the comparison of the sum is one that zero fails (`> 0`, `!= 0`, `>= c` for c > 0). Any
other shape of the code is left to the other analyses."""

from __future__ import annotations

from analyzer.analyses.engine.memo import per_function_cache
from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.ranges.axis_sizes import argument, int_value
from analyzer.analyses.ranges.index_bounds import zero_stays_false
from analyzer.frontend import expr_text, ir
from analyzer.frontend.verify import target_names

_COMPARISONS = {">": "gt", ">=": "ge", "!=": "ne", "==": "eq"}
_TRUTH_OF_EMPTY = {"==": False, "<=": False, "!=": True, ">": True}  # `numel() <op> 0` for a non-empty tensor


@per_function_cache
def emptiness_tests(fn: ir.FunctionDef) -> dict:
    """id(test) -> its truth, for the tests of the function decided by the invariant above."""
    assigned = _assignments(fn)
    written = _written_into(fn)
    out = {}
    for loop in ir.walk_statements(fn.body):
        if not (isinstance(loop, ir.Loop) and loop.kind == "for" and isinstance(loop.target, ir.Name)
                and isinstance(loop.iter, ir.Name)):
            continue
        mask = _hit_mask(loop.iter.id, assigned)
        if mask is None or _may_be_written(mask, assigned, written):
            continue
        rows, nonempty = {loop.target.id}, set()
        for s in loop.body:
            if isinstance(s, ir.If):
                truth = _emptiness(s.test, nonempty)
                if truth is not None:
                    out[id(s.test)] = truth
            bound = {n for inner in ir.walk_statements([s], into_defs=True) for n in _bound_names(inner)}
            if isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ir.Name) and _picks(s.value, rows):
                rows = {s.targets[0].id}
            elif isinstance(s, ir.Assign) and len(s.targets) == 1 and _where_of_row(s.value, mask, rows):
                nonempty = {e.id for e in s.targets[0].elts} if isinstance(s.targets[0], ir.Tuple) else set()
            else:
                rows -= bound  # anything else that binds a name (in a branch too) forgets it
                nonempty -= bound
                if mask in bound:
                    break
    return out


def _hit_mask(hits: str, assigned: dict) -> str | None:
    """The mask ``hits`` is the hit rows of, when the invariant's conditions hold."""
    writes = assigned.get(hits, [])
    if len(writes) != 1 or not isinstance(writes[0][1], ir.Assign):
        return None
    at, value = writes[0][0], writes[0][1].value
    if isinstance(value, ir.Call) and isinstance(value.func, ir.Attribute) and value.func.attr == "squeeze" \
            and [int_value(a.value) for a in value.args] == [-1]:
        value = value.func.value  # `.nonzero().squeeze(-1)`: the rows as scalars
    if not (isinstance(value, ir.Call) and isinstance(value.func, ir.Attribute) and value.func.attr == "nonzero"
            and all(a.keyword == "as_tuple" and isinstance(a.value, ir.Const) and a.value.value is False for a in value.args)):
        return None
    summed = _positive_test(value.func.value)
    if summed is None or not isinstance(summed.func.value, ir.Name):
        return None
    mask = summed.func.value.id
    mask_writes = assigned.get(mask, [])
    rank = _rank(mask_writes[-1][1]) if mask_writes else None
    dims = argument(summed, 0, "dim")
    removed = [int_value(d) for d in dims.elts] if isinstance(dims, (ir.Tuple, ir.List)) else [int_value(dims)]
    if rank is None or None in removed or {d % rank for d in removed} != set(range(1, rank)) or len(summed.args) != 1:
        return None
    if any(not isinstance(w, ir.Assign) or i >= at for i, w in mask_writes):
        return None  # the mask is bound before the rows, and kept
    return mask


def _may_be_written(mask: str, assigned: dict, written: set) -> bool:
    """Whether the mask's storage may be written: through its name, through what it was
    computed from (it may be a view of it), or through a name computed from it."""
    sources = {n for _, w in assigned.get(mask, []) for n in _names_read(w.value)}
    if mask in written or sources & written:
        return True
    return any(mask in _names_read(w.value) for name in written for _, w in assigned.get(name, [])
               if isinstance(w, ir.Assign))


def _names_read(e) -> set:
    return {sub.id for sub in ir.walk_expression(e) if isinstance(sub, ir.Name)} if e is not None else set()


def _positive_test(e) -> ir.Call | None:
    """``S`` of `torch.greater(S, 0)`, `S > 0`, `S.gt(0)`, ... when zero fails the test, and
    ``S`` is `M.sum(dims)`."""
    if isinstance(e, ir.Compare) and len(e.ops) == 1 and e.ops[0] in _COMPARISONS:
        summed, op, other = e.left, _COMPARISONS[e.ops[0]], e.comparators[0]
    elif isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and isinstance(e.func.value, ir.Name) \
            and e.func.value.id == "torch" and len(e.args) == 2:
        summed, op, other = e.args[0].value, e.func.attr, e.args[1].value
    elif isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and len(e.args) == 1:
        summed, op, other = e.func.value, e.func.attr, e.args[0].value
    else:
        return None
    if not (isinstance(other, ir.Const) and type(other.value) in (int, float) and zero_stays_false(op, other.value)):
        return None
    if isinstance(summed, ir.Call) and isinstance(summed.func, ir.Attribute) and summed.func.attr == "sum":
        return summed
    return None


def _rank(write) -> int | None:
    """The number of dimensions of what ``write`` binds, when it ends in a `permute`."""
    value = write.value if isinstance(write, ir.Assign) else None
    if isinstance(value, ir.Call) and isinstance(value.func, ir.Attribute) and value.func.attr == "permute":
        order = [a.value for a in value.args]
        order = list(order[0].elts) if len(order) == 1 and isinstance(order[0], (ir.Tuple, ir.List)) else order
        return len(order) if all(int_value(o) is not None for o in order) else None
    return None


def _picks(e, rows: set) -> bool:
    """`r`, `r[0]`, `r.item()`, `int(r.item())` of a row ``r`` (`torch.sym_int`, what `--fix`
    writes for `int`, is the same number in eager)."""
    if (isinstance(e, ir.Call) and len(e.args) == 1 and e.args[0].keyword is None
            and (isinstance(e.func, ir.Name) and e.func.id == "int" or expr_text(e.func) == "torch.sym_int")):
        e = e.args[0].value
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and e.func.attr == "item" and not e.args:
        e = e.func.value
    if isinstance(e, ir.Subscript) and isinstance(e.index, ir.Const) and e.index.value == 0:
        e = e.value
    return isinstance(e, ir.Name) and e.id in rows


def _where_of_row(e, mask: str, rows: set) -> bool:
    """`torch.where(M[e])` or `torch.where(M[e].squeeze(0))` (the indices of its nonzeros)."""
    if not (isinstance(e, ir.Call) and expr_text(e.func) == "torch.where" and len(e.args) == 1 and e.args[0].keyword is None):
        return False
    row = e.args[0].value
    if isinstance(row, ir.Call) and isinstance(row.func, ir.Attribute) and row.func.attr == "squeeze":
        row = row.func.value
    return (isinstance(row, ir.Subscript) and isinstance(row.value, ir.Name) and row.value.id == mask
            and isinstance(row.index, ir.Name) and row.index.id in rows)


def _emptiness(test, nonempty: set) -> bool | None:
    if not (isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0] in _TRUTH_OF_EMPTY):
        return None
    left, right = test.left, test.comparators[0]
    if not (isinstance(right, ir.Const) and right.value == 0 and type(right.value) is int):
        return None
    if (isinstance(left, ir.Call) and isinstance(left.func, ir.Attribute) and left.func.attr == "numel" and not left.args
            and isinstance(left.func.value, ir.Name) and left.func.value.id in nonempty):
        return _TRUTH_OF_EMPTY[test.ops[0]]
    return None


def _assignments(fn: ir.FunctionDef) -> dict:
    """name -> (position in source order, statement) of the statements that bind it."""
    out: dict[str, list] = {}
    for i, s in enumerate(ir.walk_statements(fn.body, into_defs=True)):
        for name in _bound_names(s):
            out.setdefault(name, []).append((i, s))
    return out


def _bound_names(s) -> set:
    targets = list(s.targets) if isinstance(s, ir.Assign) else [s.target] if isinstance(s, ir.AugAssign) else \
        [s.target] if isinstance(s, ir.Loop) and s.target is not None else []
    if isinstance(s, ir.With):
        targets = [item[1] for item in s.items if len(item) > 1 and item[1] is not None]
    return {name for t in targets for name in target_names(t)}


def _written_into(fn: ir.FunctionDef) -> set:
    """The names whose storage the function writes into: `m[i] = ...`, `m += ...` (in
    place), `m.<op>_(...)`."""
    out = set()
    for stmt in ir.walk_statements(fn.body, into_defs=True):
        targets = list(stmt.targets) if isinstance(stmt, ir.Assign) else [stmt.target] if isinstance(stmt, ir.AugAssign) else []
        for t in targets:
            if isinstance(t, (ir.Subscript, ir.Attribute)) or isinstance(stmt, ir.AugAssign):
                out.add(_base_name(t))
        for e in ir.child_expressions(stmt):
            for sub in ir.walk_expression(e):
                if (isinstance(sub, ir.Call) and isinstance(sub.func, ir.Attribute)
                        and (api.is_inplace_method(sub.func.attr) or sub.func.attr in api.INDEX_PUT_METHODS)):
                    out.add(_base_name(sub.func.value))
    return out


def _base_name(e) -> str | None:
    while isinstance(e, (ir.Subscript, ir.Attribute)):
        e = e.value
    return e.id if isinstance(e, ir.Name) else None
