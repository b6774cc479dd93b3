"""A data-dependent ``if`` as ``torch.cond``:

    if <pred>:                        def true_fn(h, rows):
        rows = f(rows, h)                 rows = f(rows, h)
    <rest of the block>       ->          return rows
                                      def false_fn(h, rows):
                                          return rows.clone()
                                      rows = torch.cond(<pred>, true_fn, false_fn, (h, rows))

and the *tail* form, where the ``if`` returns and the rest of the function is the other
branch (``if p: return a`` / ``return b`` -> ``return torch.cond(p, ...)``).

``plan_cond(fn, block, stmt, types)`` decides from the IR; ``render_cond`` writes it out
from the libcst tree, keeping the branches' own text.

Results (block form) are ``If.results``: assigned in a branch and live after it
(``analyses.engine.regions``). Operands are what each branch reads before writing, given that
it ends by returning the results: the live-in set of

    branch body ; return (results...)

(``analyses.engine.liveness``), restricted to the function's locals. An operand that is a
tensor is passed to ``torch.cond``; any other local (``self``, a Python float) is read
by the nested function from the enclosing scope, which is only sound when no branch
assigns it. A result that a branch does not assign is the incoming value: it must be an
operand, and is returned as ``.clone()`` because ``torch.cond`` rejects a branch output
that aliases an input (so is a name, an attribute, or a view such as ``x.view(...)``).

Refused (with the reason) when: the branches are not straight-line code free of side
effects (``branch_body``); the predicate is not a tensor (``bool(t)`` already left the
graph); a result or an operand is not a tensor, or has a data-dependent shape
(``torch.cond`` needs both branches to return tensors of one shape and dtype); a result
is undefined on one path; the ``if`` is an ``elif`` or has one. Both branches returning
tensors of the same shape and dtype is not provable from the source: the fix is unsafe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from analyzer.analyses.engine.cfg import Cfg
from analyzer.analyses.engine.liveness import Liveness
from analyzer.analyses.engine.regions import annotate_regions
from analyzer.fixes.branch_body import refusal
from analyzer.fixes.source import FixSource, reindent
from analyzer.frontend import ir
from analyzer.frontend.positions import dotted_name
from analyzer.frontend.verify import assigned_names

# Calls whose result may share storage with an input (or be the input itself).
_VIEW_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "expand", "expand_as", "flatten", "unflatten", "narrow", "select", "detach", "contiguous", "to",
    "type", "type_as", "float", "double", "half", "long", "int", "bool", "cpu", "cuda", "as_strided",
    "unfold", "diagonal", "movedim", "moveaxis", "swapaxes", "real", "imag", "chunk", "split", "unbind",
    "split_with_sizes", "tensor_split", "mT", "T", "H", "mH", "data", "view_as_real", "view_as_complex",
})


@dataclass
class CondPlan:
    stmt: ir.If
    tail: bool  # the branches return: `return torch.cond(...)`
    then_block: list[ir.Stmt]
    else_block: list[ir.Stmt]  # tail form: the else block, or the statements after the `if`
    operands: list[str]
    results: list[str]  # block form only


def is_tensor(tag: str) -> bool:
    """A tensor on every path (``+none``: None on some, which no torch.cond or while_loop carries)."""
    return tag.startswith("tensor") and "+none" not in tag


def plan_cond(fn: ir.FunctionDef, block: list[ir.Stmt], stmt: ir.If, types: Mapping[str, str]) -> CondPlan | str:
    """The rewrite of ``stmt`` (an ``if`` in ``block`` of ``fn``), or why there is none."""
    if stmt.is_elif or (len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ir.If) and stmt.orelse[0].is_elif):
        return "an `elif` chain (rewrite it as nested `if`s first)"
    if fn.is_async:
        return "the function is `async`"
    pred = types.get("$pred", "unknown")
    if not is_tensor(pred) and not is_tensor(types.get("$leaves", "unknown")):  # `not t`: a Python bool of tensors
        return ("the condition is not a tensor (a Python value computed from one, e.g. by `bool()` or "
                "`.item()`): keep it a tensor first")
    tail = _tail_blocks(fn, block, stmt)
    if tail is not None:
        then_block, else_block = tail
        for side in (then_block, else_block):
            why = refusal(side, types, last_return=True)
            if why:
                return f"the branch {why}"
        returned = types.get("$return", "unknown")
        items = _returned_items(types)
        if items is not None:  # `return logits, score` on both paths: torch.cond returns the tuple
            for side in (then_block, else_block):
                last = side[-1]
                if not (isinstance(last, ir.Return) and isinstance(last.value, ir.Tuple)
                        and len(last.value.elts) == len(items)
                        and not any(isinstance(e, ir.Starred) for e in last.value.elts)):
                    return f"the branches do not both return a tuple of {len(items)} tensors"
            returned = next((t for t in items if not is_tensor(t) or "+dynshape" in t), items[0])
        if not is_tensor(returned):
            return "the function does not return one tensor (or one tuple of tensors) on both paths"
        if "+dynshape" in returned:
            return "the result has a data-dependent shape (torch.cond needs one shape for both branches)"
        results: list[str] = []
    else:
        if any(isinstance(s, ir.Return) for s in ir.walk_statements(stmt.body + stmt.orelse)):
            return "the branch returns early (only an `if` whose other branch is the rest of the function is rewritten)"
        then_block, else_block = stmt.body, stmt.orelse
        for side in (then_block, else_block):
            why = refusal(side, types)
            if why:
                return f"the branch {why}"
        annotate_regions(fn)
        results = list(stmt.results)
        if not results:
            return "the branches assign nothing that is used afterwards"
        for name in results:
            tag = types.get(f"={name}", "unknown")
            if not is_tensor(tag):
                return f"`{name}` is not a tensor after the `if` (torch.cond returns tensors only)"
            if "+dynshape" in tag:
                return f"`{name}` has a data-dependent shape (torch.cond needs one shape for both branches)"
    locals_ = {p.name for p in fn.params} | assigned_names(fn.body)
    assigned = assigned_names(then_block) | assigned_names(else_block)
    operands: set[str] = set()
    for side in (then_block, else_block):
        operands |= _reads_before_writes(side, results) & locals_
    passed = []
    for name in sorted(operands):
        tag = types.get(name, "unknown")
        if tag.startswith("ext:builtins."):  # not bound at the `if` (the analysis fell back to a builtin)
            return f"`{name}` may be undefined before the `if`"
        if is_tensor(tag):
            if "+dynshape" in tag:
                return f"`{name}` has a data-dependent shape (torch.cond needs one shape for both branches)"
            passed.append(name)
        elif name in assigned or name in results:
            return f"`{name}` is read and assigned in a branch but is not a tensor"
        # else: read from the enclosing scope by the nested function (self, a config value)
    for name in results:
        if name not in assigned_names(then_block) or name not in assigned_names(else_block):
            if name not in passed:
                return f"`{name}` is assigned in one branch only and is not a tensor before the `if`"
    return CondPlan(stmt, tail is not None, then_block, else_block, passed, results)


def _returned_items(types: Mapping[str, str]) -> list[str] | None:
    """What each item of the function's tuple result is (``$return.0``...), if it returns one."""
    if types.get("$return") != "container" or "$return.0" not in types:
        return None
    items = []
    while f"$return.{len(items)}" in types:
        items.append(types[f"$return.{len(items)}"])
    return items


