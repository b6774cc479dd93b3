"""A loop over ``range(n)``, ``n`` from tensor values, whose body calls a module of a
``ModuleList`` by the loop variable: the list's length bounds the trip count, so every
iteration up to it runs and ``torch.where`` keeps what the first ``n`` made:

    for i in range(int(budget.round())):        loop_stop = torch.scalar_tensor(int(budget.round()), dtype=torch.long)
        x = x + self.layers[i](x)         ->    torch._check((loop_stop <= len(self.layers)).item())
                                                for i in range(len(self.layers)):
                                                    x = torch.where(i < loop_stop, x + self.layers[i](x), x)

``masked_range(fn, loop, node, types, src, torch) -> Fix | str | None``: None when the loop
does not index a ``ModuleList`` by its variable (the ``while_loop`` fix takes it).

Why: ``while_loop`` carries tensors and its body cannot pick a module by a tensor
counter; ``self.layers[i]`` with ``i >= len(self.layers)`` raises, so a loop that reaches
the end of its body only runs for ``n <= len(self.layers)``: a fixed trip count the
export unrolls, with ``n`` a tensor (``scalar_tensor``: an unbacked SymInt from
``.item()`` becomes a tensor there) that masks each iteration. Every assignment of a
carried name (assigned in the body, live at the loop head or after it) keeps the
incoming value once ``i >= n``; the values of the first ``n`` iterations are the
original's, bit for bit (``torch.where`` selects). ``n > len(self.layers)``, where the
original raises ``IndexError``, raises at ``torch._check`` (``RuntimeError``; a runtime
assertion in the exported program).

Unsafe: the iterations past ``n`` now run and are discarded, which is only the same
program when the body is free of side effects (``branch_body``: no in-place writes, no
prints; a module in training mode still updates its statistics and draws dropout
masks), and every carried value must keep its shape and dtype.
"""

from __future__ import annotations

import libcst as cst

from analyzer.diagnostics import Fix
from analyzer.fixes.branch_body import refusal
from analyzer.fixes.cond import is_tensor
from analyzer.fixes.fresh_names import fresh_names
from analyzer.fixes.grown_lists import appends, block_of, cut_edit, gated_line, stacked_after
from analyzer.fixes.predicates import item_comparison
from analyzer.fixes.source import FixSource, reindent
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names

APPLICABILITY = "unsafe"


def _module_lists_indexed(loop: ir.Loop, counter: str, types) -> tuple[set[str], bool]:
    """The ``self.X`` ModuleLists the body indexes by ``counter``, and whether every read
    of ``counter`` is such an index."""
    lists: set[str] = set()
    allowed: set[int] = set()
    for stmt in ir.walk_statements(loop.body):
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if (isinstance(sub, ir.Subscript) and isinstance(sub.index, ir.Name) and sub.index.id == counter
                        and isinstance(sub.value, ir.Attribute) and isinstance(sub.value.value, ir.Name)
                        and sub.value.value.id == "self" and types.get(f"self.{sub.value.attr}") == "modules"):
                    lists.add(sub.value.attr)
                    allowed.add(id(sub.index))
    only = True
    for stmt in ir.walk_statements(loop.body):
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Name) and sub.id == counter and id(sub) not in allowed:
                    only = False
    return lists, only


def _axis_indexed(loop: ir.Loop, counter: str, types) -> tuple[str, int] | str | None:
    """(name, axis) when the body indexes one axis of one tensor ``name`` by ``counter``
    (``x[:, t]``), ``name`` is not assigned in the loop, and every other read of
    ``counter`` is an operand of a comparison (``t < lengths``); None when the body
    indexes no tensor by it; else why not."""
    found: set[tuple[str, int]] = set()
    allowed: set[int] = set()
    for stmt in ir.walk_statements(loop.body):
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Compare):
                    allowed.update(id(e) for e in [sub.left, *sub.comparators] if isinstance(e, ir.Name))
                elif isinstance(sub, ir.Subscript) and isinstance(sub.value, ir.Name) \
                        and is_tensor(types.get(sub.value.id, "unknown")):
                    hit = ir_axis(sub.index, counter)
                    if hit is not None:
                        allowed.add(id(hit))
                        parts = sub.index.elts if isinstance(sub.index, ir.Tuple) else [sub.index]
                        found.add((sub.value.id, next(i for i, p in enumerate(parts) if p is hit)))
    if not found:
        return None
    if len(found) > 1:
        return "the loop indexes more than one tensor axis by its variable"
    name, axis = next(iter(found))
    if name in assigned_names(loop.body):
        return f"`{name}`, indexed by the loop variable, is assigned in the loop"
    for stmt in ir.walk_statements(loop.body):
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Name) and sub.id == counter and id(sub) not in allowed:
                    return (f"the loop variable `{counter}` is used other than as the index of `{name}` or in a "
                            f"comparison (every iteration up to `{name}.size({axis})` runs after the rewrite)")
    return name, axis


