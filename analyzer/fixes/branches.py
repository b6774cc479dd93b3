"""Fixes for the UT101 sites: which rewrite each data-dependent branch gets, or why none.

``attach_fixes(facts, sources) -> facts``: every reported ``BranchFact`` (level data,
not folded into a loop's finding) gets ``fix`` (an unsafe ``Fix`` of exact text edits)
or ``no_fix`` (the reason, a phrase the UT101 message quotes). ``sources(path)`` gives
the IR of the file a site is in (a helper may live in another file).

    if p: y = A / else: y = B    -> y = torch.where(p, A, B)            (where.py)
    other `if` on a tensor       -> torch.cond(p, true_fn, false_fn, ..)  (cond.py)
    A if p else B                -> torch.where(p, A, B)
    assert p[, msg]              -> torch._check(p.item()[, lambda: msg])

A Python ``and`` / ``or`` / ``not`` in an ``if`` condition becomes
``torch.logical_and`` / ``logical_or`` / ``logical_not`` when its operands are free of
side effects (the rewrite evaluates both). ``torch`` stands for the name that is the
torch module where the edit is (``analyzer.fixes.torch_name``: ``th.where`` after
``import torch as th``); where no name is, there is no fix, and the finding says why.
Every fix is *unsafe* in ruff's sense:
``torch.where`` broadcasts and promotes, ``torch.cond`` needs both branches to return
tensors of one shape and dtype, and ``torch._check`` raises ``RuntimeError`` rather
than ``AssertionError`` and also runs under ``python -O``; none of that is provable
from the source. A rewrite that cannot be made at all is not made.

``torch._check`` on ``p.item()``: ``torch._check`` takes a bool or a SymBool, not a
tensor; ``bool(p)`` is a data-dependent guard that stops torch.export, while ``.item()``
of a boolean tensor becomes an unbacked SymBool that export turns into a runtime
assertion (and eager raises when it is False).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import libcst as cst

from analyzer.analyses.kinds.facts import BranchFact, EscapeFact, InplaceFact, LoopFact
from analyzer.analyses.kinds.levels import Level
from analyzer.diagnostics import Fix
from analyzer.analyses.engine.regions import annotate_regions
from analyzer.fixes.branch_body import refusal
from analyzer.fixes.cond import is_tensor, plan_cond, render_cond
from analyzer.fixes.escapes import (
    _function_at, _only_truth_tests, fix_compared_number, fix_escape, fix_item_cast, fix_item_min_max,
    fix_unpacked_tolist,
)
from analyzer.fixes.source import FixSource, loses_comments, reindent
from analyzer.fixes.fresh_names import fresh_names
from analyzer.fixes.filtered import filtered_comprehension, filtered_loop
from analyzer.fixes.guards import guarded_write
from analyzer.fixes.inputs import fix_input_write
from analyzer.fixes.loops import fix_loop
from analyzer.fixes.pure_methods import with_pure_methods
from analyzer.fixes.numbers import number_if, number_ternary
from analyzer.fixes.predicates import _bare, tensor_predicate
from analyzer.fixes.torch_name import ModuleTorch, torch_name
from analyzer.fixes.where import refuse_where, side_effect_free, where_assignment, where_target
from analyzer.frontend import ir
from analyzer.lines import lines_with_ends

APPLICABILITY = "unsafe"

Sources = Callable[[str], "ir.Module | None"]


class _File:
    """One file's IR (with its source and libcst tree), and the indexes the fixes of its
    sites share."""

    def __init__(self, module: ir.Module):
        if module.syntax is None:
            raise ValueError("a module without its libcst tree")
        self.module = module
        # Lines as `Positions` counts them (analyzer.lines), with their endings, and
        # the empty one after a last newline.
        self.lines = lines_with_ends(module.source)
        if not self.lines or self.lines[-1][-1] in "\r\n":
            self.lines.append("")
        self.scopes: dict[int, FixSource] = {}  # id(libcst node) -> the FixSource over it
        self._ifs: dict[int, tuple] | None = None
        self._module_torch: ModuleTorch | None = None

    def torch_name(self, src: FixSource, node) -> str:
        """The name of the torch module where ``node`` is; raises `_NoTorch` (why) when
        no name there is the module."""
        if self._module_torch is None:
            declared: dict[str, int] = {}
            for stmt in ir.walk_statements(self.module.body, into_defs=True, mentioning=("global",)):
                if isinstance(stmt, ir.Global):
                    for name in stmt.names:
                        declared.setdefault(name, stmt.span.line)
            self._module_torch = ModuleTorch(self.module.syntax.tree, declared)
        found = torch_name(node, src.parents, src.line_of, self._module_torch)
        if found.name is None:
            raise _NoTorch(found.why_not)
        return found.name

    @property
    def ifs(self) -> dict[int, tuple]:
        """id(libcst If) -> (function, the statement list holding it, the ir.If), for the
        `if`s of every function (matched by node: no positions needed)."""
        if self._ifs is None:
            self._ifs = {}
            for fn in (s for s in ir.walk_statements(self.module.body, into_defs=True) if isinstance(s, ir.FunctionDef)):
                _index_ifs(fn, fn.body, self._ifs)
        return self._ifs

    def source_at(self, line: int) -> FixSource:
        """The fix source over the outermost function (or else the top-level statement)
        holding ``line``, with the positions of that statement only."""
        syntax = self.module.syntax
        index = syntax.statement_at(line)
        if index is None:
            positions, scope, tree = syntax.positions(), syntax.tree, syntax.tree
        else:
            positions, scope, tree = syntax.statement_source(index)
        for _ in range(2):  # a top-level statement, then a method of a top-level class
            body = scope.body.body if isinstance(scope, cst.ClassDef) else getattr(scope, "body", ())
            if not isinstance(body, (list, tuple)):
                break
            inner = next((s for s in body if _holds(positions.get(s), line)), None)
            if inner is None:
                break
            scope = inner
            if not isinstance(scope, cst.ClassDef):
                break
        own = syntax.own_source(scope)
        if own is not None:  # a deferred method: its body is in a tree of its own
            positions, scope, tree = own
        if id(scope) not in self.scopes:
            self.scopes[id(scope)] = FixSource(self.lines, tree, positions, scope)
        return self.scopes[id(scope)]


class _NoTorch(Exception):
    """No name is the torch module where a fix would write `torch.`: its message says why."""


def _holds(where, line: int) -> bool:
    return where is not None and where[0] <= line <= where[2]


# Escapes `--fix` leaves as they are, and why (UT201 quotes it).
_ESCAPES_LEFT = {
    "item": "`.item()` is already what torch.export keeps symbolic (an unbacked SymInt or SymFloat); what stops "
            "an export is where the number goes (a Python `if`, `range`, a list); a number read only by comparisons "
            "that `if`/`while` tests make is kept a tensor, this one has another use",
    "tolist": "a list of sizes has no symbolic form; keep the sizes a tensor, or check each with "
              "`torch._check_is_size(s)` and their sum against the length by hand",
    "bool": "a Python bool decides a Python branch: keep the test a tensor and select with `torch.where` or "
            "`torch.cond`",
}


def attach_fixes(facts: list, sources: Sources) -> list:
    files: dict[str, _File | None] = {}

    def file(path: str) -> _File | None:
        if path not in files:
            found = sources(path)
            files[path] = None
            if found is not None:
                try:
                    files[path] = _File(found)
                except ValueError:
                    pass
        return files[path]

    def planned(fact, plan):
        opened = file(fact.site.path)
        if opened is None:
            return replace(fact, no_fix="the source of this file is not available")
        try:
            fix = plan(fact, opened)
        except _NoTorch as no_torch:
            fix = str(no_torch)
        except Exception as error:  # noqa: BLE001 - a fixer bug must not lose the finding
            fix = f"untrace could not plan a fix ({type(error).__name__})"
        return replace(fact, fix=fix) if isinstance(fix, Fix) else replace(fact, no_fix=fix)

    out = []
    for fact in facts:
        if isinstance(fact, BranchFact) and fact.level == Level.DATA and fact.exits_loop:
            fact = replace(fact, no_fix="its `break`/`return` leaves the loop: the loop's own finding (UT102) "
                                        "carries the rewrite when there is one (`torch._higher_order_ops.while_loop`)")
        elif isinstance(fact, BranchFact) and fact.level == Level.DATA:
            fact = planned(fact, fix_branch)
        elif isinstance(fact, EscapeFact) and fact.target == "python" and fact.how in ("int", "float", "bool"):
            fact = planned(fact, lambda f, opened: fix_escape(f, opened, opened.torch_name))
        elif isinstance(fact, EscapeFact) and fact.target == "python" and fact.how in ("tolist", "item"):
            fact = planned(fact, _escape_uses)
        elif isinstance(fact, EscapeFact) and fact.how in _ESCAPES_LEFT:
            fact = replace(fact, no_fix=_ESCAPES_LEFT[fact.how])
        elif isinstance(fact, LoopFact) and Level.DATA in (fact.bound_level, fact.exit_level):
            fact = planned(fact, fix_loop)
        elif isinstance(fact, InplaceFact) and fact.target == "input" and fact.how in (
                "index-assign", "index_put_", "inplace-input"):
            fact = planned(fact, fix_input_write)
        out.append(fact)
    return out


def _escape_uses(fact: EscapeFact, file: _File) -> Fix | str:
    """``.tolist()`` unpacked into names, ``.item()`` compared by ``max``/``min``; else why not."""
    fixers = (fix_unpacked_tolist,) if fact.how == "tolist" else (fix_item_cast, fix_item_min_max, fix_compared_number)
    for fixer in fixers:
        fix = fixer(fact, file, file.torch_name)
        if fix is not None:
            return fix
    return _ESCAPES_LEFT[fact.how]


def fix_branch(fact: BranchFact, file: _File) -> Fix | str:
    """The fix for one UT101 site, or why there is none."""
    if fact.construct in ("and", "or"):
        return _truth_operator_fix(fact, file)
    if fact.construct == "filter":
        try:
            fix = filtered_comprehension(file, fact, dict(fact.types), file.torch_name)
        except _NoTorch as no_torch:
            return str(no_torch)
        if fix is not None:
            return fix
        return "a comprehension filter keeps a data-dependent number of items, which no `torch.where`/`torch.cond` returns"
    if fact.construct == "elif":
        return "an `elif` of a chain: the fix of the chain's `if` makes it a nested `if` first, then a `torch.cond`"
    types = dict(fact.types)
    line, column = fact.site.line, fact.site.column
    src = file.source_at(line)
    try:
        if fact.construct == "assert":
            node = src.node_at(cst.Assert, line, column)
            if node is None:
                return "the `assert` was not found"
            return _check_fix(src, node, types, file.torch_name(src, node))
        if fact.construct == "ifexp":
            node = src.node_at(cst.IfExp, line, column)
            if node is None:
                return "the conditional expression was not found"
            return _ternary_fix(src, node, types, file.torch_name(src, node))
        if fact.construct == "if":
            node = src.node_at(cst.If, line, column)
            found = file.ifs.get(id(node)) if node is not None else None
            if node is None or found is None:
                return "the `if` was not found"
            types = with_pure_methods(types, file, found[0])
            if isinstance(node.orelse, cst.If):
                return _elif_fix(src, node, *found, types, file.torch_name(src, node))
            return _if_fix(src, node, *found, types, file.torch_name(src, node), file=file)
    except _NoTorch as no_torch:
        return str(no_torch)
    return f"no rewrite for `{fact.construct}`"


# ------------------------------------------------------------------------------ if


def _if_fix(src: FixSource, node: cst.If, fn, block, stmt, types, torch: str, file=None) -> Fix | str:
    predicate = tensor_predicate(src, node.test, torch)
    if not isinstance(predicate, cst.BaseExpression):
        return predicate
    if not is_tensor(types.get("$pred", "unknown")) and not is_tensor(types.get("$leaves", "unknown")):
        return _not_a_tensor(src.code_of(node.test))
    guard = guarded_write(src, node, stmt, types)
    if guard is not None:
        return guard
    if file is not None:
        grown = filtered_loop(file, src, node, fn, block, stmt, types, torch)
        if grown is not None:
            return grown
    if refuse_where(node, src.module, torch) is None and is_tensor(types.get(f"={where_target(node)}", "")):
        new = where_assignment(node, predicate, torch).with_changes(leading_lines=())
        edit = src.edit(node, node, src.code_of(new).rstrip("\r\n"))
        return _checked(src, edit, f"Rewrite the `if` as `{where_target(node)} = {torch}.where(...)`", statement=True)
    annotate_regions(fn)
    number = number_if(src, node, stmt, types, torch, fn)
    if number is not None:
        return number
    plan = plan_cond(fn, block, stmt, types)
    if isinstance(plan, str):
        return plan
    first, last, text = render_cond(src, plan, node, src.code_of(predicate), _branch_names(fn, stmt), torch)
    edit = src.edit(first, last, text)
    what = f"return {torch}.cond(...)" if plan.tail else f"{', '.join(plan.results)} = {torch}.cond(...)"
    return _checked(src, edit, f"Rewrite the `if` as `{what}` with nested branch functions", statement=True)


def _elif_fix(src: FixSource, node: cst.If, fn, block, stmt, types, torch: str) -> Fix | str:
    """``if a: A / elif b: B / else: C`` -> ``if a: A / else: (if b: B / else: C)``, the same
    program: the next passes make the inner ``if`` a ``torch.cond``, then the outer one.
    Offered only when every branch of the chain is code a ``torch.cond`` branch can be."""
    if not is_tensor(types.get("$pred", "unknown")) and not is_tensor(types.get("$leaves", "unknown")):
        return _not_a_tensor(src.code_of(node.test))
    chain, current = [], stmt
    while True:
        chain.append(current.body)
        rest = current.orelse
        if len(rest) == 1 and isinstance(rest[0], ir.If) and rest[0].is_elif:
            current = rest[0]
            continue
        chain.append(rest)
        break
    for side in chain:
        why = refusal(side, types)
        if why:
            return f"a branch of the `elif` chain {why}"
    if any(isinstance(s, ir.Return) for side in chain for s in ir.walk_statements(side)):
        return "a branch of the `elif` chain returns"
    annotate_regions(fn)
    if not stmt.results:
        return "the branches assign nothing that is used afterwards"
    for name in stmt.results:
        tag = types.get(f"={name}", "unknown")
        if not is_tensor(tag):
            return f"`{name}` is not a tensor after the `if` (torch.cond returns tensors only)"
    inner = node.orelse.with_changes(leading_lines=())
    nested = node.with_changes(orelse=cst.Else(body=cst.IndentedBlock(body=[inner]),
                                               leading_lines=node.orelse.leading_lines))
    indent = src.indent_of(node)
    code = src.code_of(nested.with_changes(leading_lines=())).rstrip("\r\n")
    edit = src.edit(node, node, reindent(code, indent)[len(indent):])
    return _checked(src, edit, "Rewrite the `elif` as an `else` holding an `if` (the next passes make both "
                               f"`{torch}.cond`)", statement=True)


def _not_a_tensor(predicate: str) -> str:
    if any(word in predicate for word in (".shape", ".size(", ".numel(", "len(", ".dim(")):
        return ("the condition is on the size of a tensor whose shape depends on data: torch.cond needs "
                "both branches to return the same shapes")
    return ("the condition is not a tensor (a Python value computed from one, e.g. by `bool()` or "
            "`.item()`): keep it a tensor first")


def _checked(src: FixSource, edit, message: str, statement: bool = False) -> Fix | str:
    """The fix, unless it would drop a comment or produce code that does not parse."""
    if loses_comments(src.text(edit), edit.content):
        return "comments inside the `if` would be lost"
    if not src.parses_after(edit, statement):
        return "the rewrite would not parse (please report this)"
    return Fix(message, (edit,), APPLICABILITY)


def _branch_names(fn: ir.FunctionDef, stmt: ir.If) -> tuple[str, str]:
    """``true_fn`` / ``false_fn``, suffixed with the line when the function already
    uses those names (or another rewrite in it may)."""
    ifs = sum(1 for s in ir.walk_statements(fn.body) if isinstance(s, ir.If))
    return fresh_names(fn, ("true_fn", "false_fn"), stmt.span.line, crowded=ifs > 1)


def _index_ifs(fn: ir.FunctionDef, block: list, out: dict) -> None:
    """(function, the statement list holding it, the ir.If) of every `if` in ``fn``'s own body."""
    for stmt in block:
        if isinstance(stmt, (ir.FunctionDef, ir.ClassDef)):
            continue
        if isinstance(stmt, ir.If) and stmt.span.node is not None:
            out[id(stmt.span.node)] = (fn, block, stmt)
        for child in ir.child_blocks(stmt):
            _index_ifs(fn, child, out)