def _tail_blocks(fn: ir.FunctionDef, block: list[ir.Stmt], stmt: ir.If):
    """(then, else) when ``stmt`` is at the top of ``fn`` and both ways end in a return."""
    if block is not fn.body or not stmt.body or not isinstance(stmt.body[-1], ir.Return):
        return None
    rest = block[block.index(stmt) + 1:]
    if stmt.orelse:
        if rest or not isinstance(stmt.orelse[-1], ir.Return):
            return None
        return stmt.body, stmt.orelse
    if rest and isinstance(rest[-1], ir.Return):
        return stmt.body, rest
    return None


def _reads_before_writes(body: list[ir.Stmt], results: list[str]) -> set[str]:
    """Live-in names of ``body ; return (results...)``."""
    ret = ir.Return(ir.Tuple([ir.Name(r) for r in results]))
    cfg = Cfg(list(body) + [ret])
    return set(Liveness(cfg).live_in(cfg.entry))


# ------------------------------------------------------------------------------ render


def _needs_clone(value: cst.BaseExpression | None) -> bool:
    """May ``value`` be (a view of) an existing tensor? Arithmetic and calls of functions
    and modules make new tensors; names, attributes, subscripts and view methods may not."""
    if value is None:
        return True
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return False
    if isinstance(value, cst.Call):
        func = value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func) or ""
        return name.rsplit(".", 1)[-1] in _VIEW_METHODS
    return True