def masked_range(fn: ir.FunctionDef, loop: ir.Loop, node, types, src: FixSource, torch: str,
                 live_after: set[str], reshaping, *, by_axis: bool = False) -> Fix | str | None:
    """The rewrite when a module list indexed by the loop variable bounds the loop or, with
    ``by_axis``, a tensor axis it indexes (``x[:, t]``: past ``x.size(1)`` the original
    raises); None when neither does."""
    if loop.kind != "for" or not isinstance(loop.target, ir.Name):
        return None
    counter = loop.target.id
    lists, only = _module_lists_indexed(loop, counter, types)
    if lists:
        if len(lists) > 1:
            return "the loop indexes more than one module list by its variable"
        listed = next(iter(lists))
        if not only:
            return (f"the loop variable `{counter}` is used other than as the index of `self.{listed}` (every "
                    f"iteration up to `len(self.{listed})` runs after the rewrite)")
        bound, bounded_by = f"len(self.{listed})", "the module list bounds the loop"
    elif not by_axis:
        return None
    else:
        indexed = _axis_indexed(loop, counter, types)
        if indexed is None:
            return None
        if isinstance(indexed, str):
            return indexed
        bound, bounded_by = f"{indexed[0]}.size({indexed[1]})", f"indexing `{indexed[0]}` bounds the loop"
    rng = loop.iter
    if not (isinstance(rng, ir.Call) and isinstance(rng.func, ir.Name) and rng.func.id == "range"
            and types.get("range", "ext:builtins.range") == "ext:builtins.range"
            and len(rng.args) == len(rng.positional) == 1):
        return "the loop is not over `range(stop)`"
    if loop.orelse:
        return "the loop has an `else` block"
    for stmt in ir.walk_statements(loop.body):
        if isinstance(stmt, (ir.Break, ir.Continue, ir.Return)):
            return "the loop body leaves the loop (`break`, `continue` or `return`)"
    grown = appends(loop)
    names = [a.value.func.value.id for a in grown]
    if len(set(names)) != len(names):
        return "a list grows twice in one iteration"
    rest = [s for s in loop.body if s not in grown]
    why = refusal(rest, types)
    if why:
        return f"the loop body {why} (every iteration up to `{bound}` runs after the rewrite)"
    carried = [c for c in loop.carried if c != counter and c not in names]
    if not carried and not names:
        return "the loop carries no value that is used after it"
    for name in carried:
        if not is_tensor(types.get(f"<{name}", "unknown")):
            return f"`{name}` is not a tensor before the loop (it keeps its value with `torch.where`)"
        growing = reshaping(name, loop.body)
        if growing:
            return f"`{name}` may change shape in the loop (`{growing}`)"
        if any(name in assigned_names([s]) and not (isinstance(s, ir.Assign) and len(s.targets) == 1
                                                     and isinstance(s.targets[0], ir.Name))
               for s in loop.body):
            return f"`{name}` is assigned by unpacking (each name is kept with `torch.where`)"
    if counter in live_after:
        return f"the loop variable `{counter}` is used after the loop"
    lines = list(node.body.body)
    if len(lines) != len(loop.body):
        return "the loop body was not matched to its source"
    stacks = {}
    if names:
        block, position = block_of(fn.body, loop)
        if block is None:
            return "the loop was not found in its function"
        for name in names:
            found = stacked_after(name, block, position, fn, loop)
            if isinstance(found, str):
                return found
            stacks[name] = found
    (stop_name,) = fresh_names(fn, ("loop_stop",), loop.span.line)
    out_lines = []
    for stmt, line in zip(loop.body, lines):
        out_lines.append(gated_line(src, stmt, line, carried,
                                    lambda name, value: f"{torch}.where({counter} < {stop_name}, {value}, {name})"))
    unit = node.body.indent if isinstance(node.body, cst.IndentedBlock) and node.body.indent \
        else src.module.default_indent
    stop = src.code_of(node.iter.args[0].value)
    comment = node.body.header.comment if isinstance(node.body, cst.IndentedBlock) else None
    checks = f"{torch}._check(({stop_name} <= {bound}).item())\n"
    if any(initial == 0 for _, _, initial, _ in stacks.values()):
        # `range(n)` with n <= 0 appends nothing, and stacking no items raises: so does this
        checks += f"{torch}._check(({stop_name} > 0).item())\n"
    text = (f"{stop_name} = {torch}.scalar_tensor({stop}, dtype={torch}.long)\n" + checks
            + f"for {counter} in range({bound}):" + (f"  {comment.value}" if comment else "") + "\n"
            + reindent("".join(out_lines), unit))
    indent = src.indent_of(node)
    text = reindent(text, indent)[len(indent):].rstrip("\r\n")
    edit = src.loop_edit(node, node, text)
    if isinstance(edit, str):
        return edit
    edits = [edit]
    for name, stack in stacks.items():
        cut = cut_edit(src, torch, name, stack, f"{stop_name}.clamp(min=0)")
        if isinstance(cut, str):
            return cut
        edits.append(cut)
    return Fix(f"Run every iteration up to `{bound}` ({bounded_by}) and keep what the first `{stop}` made "
               f"(`{torch}.where`)" + (", cutting the stacked lists to them" if stacks else ""),
               tuple(edits), APPLICABILITY)


