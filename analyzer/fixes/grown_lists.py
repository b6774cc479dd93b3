"""Python lists a rewritten loop grows (``outs.append(h)``) and the one ``torch.stack`` /
``torch.cat`` after it that reads them, cut to the items the original loop made.

A loop whose every iteration now runs (``loops.masked_break``, ``bounded.masked_range``)
appends more items than the original did; the list's one use after the loop, a
``torch.stack(outs, dim)`` or ``torch.cat``, is cut to the first ``count`` of them with
``.narrow(dim, 0, ...)``: the same values (a view of the same stacked tensor).
"""

from __future__ import annotations

import libcst as cst

from analyzer.diagnostics import Edit
from analyzer.fixes.source import FixSource
from analyzer.frontend import expr_text, ir
from analyzer.frontend.verify import assigned_names


def appends(loop: ir.Loop) -> list:
    return [s for s in loop.body if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call)
            and isinstance(s.value.func, ir.Attribute) and s.value.func.attr == "append"
            and isinstance(s.value.func.value, ir.Name)]


def block_of(body: list, loop: ir.Loop):
    for stmt in ir.walk_statements(body):
        for block in ir.child_blocks(stmt):
            if any(s is loop for s in block):
                return block, [i for i, s in enumerate(block) if s is loop][0]
    if any(s is loop for s in body):
        return body, [i for i, s in enumerate(body) if s is loop][0]
    return None, None


def stacked_after(name: str, block: list, position: int, fn: ir.FunctionDef, loop: ir.Loop):
    """(the `torch.stack(name, dim)` call, dim, the list's length before the loop) when
    that call is the list's one use after the loop, else why not."""
    before = block[:position]
    initial = None
    for stmt in before:
        if isinstance(stmt, ir.Assign) and name in assigned_names([stmt]):
            initial = len(stmt.value.elts) if isinstance(stmt.value, ir.List) and not any(
                isinstance(e, ir.Starred) for e in stmt.value.elts) else None
    if initial is None:
        return f"the list `{name}` is not made by a list display before the loop"
    uses = []
    for stmt in ir.walk_statements(fn.body):
        if stmt is loop:
            continue
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Call) and sub.args and isinstance(sub.args[0].value, ir.Name) \
                        and sub.args[0].value.id == name:
                    uses.append((stmt, sub))
    stacks = [(s, c) for s, c in uses if expr_text(c.func) in ("torch.stack", "torch.cat", "torch.concat")]
    reads = sum(1 for stmt in ir.walk_statements(fn.body) for e in ir.child_expressions(stmt)
                for sub in ir.walk_expression(e) if isinstance(sub, ir.Name) and sub.id == name)
    in_loop = sum(1 for stmt in ir.walk_statements(loop.body) for e in ir.child_expressions(stmt)
                  for sub in ir.walk_expression(e) if isinstance(sub, ir.Name) and sub.id == name)
    own = sum(1 for stmt in before if isinstance(stmt, ir.Assign) and name in assigned_names([stmt]))
    if len(stacks) != 1 or reads != in_loop + own + 1:
        return (f"the list `{name}` is used after the loop other than by one `torch.stack` (by hand: "
                f"stack it and cut it to the iterations that ran, `.narrow(dim, 0, count)`)")
    call = stacks[0][1]
    if any(s is stacks[0][0] for s in ir.walk_statements(loop.body)):
        return f"the list `{name}` is stacked inside the loop"
    dim_arg = call.args[1].value if len(call.args) > 1 and call.args[1].keyword in (None, "dim") else None
    if len(call.args) > 1 and call.args[1].keyword not in (None, "dim"):
        return f"the `torch.stack` of `{name}` has other arguments"
    if dim_arg is None:
        dim = 0
    elif isinstance(dim_arg, ir.Const) and isinstance(dim_arg.value, int) and dim_arg.value >= 0:
        dim = dim_arg.value
    else:
        return f"the list `{name}` is stacked along an axis that is not a non-negative constant"
    if any(a.star for a in call.args) or len(call.args) > 2:
        return f"the `torch.stack` of `{name}` has other arguments"
    return call, dim, initial, expr_text(call.func).rsplit(".", 1)[1]


def _cst_call_at(src: FixSource, call: ir.Call):
    return src.node_at(cst.Call, call.span.line, call.span.column)


def cut_edit(src: FixSource, torch: str, name: str, stack, count: str) -> Edit | str:
    """The edit that cuts the ``stack`` (``stacked_after``) of ``name`` to the list's items
    before the loop and the first ``count`` (code of a 0-d long tensor) it appended."""
    call, dim, initial, joined = stack
    call_node = _cst_call_at(src, call)
    if call_node is None:
        return f"the `torch.{joined}` of `{name}` was not found"
    total = count if not initial else f"({count} + {initial})"
    if joined != "stack":
        # a concatenation: as long as the first `total` items together, whatever their sizes
        total = (f"{torch}.tensor([0] + [item.shape[{dim}] for item in {name}]).cumsum(0)"
                 f"[{count}{f' + {initial}' if initial else ''}]")
    return src.edit(call_node, call_node, f"{src.code_of(call_node)}.narrow({dim}, 0, {total}.item())")


def gated_line(src: FixSource, stmt, line, carried, gate) -> str:
    """The code of one line of a masked loop body: a plain assignment to a carried name
    (``name = value``) keeps the name's old value where the iteration is masked off, as
    ``gate(name, value_code)`` (a ``torch.where``) writes it; any other line as it is."""
    target = stmt.targets[0].id if isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], ir.Name) else None
    if target in carried and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        assign = line.body[0]
        gated = assign.with_changes(value=cst.parse_expression(gate(target, src.module.code_for_node(assign.value))))
        return src.code_of(line.with_changes(body=[gated]))
    return src.code_of(line)