# ------------------------------------------------------------------------------ and / or


def _truth_operator_fix(fact: BranchFact, file: _File) -> Fix | str:
    """``flag = a and b`` of tensors, where ``flag`` is only ever tested for truth (``if flag``,
    ``x if flag else y``, ``assert flag``, under ``not`` / ``and`` / ``or``) ->
    ``flag = torch.logical_and(a, b)``. Python's ``and`` gives one of its operands, whose
    truth is ``bool(a) and bool(b)``; ``logical_and`` gives a boolean tensor of that same
    truth (for one-element operands; for larger ones both raise at the test). Both operands
    are then evaluated: they must be free of side effects."""
    left_to_you = (f"Python `{fact.construct}` returns one of its operands; `torch.logical_{fact.construct}` "
                   "returns a boolean tensor, so the rewrite is left to you")
    if dict(fact.types).get("$operands") != "tensor":
        return left_to_you + " (an operand is not a tensor)"
    src = file.source_at(fact.site.line)
    node = src.node_at(cst.BooleanOperation, fact.site.line, fact.site.column)
    while node is not None and isinstance(src.parents.get(node), cst.BooleanOperation):
        node = src.parents[node]
    statement = src.parents.get(node) if node is not None else None
    if not (isinstance(statement, cst.Assign) and statement.value is node and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)):
        return left_to_you + " (the result is not assigned to a name)"
    name = statement.targets[0].target.value
    fn = _function_at(file, fact.site.line)
    if fn is None or not _only_truth_tests(fn, name):
        return left_to_you + f" (`{name}` is used as more than a truth test)"
    try:
        torch = file.torch_name(src, node)
    except _NoTorch as no_torch:
        return str(no_torch)
    predicate = tensor_predicate(src, node, torch)
    if isinstance(predicate, str):
        return predicate
    edit = src.edit(node, node, src.code_of(predicate))
    return _checked(src, edit, f"`{name}` is only tested for truth: compute it with "
                               f"`{torch}.logical_{fact.construct}`, which keeps it a tensor")