def _clone(code: str, value: cst.BaseExpression) -> str:
    if isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return f"{code}.clone()"
    return f"({code}).clone()"


def _last_values(statements) -> dict[str, cst.BaseExpression]:
    """The value each name was last assigned in a straight-line libcst block."""
    values: dict[str, cst.BaseExpression] = {}
    for line in statements:
        if not isinstance(line, cst.SimpleStatementLine):
            continue  # a nested `def` of an earlier fix binds no name of the block's results
        for small in line.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        values[target.target.value] = small.value
                    else:  # tuple unpacking: the parts are whatever the call returned
                        for element in getattr(target.target, "elements", ()):
                            if isinstance(element.value, cst.Name):
                                values[element.value.value] = None
    return values


def render_cond(src: FixSource, plan: CondPlan, if_node: cst.If, predicate: str, names: tuple[str, str],
                torch: str):
    """(first node, last node, replacement text) for the edit (``torch``: the name of the
    torch module at the ``if``)."""
    indent = src.indent_of(if_node)
    unit = if_node.body.indent if isinstance(if_node.body, cst.IndentedBlock) and if_node.body.indent else src.module.default_indent
    then_lines = list(if_node.body.body)
    last = if_node
    if plan.tail and isinstance(if_node.orelse, cst.Else):
        else_lines = list(if_node.orelse.body.body)
    elif plan.tail:
        parent = src.parents[if_node]
        siblings = list(parent.body)
        else_lines = siblings[siblings.index(if_node) + 1:]
        last = else_lines[-1]
    else:
        else_lines = list(if_node.orelse.body.body) if isinstance(if_node.orelse, cst.Else) else []
    params = ", ".join(plan.operands)
    operands = "(" + ", ".join(plan.operands) + ("," if len(plan.operands) == 1 else "") + ")"
    out = []
    else_clause = if_node.orelse if isinstance(if_node.orelse, cst.Else) else None
    for name, lines, clause in ((names[0], then_lines, None), (names[1], else_lines, else_clause)):
        out.append(f"def {name}({params}):\n")
        body = ""
        if clause is not None and clause.body.header.comment is not None:
            body += clause.body.header.comment.value + "\n"  # the comment on the `else:` line
        if plan.tail:
            *init, ret_line = lines
            body += "".join(src.code_of(s) for s in init)
            body += _return_line(src, ret_line)
        else:
            body += "".join(src.code_of(s) for s in lines)
            values = _last_values(lines)
            returned = [_clone(r, cst.Name(r)) if _needs_clone(values.get(r)) else r for r in plan.results]
            body += "return " + (returned[0] if len(returned) == 1 else "(" + ", ".join(returned) + ")") + "\n"
        out.append(reindent(body, unit))
    call = f"{torch}.cond({predicate}, {names[0]}, {names[1]}, {operands})"
    if plan.tail:
        head = f"return {call}"
    else:
        targets = plan.results[0] if len(plan.results) == 1 else ", ".join(plan.results)
        head = f"{targets} = {call}"
    comment = if_node.body.header.comment if isinstance(if_node.body, cst.IndentedBlock) else None
    if comment is not None:
        head += "  " + comment.value
    text = reindent("".join(out) + head, indent)[len(indent):]
    return if_node, last, text


def _return_line(src: FixSource, line) -> str:
    """A branch's final ``return v`` as the nested function's, cloning an alias."""
    ret = line.body[-1]
    value = ret.value
    code = src.code_of(line)
    if isinstance(value, cst.Tuple):  # `return a, b`: each item that may alias an input is cloned
        elements = [element.with_changes(value=cst.parse_expression(_clone(src.module.code_for_node(element.value),
                                                                           element.value)))
                    if _needs_clone(element.value) else element for element in value.elements]
        cloned = ret.with_changes(value=value.with_changes(elements=elements))
        return src.code_of(line.with_changes(body=[*line.body[:-1], cloned]))
    if not _needs_clone(value):
        return code
    cloned = ret.with_changes(value=cst.parse_expression(_clone(src.module.code_for_node(value), value)))
    return src.code_of(line.with_changes(body=[*line.body[:-1], cloned]))
