"""A list filtered by a tensor test and then stacked, as one masked tensor:

    kept = [f(t) for t in x if p(t)]             kept = torch.stack([f(t) for t in xs])[torch.stack([p(t) for t in xs])]
                                          ->     torch._check(kept.shape[0] > 0)
    pooled = torch.stack(kept).mean(0)           pooled = kept.mean(0)
    n = len(kept)                                n = kept.shape[0]

and the same for the loop that grows it (``kept = []`` / ``for t in x: if p(t):
kept.append(f(t))``); ``xs`` is ``x``, or ``x.unbind(0)`` (the same rows) when ``x`` is a tensor.
``filtered_comprehension(...)`` and ``filtered_loop(...)`` give the
``Fix``, why there is none, or None when the site is not of this form.

Why: the number of items is data; a list of that length has no form in a graph, but a
boolean mask over the stacked items does (torch.export keeps the selection's length an
unbacked SymInt). The same values: ``torch.stack(all)[mask]`` holds the kept items in
order, which is ``torch.stack(kept)``; ``len(kept)`` is its first size. The list, and the
``torch.stack`` that raised on an empty one, become a tensor and a ``torch._check`` on
its length (``RuntimeError`` in both).

Unsafe: ``f`` now runs on every item, also those the test drops (it must be free of side
effects, and not fail on them), and every ``f(t)`` must have one shape, as ``torch.stack``
of the kept ones needed. Refused: a list used other than by ``torch.stack(kept)`` (along
the first axis) and ``len(kept)``, an iterable that is not a name (it is read twice), a
test that is not a boolean tensor.
"""

from __future__ import annotations

import libcst as cst

from analyzer.diagnostics import Edit, Fix
from analyzer.fixes.cond import is_tensor
from analyzer.fixes.source import FixSource
from analyzer.fixes.where import side_effect_free
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names

APPLICABILITY = "unsafe"


def _uses(fn: ir.FunctionDef, name: str, torch: str, grown: ir.Stmt | None = None):
    """The (statement, call) of every use of ``name`` in ``fn`` but its binding: each must be
    ``torch.stack(name)`` (along axis 0) or ``len(name)``; else why not."""
    stacks, lengths = [], []
    allowed: set[int] = set()
    if grown is not None:  # the loop's own `name.append(item)`
        allowed.add(id(grown.value.func.value))
    for stmt in ir.walk_statements(fn.body):
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if not (isinstance(sub, ir.Call) and sub.args and isinstance(sub.args[0].value, ir.Name)
                        and sub.args[0].value.id == name and not sub.args[0].star and sub.args[0].keyword is None):
                    continue
                func = sub.func
                if isinstance(func, ir.Name) and func.id == "len" and len(sub.args) == 1:
                    lengths.append((stmt, sub))
                    allowed.add(id(sub.args[0].value))
                elif (isinstance(func, ir.Attribute) and func.attr == "stack" and isinstance(func.value, ir.Name)
                      and func.value.id == torch and (len(sub.args) == 1 or (
                          len(sub.args) == 2 and sub.args[1].keyword in (None, "dim")
                          and isinstance(sub.args[1].value, ir.Const) and sub.args[1].value.value == 0))):
                    stacks.append((stmt, sub))
                    allowed.add(id(sub.args[0].value))
    for stmt in ir.walk_statements(fn.body):
        if name in assigned_names([stmt]) and not isinstance(stmt, (ir.If, ir.Loop, ir.With, ir.Try)):
            continue
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Name) and sub.id == name and id(sub) not in allowed:
                    return None, None
    return stacks, lengths


def _masked(torch: str, element: str, target: str, iterable: str, test: str) -> str:
    return (f"{torch}.stack([{element} for {target} in {iterable}])"
            f"[{torch}.stack([{test} for {target} in {iterable}])]")


def _call_of(where: FixSource, call, name: str):
    """The libcst call ``f(name, ...)`` starting where ``call`` does (not an outer call of
    the same start, ``torch.stack(kept).mean(0)``)."""
    node = where.node_at(cst.Call, call.span.line, call.span.column)
    while isinstance(node, cst.Call):
        if node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == name:
            return node
        node = node.func.value if isinstance(node.func, cst.Attribute) else None
    return None