def _full_slice(e) -> bool:
    return isinstance(e, ir.Slice) and e.lower is None and e.upper is None and e.step is None


def ir_axis(index, counter: str):
    """The `Name` of ``counter`` when ``index`` is ``counter`` or ``:, ..., counter, :, ...``."""
    parts = index.elts if isinstance(index, ir.Tuple) else [index]
    hits = [p for p in parts if isinstance(p, ir.Name) and p.id == counter]
    if len(hits) == 1 and all(p is hits[0] or _full_slice(p) for p in parts):
        return hits[0]
    return None


# ------------------------------------------------------------------------------ counted while

def _static_bound(expr) -> bool:
    """An int literal or ``self.<attr>`` (a configuration value)."""
    if isinstance(expr, ir.Const):
        return type(expr.value) is int
    return isinstance(expr, ir.Attribute) and isinstance(expr.value, ir.Name) and expr.value.id == "self"


def _counter_break(stmt) -> tuple[str, str, object] | None:
    """(counter, op, bound) of ``if counter == bound: break`` (or ``>=``)."""
    if not (isinstance(stmt, ir.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ir.Break)
            and not stmt.is_elif):
        return None
    test = stmt.test
    if not (isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0] in ("==", ">=")
            and isinstance(test.left, ir.Name) and _static_bound(test.comparators[0])):
        return None
    return test.left.id, test.ops[0], test.comparators[0]


def _increments(stmt, counter: str) -> bool:
    return (isinstance(stmt, ir.AugAssign) and isinstance(stmt.target, ir.Name) and stmt.target.id == counter
            and stmt.op == "+" and isinstance(stmt.value, ir.Const) and stmt.value.value == 1
            and type(stmt.value.value) is int)


