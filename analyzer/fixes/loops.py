"""A data-dependent loop as ``torch._higher_order_ops.while_loop``:

    z = torch.zeros_like(inj)                      z = torch.zeros_like(inj)
    for _ in range(self.max_iter):                 def loop_cond(_, broke, z):
        z_next = torch.tanh(self.f(z) + inj)           return (_ < self.max_iter) & ~broke
        delta = z_next - z                   ->    def loop_body(_, broke, z):
        z = z_next                                     z_next = torch.tanh(self.f(z) + inj)
        if delta.abs().max() < self.tol:               delta = z_next - z
            break                                      z = z_next
                                                       broke = delta.abs().max() < self.tol
                                                       return _ + 1, broke, z
                                                   _, _, z = torch._higher_order_ops.while_loop(
                                                       loop_cond, loop_body, (torch.tensor(0), torch.tensor(False), z))

``fix_loop(fact, file) -> Fix | str``: the rewrite of one UT102 site, or why there is none.

What is rewritten: a ``while <tensor test>:`` loop, or ``for <name> in range([start,] stop):``,
whose body is straight-line code free of side effects (``branch_body``) except for one
``if <tensor test>: break`` as its first or last statement. A break at the end becomes a
carried flag the condition reads (``broke``); a break at the start joins the condition
(it reads only carried values there). ``stop`` is evaluated once, before the loop, as
``range`` does, into a 0-d tensor (``torch.scalar_tensor(stop, dtype=torch.long)``: a
bound from ``.item()`` is an unbacked SymInt, which cannot enter the condition from the
enclosing scope, while a tensor can). The loop counter is a 0-d tensor: the loop variable may be read only as
an operand of a comparison (``lengths > t``), where a tensor and an int give the same
result, or as the index of one axis (``x[:, t]`` becomes
``x.index_select(1, t.reshape(1)).squeeze(1)``, the same values); arithmetic
(``t / n``) would not stay exact, and is refused.

The carried state is ``Loop.carried`` (``analyses.engine.regions``): the names the body
assigns that are live at the loop head or after the loop. Each must be a tensor before
the loop (``while_loop`` carries tensors of fixed shape and dtype) whose shape does not
depend on data after it; values the body only reads are read by the nested functions
from the enclosing scope. A carried value the body leaves as an alias of another tensor
is returned as ``.clone()``, and every carried value starts as a copy (``while_loop``
rejects outputs aliasing inputs, and inputs aliasing each other: ``state = x`` before a
loop that also reads ``x``).

Eager results do not change: ``while_loop`` runs the same Python functions on the same
tensors in a loop (compiled by dynamo with the eager backend). The fix is *unsafe*: that
every carried tensor keeps its shape and dtype in every iteration is not provable from
the source, and each eager call of the rewritten loop compiles it first (slower).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from analyzer.analyses.engine.cfg import Cfg
from analyzer.analyses.engine.liveness import Liveness
from analyzer.analyses.engine.regions import annotate_regions
from analyzer.analyses.kinds.facts import LoopFact
from analyzer.analyses.kinds.levels import Level
from analyzer.diagnostics import Fix
from analyzer.fixes.bounded import counted_while, ir_axis, masked_range
from analyzer.fixes.branch_body import refusal
from analyzer.fixes.cond import _clone, _last_values, _needs_clone, is_tensor
from analyzer.fixes.fresh_names import fresh_names
from analyzer.fixes.grown_lists import appends, block_of, cut_edit, gated_line, stacked_after
from analyzer.fixes.pure_methods import with_pure_methods
from analyzer.fixes.predicates import item_comparison, tensor_expression, tensor_predicate
from analyzer.fixes.source import FixSource, loses_comments, reindent
from analyzer.fixes.where import side_effect_free
from analyzer.frontend import expr_text, ir
from analyzer.frontend.verify import assigned_names

APPLICABILITY = "unsafe"


@dataclass
class LoopPlan:
    loop: ir.Loop
    counter: str | None  # the `for` variable (the counter's name in the nested functions)
    start: str  # code of range's start ("0")
    stop: str | None  # code of range's stop
    hoist_stop: bool  # evaluate stop once before the loop, into a name
    break_if: cst.If | None
    break_first: bool  # the `if ...: break` opens the body (else it closes it)
    carried: list[str]
    break_test: cst.BaseExpression | None = None  # the `if`'s test, as a tensor (`item_comparison`)
    peel: bool = False  # run the first iteration before the loop: it gives a carried value its first value


def fix_loop(fact: LoopFact, file) -> Fix | str:
    """``file``: the `branches._File` of the site."""
    if fact.construct not in ("for", "while"):
        return "a comprehension: build the items with one tensor operation instead"
    kind = cst.For if fact.construct == "for" else cst.While
    src = file.source_at(fact.site.line)
    node = src.node_at(kind, fact.site.line, fact.site.column)
    found = _loops(file).get(id(node)) if node is not None else None
    if found is None:
        return "the loop was not found"
    fn, loop = found
    torch = file.torch_name(src, node)
    types = with_pure_methods(dict(fact.types), file, fn)
    if fact.bound_level < Level.DATA and _returns_from_body(loop):
        return masked_return(fn, loop, node, types, src, torch)
    if fact.bound_level < Level.DATA and loop.kind == "for" and (appends(loop) or not _over_range(loop)):
        return masked_break(fn, loop, node, types, src, torch)
    if loop.kind == "while":
        live = annotate_regions(fn)
        block, _ = block_of(fn.body, loop)
        counted = counted_while(fn, block or [], loop, node, types, src, torch,
                                set(live.live_in(live.cfg.join_of[id(loop)])))
        if counted is not None:
            return counted
    if fact.bound_level >= Level.DATA:
        live = annotate_regions(fn)
        bounded = masked_range(fn, loop, node, types, src, torch,
                               set(live.live_in(live.cfg.join_of[id(loop)])), _reshaping_assignment)
        if bounded is not None:
            return bounded
    plan = plan_loop(fn, loop, node, types, src, torch)
    if isinstance(plan, str) and fact.bound_level >= Level.DATA:
        # No while_loop (a list grows, say): a tensor axis the body indexes by the loop
        # variable bounds it, and every iteration up to it runs, masked. The while_loop
        # comes first: it keeps the trip count dynamic where the unrolled loop does not.
        live = annotate_regions(fn)
        by_axis = masked_range(fn, loop, node, types, src, torch, set(live.live_in(live.cfg.join_of[id(loop)])),
                               _reshaping_assignment, by_axis=True)
        if isinstance(by_axis, Fix):
            return by_axis
        if isinstance(by_axis, str):
            plan = f"{plan}; nor unrolled up to the axis it indexes: {by_axis}"
    if isinstance(plan, str):
        return plan
    try:
        text = render_loop(src, plan, node, fn, torch)
    except _Refused as refused:
        return str(refused)
    edit = src.loop_edit(node, node, text)
    if isinstance(edit, str):
        return edit
    return Fix(f"Rewrite the loop as `{torch}._higher_order_ops.while_loop(...)` carrying "
               f"{', '.join(f'`{c}`' for c in plan.carried)}", (edit,), APPLICABILITY)


def _loops(file) -> dict[int, tuple]:
    """id(libcst For/While) -> (function, ir.Loop), for the loops of every function."""
    cached = getattr(file, "_loop_index", None)
    if cached is None:
        cached = {}
        for fn in (s for s in ir.walk_statements(file.module.body, into_defs=True) if isinstance(s, ir.FunctionDef)):
            for stmt in ir.walk_statements(fn.body):
                if isinstance(stmt, ir.Loop) and stmt.span.node is not None:
                    cached[id(stmt.span.node)] = (fn, stmt)
        file._loop_index = cached
    return cached


def plan_loop(fn: ir.FunctionDef, loop: ir.Loop, node, types: dict[str, str], src: FixSource,
              torch: str) -> LoopPlan | str:
    if loop.orelse:
        return "the loop has an `else` block"
    if loop.is_async:
        return "an `async for`"
    counter = start = stop = None
    hoist = False
    break_test = None
    if loop.kind == "for":
        if not isinstance(loop.target, ir.Name):
            return "the loop variable is not a plain name"
        rng = loop.iter
        if not (isinstance(rng, ir.Call) and isinstance(rng.func, ir.Name) and rng.func.id == "range"
                and types.get("range", "ext:builtins.range") == "ext:builtins.range"
                and len(rng.args) == len(rng.positional) in (1, 2)):
            return ("the loop is not over `range(stop)` or `range(start, stop)` (iterating a tensor or a list "
                    "has no `while_loop` form: index a tensor with a counter instead)")
        counter = loop.target.id
        args = node.iter.args
        start = "0" if len(args) == 1 else src.code_of(args[0].value)
        if len(args) == 2 and not isinstance(args[0].value, cst.Integer):
            return "`range` starts at a computed value"
        stop_node = args[-1].value
        stop = src.code_of(stop_node)
        if isinstance(stop_node, cst.Name) and is_tensor(types.get(stop_node.value, "")):
            return f"`range` of the tensor `{stop_node.value}` (keep the bound a Python int or a SymInt)"
        hoist = not (isinstance(stop_node, cst.Integer) or _self_attribute(stop_node))
    elif not _forever(loop):
        if not is_tensor(types.get("$pred", "unknown")):
            return ("the `while` condition is not a tensor (a Python value from `.item()`, `bool()`...): "
                    "keep it a tensor first")

    body = list(loop.body)
    cst_body = list(node.body.body)
    if len(cst_body) != len(body):
        return "the loop body was not matched to its source"
    for stmt in ir.walk_statements(body):
        if isinstance(stmt, ir.Return):
            return "the loop body returns (keep the result in a variable and `break` instead)"
        if isinstance(stmt, ir.Continue):
            return "the loop body uses `continue`"
    breaks = [s for s in ir.walk_statements(body) if isinstance(s, ir.Break)]
    break_if = None
    break_first = False
    if breaks:
        ends = [(i, s) for i, s in ((0, body[0]), (len(body) - 1, body[-1])) if _is_break_if(s)]
        if len(breaks) != 1 or not ends:
            return "the `break` is not in an `if` that opens or closes the loop body"
        index, stmt = ends[0]
        break_first = index == 0 and len(body) > 1
        break_if = cst_body[index]
        if not isinstance(break_if, cst.If) or break_if.orelse is not None:
            return "the `break` is not in an `if` that opens or closes the loop body"
        break_test = _break_test(break_if.test, types, torch)
        if break_test is None:
            return _NOT_TENSOR_BREAK
        del body[index]
        del cst_body[index]
    if not body:
        return "the loop body is empty"
    if _forever(loop) and (break_if is None or break_first):
        return "`while True` leaves only by a `break` that closes its body here"
    for test in ([node.test] if loop.kind == "while" and not _forever(loop) else []) + ([break_test] if break_if is not None and break_first else []):
        predicate = tensor_predicate(src, test, torch)
        if isinstance(predicate, str):
            return predicate
        if not side_effect_free(predicate, tensor_methods=True, torch=torch):
            return f"`{src.code_of(test).strip()}` may have side effects, and the loop condition evaluates it"
    for stmt in ir.walk_statements(body):
        if (isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Call)
                and isinstance(stmt.value.func, ir.Attribute) and stmt.value.func.attr in ("append", "extend")):
            grown = expr_text(stmt.value.func.value)
            return (f"the loop grows the list `{grown}` (while_loop carries tensors of one shape); by hand: "
                    f"write each item into a preallocated tensor of the largest trip count "
                    f"(`buf = torch.where(torch.arange(n).unsqueeze(-1) == i, item, buf)`), carry `buf` and the "
                    f"count, and cut it after the loop (`buf[:count]`)")
    why = refusal(body, types)
    if why:
        return f"the loop body {why}"

    live = annotate_regions(fn)
    cfg = live.cfg
    after = live.live_in(cfg.join_of[id(loop)])
    carried = [c for c in loop.carried if c != counter]
    if not carried:
        return "the loop carries no value that is used after it"
    peel = False
    for name in carried:
        before = types.get(f"<{name}", "unknown")
        if before.startswith("ext:builtins.") or before in ("unknown", "none"):
            why = _peel_refusal(name, counter, body, cst_body, break_if is not None and break_first, types, torch)
            if why:
                return f"`{name}` may be undefined before the loop (while_loop needs its first value): {why}"
            peel = True
            continue
        if not is_tensor(before):
            return f"`{name}` is not a tensor before the loop (while_loop carries tensors)"
        growing = _reshaping_assignment(name, body)
        if growing:
            return f"`{name}` may change shape in the loop (`{growing}`; while_loop carries tensors of one shape)"
    if counter is not None:
        if counter in after:
            return f"the loop variable `{counter}` is used after the loop"
        if counter in assigned_names(body):
            return f"the loop variable `{counter}` is assigned in the loop"
        why = _counter_uses(counter, body, break_if is not None and break_first, loop)
        if why:
            return why
    if "_" in after and (counter is not None or break_if is not None):
        return "`_` is used after the loop (the rewrite binds it)"
    return LoopPlan(loop, counter, start or "0", stop, hoist, break_if, break_first, carried, break_test, peel)


def _peel_refusal(name: str, counter: str | None, body: list, cst_body: list, break_first: bool, types,
                  torch: str) -> str | None:
    """Why the first iteration cannot run before the loop to give ``name`` its first
    value (None: it can). It can for a ``range`` loop whose variable the body does not
    read, with no `break` opening the body (the first iteration then runs whole), where
    ``name`` is a tensor by the form of each value the body assigns it."""
    if counter is None:
        return "only a `for` over `range(...)` runs its first iteration before the loop"
    if break_first:
        return "a `break` opens the loop body"
    if any(isinstance(sub, ir.Name) and sub.id == counter for stmt in ir.walk_statements(body)
           for expr in ir.child_expressions(stmt) for sub in ir.walk_expression(expr)):
        return f"the body reads the loop variable `{counter}`"
    values = [line.body[0].value for line in cst_body
              if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Assign)
              and len(line.body[0].targets) == 1 and isinstance(line.body[0].targets[0].target, cst.Name)
              and line.body[0].targets[0].target.value == name]
    if not values or sum(1 for s in body if name in assigned_names([s])) != len(values):
        return f"`{name}` is not assigned by a plain `{name} = ...` in the body"
    if not all(tensor_expression(value, types, torch) for value in values):
        return f"`{name}` is not a tensor by its form"
    return None


# Calls whose result may have another shape than their tensor argument: a carried value
# assigned from one may grow or shrink from one iteration to the next.
_RESHAPING = frozenset({
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
    "nonzero", "masked_select", "unique", "unique_consecutive", "repeat_interleave", "pad", "narrow",
    "unsqueeze", "squeeze", "flatten", "unflatten", "view", "reshape", "expand", "repeat", "tile", "unfold",
    "split", "chunk", "index_select", "take", "topk", "sort", "argwhere", "new_zeros", "new_ones", "new_full",
    "new_empty", "new_tensor", "zeros", "ones", "full", "empty", "arange", "tensor", "as_tensor",
})


def _reshaping_assignment(name: str, body: list) -> str | None:
    """The text of an assignment to ``name`` in ``body`` whose value may have another
    shape than the name had (a concatenation, a slice, a reshape...)."""
    for stmt in ir.walk_statements(body):
        if not isinstance(stmt, ir.Assign) or name not in assigned_names([stmt]):
            continue
        value = stmt.value
        if isinstance(value, ir.Subscript):
            return expr_text(value)
        if isinstance(value, ir.Call):
            func = value.func
            called = func.attr if isinstance(func, ir.Attribute) else func.id if isinstance(func, ir.Name) else ""
            if called in _RESHAPING:
                return expr_text(value)
    return None


def _forever(loop: ir.Loop) -> bool:
    """`while True:` (or `while 1:`): it ends only by its `break`."""
    return loop.kind == "while" and isinstance(loop.test, ir.Const) and loop.test.value is True or (
        loop.kind == "while" and isinstance(loop.test, ir.Const) and loop.test.value == 1)


def _self_attribute(node) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value == "self"


def _is_break_if(stmt) -> bool:
    return (isinstance(stmt, ir.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ir.Break)
            and not stmt.is_elif)


def _counter_uses(counter: str, body: list, in_break_test: bool, loop: ir.Loop) -> str | None:
    """Why the loop variable cannot be a 0-d tensor: read other than as an operand of a
    comparison or as the index of one axis (``x[:, t]``, rewritten ``index_select``)."""
    for stmt in ir.walk_statements(body):
        for expr in ir.child_expressions(stmt):
            allowed = set()
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Compare):
                    allowed.update(id(e) for e in [sub.left, *sub.comparators] if isinstance(e, ir.Name))
                elif isinstance(sub, ir.Subscript):
                    axis = ir_axis(sub.index, counter)
                    if axis is not None:
                        allowed.add(id(axis))
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Name) and sub.id == counter and id(sub) not in allowed:
                    return (f"the loop variable `{counter}` is used as a Python int (`while_loop` counts with a "
                            f"tensor; only comparisons such as `lengths > {counter}` and indexes of one axis such "
                            f"as `x[:, {counter}]` keep their result)")
    return None


class _IndexByCounter(cst.CSTTransformer):
    """``x[:, t]`` -> ``x.index_select(1, t.reshape(1)).squeeze(1)``: the same values for a
    0-d tensor ``t`` as for an int (a copy, not a view: the body writes nothing in place)."""

    def __init__(self, counter: str):
        super().__init__()
        self.counter = counter

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        elements = updated.slice
        axis = None
        for i, element in enumerate(elements):
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Name) and index.value.value == self.counter \
                    and index.star is None:
                if axis is not None:
                    return updated
                axis = i
            elif not (isinstance(index, cst.Slice) and index.lower is None and index.upper is None
                      and index.step is None):
                return updated
        if axis is None:
            return updated
        dim = cst.Integer(str(axis))
        reshape = cst.parse_expression(f"{self.counter}.reshape(1)")
        select = cst.Call(cst.Attribute(updated.value, cst.Name("index_select")),
                          [cst.Arg(dim, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(reshape)])
        return cst.Call(cst.Attribute(select, cst.Name("squeeze")), [cst.Arg(dim)],
                        lpar=updated.lpar, rpar=updated.rpar)


def _names(fn: ir.FunctionDef, line: int) -> tuple[str, str, str, str]:
    """``loop_cond``, ``loop_body``, ``broke`` and ``loop_stop``, suffixed with the line when
    the function already uses one of them or has another loop a rewrite may name so."""
    loops = sum(1 for s in ir.walk_statements(fn.body, into_defs=True) if isinstance(s, ir.Loop))
    return fresh_names(fn, ("loop_cond", "loop_body", "broke", "loop_stop"), line, crowded=loops > 1)


def render_loop(src: FixSource, plan: LoopPlan, node, fn: ir.FunctionDef, torch: str) -> str:
    cond_name, body_name, flag, stop_name = _names(fn, plan.loop.span.line)
    indent = src.indent_of(node)
    unit = node.body.indent if isinstance(node.body, cst.IndentedBlock) and node.body.indent else src.module.default_indent
    state = ([plan.counter] if plan.counter is not None else []) + ([flag] if plan.break_if is not None and
                                                                      not plan.break_first else []) + plan.carried
    params = ", ".join(state)
    out = []
    stop = plan.stop
    if plan.counter is not None and plan.hoist_stop:
        # A tensor: an unbacked SymInt (a bound from `.item()`) cannot enter while_loop's
        # condition from the enclosing scope, a tensor can.
        out.append(f"{stop_name} = {torch}.scalar_tensor({stop}, dtype={torch}.long)\n")
        stop = stop_name

    tests = []
    if plan.counter is not None:
        tests.append(f"{plan.counter} < {stop}")
    elif not _forever(plan.loop):
        tests.append(_tensor_test(src, node.test, torch))
    if plan.break_if is not None:
        if plan.break_first:
            tests.append(f"{torch}.logical_not({_tensor_test(src, plan.break_test, torch)})")
        else:
            tests.append(f"{torch}.logical_not({flag})")
    cond = tests[0]
    for test in tests[1:]:
        cond = f"{torch}.logical_and({cond}, {test})"
    out.append(f"def {cond_name}({params}):\n")
    out.append(reindent(f"return {cond}\n", unit))

    lines = list(node.body.body)
    if plan.break_if is not None:
        lines = [line for line in lines if line is not plan.break_if]
    if plan.counter is not None:
        lines = [line.visit(_IndexByCounter(plan.counter)) for line in lines]
    body = "".join(src.code_of(line) for line in lines)
    if plan.break_if is not None and not plan.break_first:
        comment = plan.break_if.body.header.comment if isinstance(plan.break_if.body, cst.IndentedBlock) else None
        body += f"{flag} = {_tensor_test(src, plan.break_test, torch)}" + (f"  {comment.value}" if comment else "") + "\n"
        inner = plan.break_if.body.body[0] if isinstance(plan.break_if.body, cst.IndentedBlock) else None
        if inner is not None and getattr(inner, "trailing_whitespace", None) is not None \
                and inner.trailing_whitespace.comment is not None:
            body += inner.trailing_whitespace.comment.value + "\n"
    peeled = ""
    if plan.peel:
        # The first iteration, run before the loop: it gives the values the loop first
        # assigns their first value; the loop then runs from the second. A loop that
        # would not run at all left them unbound (the original raised on reading them).
        if plan.hoist_stop:
            peeled += f"{torch}._check(({stop} > {plan.start}).item())\n"
        elif not (plan.stop.isdigit() and plan.start.isdigit() and int(plan.stop) > int(plan.start)):
            peeled += f"{torch}._check({plan.start} < {plan.stop})\n"
        peeled += "".join(src.code_of(line) for line in lines)
        if plan.break_if is not None and not plan.break_first:
            peeled += f"{flag} = {_tensor_test(src, plan.break_test, torch)}\n"
    values = _last_values(lines)
    returned = []
    if plan.counter is not None:
        returned.append(f"{plan.counter} + 1")
    if plan.break_if is not None and not plan.break_first:
        returned.append(flag)
    returned += [_clone(c, cst.Name(c)) if _needs_clone(values.get(c)) else c for c in plan.carried]
    body += "return " + ", ".join(returned) + ("," if len(returned) == 1 else "") + "\n"  # always a tuple
    out.append(f"def {body_name}({params}):\n")
    out.append(reindent(body, unit))
    out.insert(1 if plan.counter is not None and plan.hoist_stop else 0, peeled)

    inits = []
    if plan.counter is not None:
        inits.append(f"{torch}.tensor({plan.start} + 1)" if plan.peel else f"{torch}.tensor({plan.start})")
    if plan.break_if is not None and not plan.break_first:
        inits.append(flag if plan.peel else f"{torch}.tensor(False)")
    # Each carried value starts as a copy: a first value that is also read from the enclosing
    # scope (`state = x`, with `x` read in the body) would alias an input of the loop.
    inits += [f"{c}.clone()" for c in plan.carried]
    targets = ["_"] * (len(state) - len(plan.carried)) + plan.carried
    call = f"{torch}._higher_order_ops.while_loop({cond_name}, {body_name}, ({', '.join(inits)}{',' if len(inits) == 1 else ''}))"
    head_comment = node.body.header.comment if isinstance(node.body, cst.IndentedBlock) else None
    unpack = ", ".join(targets) + ("," if len(targets) == 1 else "")  # while_loop returns a tuple
    out.append(f"{unpack} = {call}" + (f"  {head_comment.value}" if head_comment else ""))
    return reindent("".join(out), indent)[len(indent):]


def _bare(src: FixSource, expr) -> str:
    return src.code_of(expr.with_changes(lpar=[], rpar=[]) if hasattr(expr, "lpar") else expr)


def _tensor_test(src: FixSource, test, torch: str, evaluated_again: bool = False) -> str:
    """``test`` as a tensor expression (``and``/``or``/``not`` made ``torch.logical_*``)."""

    predicate = tensor_predicate(src, test, torch)
    if isinstance(predicate, str):
        raise _Refused(predicate)
    return _bare(src, predicate)


_NOT_TENSOR_BREAK = ("the `break` condition is not a tensor (a Python value from `.item()`, `bool()`...): "
                     "keep it a tensor")


def _break_test(test, types, torch: str):
    """The `break` test as a tensor expression: itself when the analysis typed it a tensor,
    ``r.double() < c`` for ``r.item() < c`` (``item_comparison``), else None."""
    if is_tensor(types.get("$break", "unknown")):
        return test
    return item_comparison(test, types, torch)


class _Refused(Exception):
    pass


# ------------------------------------------------------------------------------ masked return


def _returns_from_body(loop: ir.Loop) -> bool:
    return any(isinstance(s, ir.Return) for s in ir.walk_statements(loop.body))


def masked_return(fn: ir.FunctionDef, loop: ir.Loop, node, types: dict[str, str], src: FixSource,
                  torch: str) -> Fix | str:
    """A loop of a fixed trip count (``range(const)``, a ``ModuleList``) that returns early:

        for layer in self.layers:                 ret, done = None, None
            x = layer(x)                          for layer in self.layers:
            out = self.head(x)           ->           x = layer(x)
            if p(out):                                out = self.head(x)
                return out                            if ret is None:
        return out                                        ret, done = out, p(out)
                                                      else:
                                                          ret = torch.where(done, ret, out)
                                                          done = torch.logical_or(done, p(out))
                                                  return out if ret is None else torch.where(done, ret, out)

    Every iteration runs (the export unrolls the loop); the first value whose test held is
    kept. The same values as the early return, when the body is free of side effects and
    both results have one shape and dtype (unsafe: not provable from the source). The
    ``is None`` tests are decided when the loop is unrolled."""
    body = loop.body
    if loop.orelse or loop.kind != "for":
        return "the loop has an `else` block" if loop.orelse else "a `while` loop that returns"
    exit_if = body[-1] if body else None
    if not (isinstance(exit_if, ir.If) and not exit_if.orelse and len(exit_if.body) == 1
            and isinstance(exit_if.body[0], ir.Return) and exit_if.body[0].value is not None and not exit_if.is_elif):
        return "the `return` is not in an `if` that closes the loop body"
    rest = body[:-1]
    for stmt in ir.walk_statements(rest):
        if isinstance(stmt, (ir.Return, ir.Break, ir.Continue)):
            return "the loop body leaves the loop in more than one place"
    why = refusal(rest, types)
    if why:
        return f"the loop body {why} (every iteration runs after the rewrite)"
    block = fn.body
    index = next((i for i, s in enumerate(block) if s is loop), None)
    if index is None or index + 2 != len(block) or not isinstance(block[-1], ir.Return) or block[-1].value is None:
        return "the loop is not followed by the function's final `return`"
    for key, what in (("$exit", "the exit condition"), ("$exit.value", "the value returned in the loop"),
                      ("$after.value", "the value returned after the loop")):
        tag = types.get(key, "unknown")
        if not is_tensor(tag):
            return f"{what} is not a tensor (the rewrite selects with `torch.where`)"
        if "+dynshape" in tag:
            return f"{what} has a data-dependent shape"
    parent = src.parents.get(node)
    siblings = list(getattr(parent, "body", ()))
    if node not in siblings or siblings.index(node) + 1 >= len(siblings):
        return "the loop's `return` was not found"
    final = siblings[siblings.index(node) + 1]
    cst_if = node.body.body[-1]
    if not isinstance(cst_if, cst.If):
        return "the `return` is not in an `if` that closes the loop body"
    test = _tensor_test(src, cst_if.test, torch)
    returned = src.code_of(cst_if.body.body[0].body[0].value) if isinstance(cst_if.body, cst.IndentedBlock) else None
    last_value = final.body[0].value if isinstance(final, cst.SimpleStatementLine) else None
    if returned is None or last_value is None:
        return "the `return`s were not found"
    ret, done = fresh_names(fn, ("exit_value", "exited"), loop.span.line)
    unit = node.body.indent if isinstance(node.body, cst.IndentedBlock) and node.body.indent else src.module.default_indent
    indent = src.indent_of(node)
    head = src.module.code_for_node(node.with_changes(leading_lines=())).split("\n", 1)[0]  # `for ...:  # comment`
    lines = "".join(src.code_of(line) for line in node.body.body[:-1])
    if_comment = cst_if.body.header.comment
    return_comment = cst_if.body.body[0].trailing_whitespace.comment
    if_comment = f"  {if_comment.value}" if if_comment is not None else ""
    return_comment = f"  {return_comment.value}" if return_comment is not None else ""
    update = (f"if {ret} is None:{if_comment}\n{unit}{ret}, {done} = {returned}, {test}{return_comment}\n"
              f"else:\n{unit}{ret} = {torch}.where({done}, {ret}, {returned})\n"
              f"{unit}{done} = {torch}.logical_or({done}, {test})\n")
    text = (f"{ret}, {done} = None, None\n{head}\n" + reindent(lines + update, unit)
            + f"return {src.code_of(last_value)} if {ret} is None else {torch}.where({done}, {ret}, "
              f"{src.code_of(last_value)})")
    text = reindent(text, indent)[len(indent):]
    edit = src.loop_edit(node, final, text)
    if isinstance(edit, str):
        return edit
    return Fix(f"Run every iteration and keep the first value whose test holds (`{torch}.where`), instead of "
               "returning from the loop", (edit,), APPLICABILITY)


# ------------------------------------------------------------------------------ masked break


def _over_range(loop: ir.Loop) -> bool:
    rng = loop.iter
    return isinstance(rng, ir.Call) and isinstance(rng.func, ir.Name) and rng.func.id == "range"


def masked_break(fn: ir.FunctionDef, loop: ir.Loop, node, types: dict[str, str], src: FixSource,
                 torch: str) -> Fix | str:
    """A loop of a fixed trip count (``range(const)``, a ``ModuleList``) that breaks on a
    tensor test, possibly growing lists that are stacked after it:

        outs = []                                  outs = []
                                                   stopped, kept = torch.tensor(False), torch.tensor(0)
        for _ in range(self.max_len):              for _ in range(self.max_len):
            h = self.cell(h)                           h = torch.where(stopped, h, self.cell(h))
            outs.append(h)                 ->          outs.append(h)
                                                       kept = kept + torch.logical_not(stopped).long()
            if p(h):                                   stopped = torch.logical_or(stopped, p(h))
                break
        return torch.stack(outs, dim=1)            return torch.stack(outs, dim=1).narrow(1, 0, kept.item())

    Every iteration runs (the export unrolls the loop); after the test held, each value the
    loop carries keeps what it had (``torch.where``), and what the lists gained is cut off
    by the count of iterations the original ran. The same values, when the body is free
    of side effects and every carried value keeps its shape and dtype (unsafe: not
    provable from the source)."""
    if loop.orelse:
        return "the loop has an `else` block"
    if loop.kind != "for":
        return "a `while` loop that breaks on a tensor test (keep the condition a tensor: `while_loop`)"
    body = list(loop.body)
    breaks = [s for s in ir.walk_statements(body) if isinstance(s, (ir.Break, ir.Continue, ir.Return))]
    ends = [i for i in ({0, len(body) - 1}) if body and _is_break_if(body[i])]
    if len(breaks) != 1 or not isinstance(breaks[0], ir.Break) or not ends:
        return "the `break` is not in an `if` that opens or closes the loop body"
    index = ends[0]
    cst_lines = list(node.body.body)
    if len(cst_lines) != len(body):
        return "the loop body was not matched to its source"
    if not isinstance(cst_lines[index], cst.If):
        return "the `break` is not in an `if` that opens or closes the loop body"
    break_test = _break_test(cst_lines[index].test, types, torch)
    if break_test is None:
        return _NOT_TENSOR_BREAK
    grown = appends(loop)
    lists = [a.value.func.value.id for a in grown]
    if len(set(lists)) != len(lists):
        return "a list grows twice in one iteration"
    rest = [s for i, s in enumerate(body) if i != index and s not in grown]
    why = refusal(rest, types)
    if why:
        return f"the loop body {why} (every iteration runs after the rewrite)"
    live = annotate_regions(fn)
    carried = [c for c in loop.carried if c not in lists]
    for name in carried:
        before = types.get(f"<{name}", "unknown")
        if not is_tensor(before):
            return f"`{name}` is not a tensor before the loop (it keeps its value with `torch.where`)"
        growing = _reshaping_assignment(name, rest)
        if growing:
            return f"`{name}` may change shape in the loop (`{growing}`)"
        if any(isinstance(s, ir.Assign) and name in assigned_names([s]) and not
               (len(s.targets) == 1 and isinstance(s.targets[0], ir.Name)) for s in rest):
            return f"`{name}` is assigned by unpacking (each name is kept with `torch.where`)"
    if isinstance(loop.target, ir.Name) and loop.target.id in live.live_in(live.cfg.join_of[id(loop)]):
        return "the loop variable is used after the loop"
    block, position = block_of(fn.body, loop)
    if block is None:
        return "the loop was not found in its function"
    stacks = {}
    for name in lists:
        found = stacked_after(name, block, position, fn, loop)
        if isinstance(found, str):
            return found
        stacks[name] = found
    stopped, kept = fresh_names(fn, ("stopped", "kept"), loop.span.line)
    # The source: the loop's lines with the carried assignments gated.
    test = _tensor_test(src, break_test, torch)
    unit = node.body.indent if isinstance(node.body, cst.IndentedBlock) and node.body.indent else src.module.default_indent
    lines = []
    if index == 0:
        lines.append(f"{stopped} = {torch}.logical_or({stopped}, {test})\n")
    counted = False
    for i, (stmt, line) in enumerate(zip(body, cst_lines)):
        if i == index:
            continue
        if stmt in grown:
            lines.append(src.code_of(line))
            if not counted:
                lines.append(f"{kept} = {kept} + {torch}.logical_not({stopped}).long()\n")
                counted = True
            continue
        # Unpacking into a carried name was refused above: each carried assignment is plain.
        lines.append(gated_line(src, stmt, line, carried,
                                lambda name, value: f"{torch}.where({stopped}, {name}, {value})"))
    if index != 0:
        lines.append(f"{stopped} = {torch}.logical_or({stopped}, {test})\n")
    head = src.module.code_for_node(node.with_changes(leading_lines=())).split("\n", 1)[0]
    starts = ", ".join(f"{torch}.tensor({v})" for v in (["False"] + (["0"] if lists else [])))
    names = ", ".join([stopped] + ([kept] if lists else []))
    indent = src.indent_of(node)
    text = f"{names} = {starts}\n{head}\n" + reindent("".join(lines), unit)
    text = reindent(text, indent)[len(indent):].rstrip("\n")
    edits = [src.edit(node, node, text)]
    for name, stack in stacks.items():
        edit = cut_edit(src, torch, name, stack, kept)
        if isinstance(edit, str):
            return edit
        edits.append(edit)
    cut = edits[0]
    if loses_comments(src.text(cut), cut.content):
        return "comments inside the loop would be lost"
    if not src.parses_after(cut, statement=True):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Run every iteration and keep each value once the test held (`{torch}.where`)"
               + (", cutting the stacked lists to the iterations that ran" if lists else ""), tuple(edits), APPLICABILITY)