def _use_edits(src_of, stacks, lengths, name: str) -> list[Edit] | str:
    edits = []
    for _, call in stacks:
        where = src_of(call.span.line)
        node = _call_of(where, call, name)
        if node is None:
            return f"the `stack` of `{name}` was not found"
        edits.append(where.edit(node, node, name))
    for _, call in lengths:
        where = src_of(call.span.line)
        node = _call_of(where, call, name)
        if node is None:
            return f"the `len` of `{name}` was not found"
        edits.append(where.edit(node, node, f"{name}.shape[0]"))
    return edits


def _common_refusal(fn, name: str, torch: str, after_line: int, grown=None):
    if sum(name in assigned_names([s]) for s in ir.walk_statements(fn.body)
           if not isinstance(s, (ir.If, ir.Loop, ir.With, ir.Try))) != 1:
        return f"`{name}` is bound more than once", None, None
    stacks, lengths = _uses(fn, name, torch, grown)
    if stacks is None:
        return (f"`{name}` is used other than by `{torch}.stack({name})` and `len({name})` (by hand: stack every "
                f"item and select with the mask, `{torch}.stack(items)[{torch}.stack(tests)]`)"), None, None
    if not stacks:
        return f"`{name}` is not stacked (a list of data-dependent length has no graph form)", None, None
    if any(s not in fn.body for s, _ in stacks) or any(s.span.line <= after_line for s, _ in stacks):
        return f"the `stack` of `{name}` is not a statement of the function's own body after the list", None, None
    return None, stacks, lengths


def filtered_comprehension(file, fact, types, torch_name) -> Fix | str | None:
    from analyzer.fixes.escapes import _function_at

    src = file.source_at(fact.site.line)
    node = None
    for kind in (cst.Comparison, cst.Call, cst.Name, cst.Attribute, cst.UnaryOperation, cst.BooleanOperation,
                 cst.Subscript):
        node = src.node_at(kind, fact.site.line, fact.site.column)
        if node is not None:
            break
    while node is not None and not isinstance(node, (cst.ListComp, cst.BaseStatement)):
        node = src.parents.get(node)
    if not isinstance(node, cst.ListComp):
        return None
    comp = node.for_in
    if comp.inner_for_in is not None or len(comp.ifs) != 1 or comp.asynchronous is not None:
        return "the comprehension has more than one `for` or `if`"
    statement = src.parents.get(node)
    if not (isinstance(statement, cst.Assign) and statement.value is node and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)):
        return "the filtered list is not assigned to a name"
    name = statement.targets[0].target.value
    if not (isinstance(comp.target, cst.Name) and isinstance(comp.iter, (cst.Name, cst.Attribute))):
        return "the comprehension does not iterate a name into a name (the rewrite reads the iterable twice)"
    if "/bool" not in types.get("$pred", "") or not is_tensor(types.get("$pred", "")):
        return "the test is not a boolean tensor (the rewrite stacks the tests into a mask)"
    torch = torch_name(src, node)
    if not side_effect_free(node.elt, tensor_methods=True, torch=torch) or not side_effect_free(
            comp.ifs[0].test, tensor_methods=True, torch=torch):
        return "an item or its test may have side effects, and the rewrite computes every item"
    fn = _function_at(file, fact.site.line)
    if fn is None:
        return "the function was not found"
    line = src.positions[statement].start.line
    why, stacks, lengths = _common_refusal(fn, name, torch, line)
    if why:
        return why
    iterable = src.code_of(comp.iter) + (".unbind(0)" if types.get("$iter") == "tensor" else "")
    text = _masked(torch, src.code_of(node.elt), comp.target.value, iterable, src.code_of(comp.ifs[0].test))
    line_node = src.parents.get(statement)
    edits = [src.edit(node, node, text)]
    uses = _use_edits(file.source_at, stacks, lengths, name)
    if isinstance(uses, str):
        return uses
    return _with_check(src, line_node, name, torch, edits + uses, "comprehension")


def _with_check(src: FixSource, line_node, name: str, torch: str, edits: list, what: str) -> Fix | str:
    if not isinstance(line_node, cst.SimpleStatementLine):
        return "the list is not bound by a statement of its own line"
    end = src.positions[line_node].end
    indent = src.indent_of(line_node)
    # a new line after the binding's own (its comment stays where it is)
    line_text = src.lines[end.line - 1]
    edits.append(Edit(end.line, len(line_text.rstrip("\r\n")) + 1, end.line, len(line_text.rstrip("\r\n")) + 1,
                      f"\n{indent}{torch}._check({name}.shape[0] > 0)"))
    if not src.parses_after(edits[0], statement=False) and not src.parses_after(edits[0], statement=True):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Stack every item and select the kept ones with the stacked tests (`{torch}.stack(items)[mask]`), "
               f"instead of the filtered {what}", tuple(edits), APPLICABILITY)