def counted_while(fn: ir.FunctionDef, block: list, loop: ir.Loop, node, types, src: FixSource, torch: str,
                  live_after: set[str]) -> Fix | str | None:
    """A ``while`` that also stops when a counter reaches a static bound, as a ``for`` over
    that many iterations that breaks on the test (the loop the UT102 masked-break fix takes
    next):

        steps = 0                                   steps = 0
        while token.item() != self.eos:             for steps in range(0, self.max_len):
            if steps == self.max_len:        ->         if torch.logical_not(token.double() != self.eos):
                break                                       break
            <body>                                      <body>
            steps += 1

    The same iterations: the counter starts at an int literal, grows by one at the end of
    each pass and is written nowhere else, so the ``for`` gives it the same value in every
    pass, and the pass where it reaches the bound only tested the condition (free of side
    effects) before breaking. A ``.item()`` comparison becomes the tensor test
    ``x.double() <op> c`` (``predicates.item_comparison``). Refused when the counter is read after the
    loop (the ``for`` leaves it one lower when the bound stops it). With ``==``, a start
    above the bound never stopped the original by the counter; the rewrite runs no pass
    then (a configuration of no use, but not provably absent: unsafe)."""
    if loop.kind != "while" or loop.orelse or not loop.body or len(loop.body) < 3:
        return None
    found = _counter_break(loop.body[0])
    if found is None or not _increments(loop.body[-1], found[0]):
        return None
    counter, _, _ = found
    middle = loop.body[1:-1]
    if any(isinstance(s, (ir.Break, ir.Continue, ir.Return)) for s in ir.walk_statements(middle)):
        return "the loop leaves or skips a pass elsewhere than at the counter's test"
    if counter in assigned_names(middle):
        return f"the counter `{counter}` is assigned in the loop body"
    if counter in live_after:
        return f"the counter `{counter}` is used after the loop"
    index = next((i for i, s in enumerate(block) if s is loop), None)
    start = None
    for stmt in block[:index] if index is not None else ():
        if counter in assigned_names([stmt]):
            start = stmt.value.value if (isinstance(stmt, ir.Assign) and len(stmt.targets) == 1
                                         and isinstance(stmt.targets[0], ir.Name) and isinstance(stmt.value, ir.Const)
                                         and type(stmt.value.value) is int) else None
    if start is None:
        return f"the counter `{counter}` does not start at an int literal before the loop"
    if is_tensor(types.get("$pred", "unknown")):
        from analyzer.fixes.predicates import tensor_predicate

        predicate = tensor_predicate(src, node.test, torch)
        if isinstance(predicate, str):
            return predicate
        test = src.code_of(predicate.with_changes(lpar=[], rpar=[]) if hasattr(predicate, "lpar") else predicate)
    else:
        found = item_comparison(node.test, types, torch)
        test = None if found is None else src.code_of(found.with_changes(lpar=[], rpar=[]))
        if test is None:
            return ("the `while` condition is not a tensor (a Python value from `.item()`, `bool()`...): keep it a "
                    "tensor first")
    lines = list(node.body.body)
    if len(lines) != len(loop.body):
        return "the loop body was not matched to its source"
    cst_break, cst_increment = lines[0], lines[-1]
    bound = src.code_of(cst_break.test.comparisons[0].comparator)
    unit = node.body.indent if isinstance(node.body, cst.IndentedBlock) and node.body.indent \
        else src.module.default_indent
    comment = node.body.header.comment if isinstance(node.body, cst.IndentedBlock) else None
    kept_comments = []
    for line in (cst_break, cst_increment):
        for c in _comments_of(src.code_of(line)):
            kept_comments.append(c)
    middle_code = "".join(src.code_of(line) for line in lines[1:-1])
    text = (f"for {counter} in range({start}, {bound}):" + (f"  {comment.value}" if comment else "") + "\n"
            + reindent("".join(f"{c}\n" for c in kept_comments)
                       + f"if {torch}.logical_not({test}):\n{unit}break\n" + middle_code, unit))
    indent = src.indent_of(node)
    text = reindent(text, indent)[len(indent):].rstrip("\r\n")
    edit = src.loop_edit(node, node, text)
    if isinstance(edit, str):
        return edit
    return Fix(f"Bound the loop by its counter (`for {counter} in range({start}, {bound})`), breaking on the "
               "condition kept a tensor; the next pass masks it", (edit,), APPLICABILITY)


def _comments_of(code: str) -> list[str]:
    from analyzer.fixes.source import comments

    return list(comments(code))