# ------------------------------------------------------------------------------ ternary


def _ternary_fix(src: FixSource, node: cst.IfExp, types, torch: str) -> Fix | str:
    if not is_tensor(types.get("$pred", "unknown")):
        return "the condition is not a tensor: keep it a tensor first"
    sides = (types.get("$then", "unknown"), types.get("$else", "unknown"))
    if "python" in sides and not any(is_tensor(t) for t in sides):
        return number_ternary(src, node, types, torch)
    if not any(is_tensor(t) for t in sides):
        return "neither side is a tensor (torch.where would turn the Python result into a tensor)"
    if not all(is_tensor(t) or t == "python" for t in sides):
        return "a side is neither a tensor nor a Python number"
    for side in (node.body, node.orelse):
        if not side_effect_free(side, tensor_methods=True, torch=torch):
            return f"`{src.code_of(side)}` may have side effects, and torch.where evaluates both sides"
    predicate = tensor_predicate(src, node.test, torch)
    if isinstance(predicate, str):
        return predicate
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    call = cst.Call(
        func=cst.Attribute(cst.Name(torch), cst.Name("where")),
        args=[cst.Arg(_bare(predicate), comma=space), cst.Arg(_bare(node.body), comma=space), cst.Arg(_bare(node.orelse))],
        lpar=node.lpar, rpar=node.rpar,
    )
    edit = src.edit(node, node, src.code_of(call))
    return _checked(src, edit, f"Rewrite the conditional expression as `{torch}.where(...)`")


# ------------------------------------------------------------------------------ assert


def _check_fix(src: FixSource, node: cst.Assert, types, torch: str) -> Fix | str:
    if "/bool" not in types.get("$pred", "") or not is_tensor(types.get("$pred", "")):
        return "the condition is not a boolean tensor (torch._check needs a bool)"
    test = node.test
    code = src.code_of(_bare(test)) if not test.lpar else src.code_of(test)
    if isinstance(test, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or test.lpar:
        condition = f"{code}.item()"
    else:
        condition = f"({code}).item()"
    args = condition if node.msg is None else f"{condition}, lambda: {src.code_of(node.msg)}"
    edit = src.edit(node, node, f"{torch}._check({args})")
    return _checked(src, edit, f"Rewrite the `assert` as `{torch}._check(...)` (raises RuntimeError, also under -O)")