def filtered_loop(file, src: FixSource, node: cst.If, fn: ir.FunctionDef, block: list, stmt: ir.If, types,
                  torch: str) -> Fix | str | None:
    """``if p(t): kept.append(f(t))`` as the whole body of ``for t in x:`` after ``kept = []``."""
    if stmt.orelse or len(stmt.body) != 1 or len(block) != 1:
        return None
    append = stmt.body[0]
    if not (isinstance(append, ir.ExprStmt) and isinstance(append.value, ir.Call)
            and isinstance(append.value.func, ir.Attribute) and append.value.func.attr == "append"
            and isinstance(append.value.func.value, ir.Name) and len(append.value.args) == 1):
        return None
    name = append.value.func.value.id
    loop = next((s for s in ir.walk_statements(fn.body) if isinstance(s, ir.Loop) and s.body is block), None)
    if loop is None or loop.kind != "for" or loop.orelse:
        return None
    outer = next((b for s in ir.walk_statements(fn.body) for b in ir.child_blocks(s) if any(x is loop for x in b)),
                 fn.body if any(x is loop for x in fn.body) else None)
    if outer is None:
        return None
    position = next(i for i, x in enumerate(outer) if x is loop)
    init = outer[position - 1] if position else None
    if not (isinstance(init, ir.Assign) and len(init.targets) == 1 and isinstance(init.targets[0], ir.Name)
            and init.targets[0].id == name and isinstance(init.value, ir.List) and not init.value.elts):
        return f"`{name}` is not made empty (`{name} = []`) right before the loop"
    loop_node = src.parents.get(src.parents.get(node))  # If -> IndentedBlock -> For
    if not isinstance(loop_node, cst.For) or not isinstance(loop_node.target, cst.Name) \
            or not isinstance(loop_node.iter, (cst.Name, cst.Attribute)):
        return "the loop does not iterate a name into a name (the rewrite reads the iterable twice)"
    if "/bool" not in types.get("$pred", "") or not is_tensor(types.get("$pred", "")):
        return "the test is not a boolean tensor (the rewrite stacks the tests into a mask)"
    item = node.body.body[0].body[0].value.args[0].value if isinstance(node.body, cst.IndentedBlock) else None
    if item is None:
        return "the appended item was not found"
    if not side_effect_free(item, tensor_methods=True, torch=torch) or not side_effect_free(
            node.test, tensor_methods=True, torch=torch):
        return "an item or its test may have side effects, and the rewrite computes every item"
    from analyzer.fixes.source import comments

    if comments(src.code_of(loop_node)):
        return "comments inside the loop would be lost"
    why, stacks, lengths = _common_refusal(fn, name, torch, loop.span.line, append)
    if why:
        return why
    init_node = src.node_at(cst.SimpleStatementLine, init.span.line, init.span.column)
    if init_node is None:
        return f"`{name} = []` was not found"
    iterable = src.code_of(loop_node.iter)
    if isinstance(loop_node.iter, cst.Name) and is_tensor(types.get(loop_node.iter.value, "")):
        iterable += ".unbind(0)"  # the same rows, read twice without iterating a tensor
    text = f"{name} = " + _masked(torch, src.code_of(item), loop_node.target.value, iterable, src.code_of(node.test))
    edits = [src.edit(init_node.body[0], loop_node, text)]
    uses = _use_edits(file.source_at, stacks, lengths, name)
    if isinstance(uses, str):
        return uses
    indent = src.indent_of(init_node)
    edits[0] = Edit(edits[0].line, edits[0].column, edits[0].end_line, edits[0].end_column,
                    edits[0].content + f"\n{indent}{torch}._check({name}.shape[0] > 0)")
    if not src.parses_after(edits[0], statement=True):
        return "the rewrite would not parse (please report this)"
    edits += uses
    return Fix(f"Stack every item and select the kept ones with the stacked tests (`{torch}.stack(items)[mask]`), "
               "instead of growing the list in the loop", tuple(edits), APPLICABILITY)
