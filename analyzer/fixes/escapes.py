"""Fixes for the UT201 sites where a tensor becomes a Python number by ``int()`` / ``float()``:

    n = int(t)        ->   n = torch.sym_int(t.item())
    s = float(t)      ->   s = torch.sym_float(t.item())

``fix_escape(fact, file) -> Fix | str``: the fix, or why there is none.

Why: under ``torch.export`` (non-strict, the default of ``torch.onnx.export(dynamo=True)``)
``t.item()`` becomes an *unbacked* symbolic integer (``u0``) that the graph carries: a
slice bound (``x[:, :n]``), a ``narrow``/``topk``/``new_zeros`` size or ``min(n, k)``
stay symbolic, and export adds the runtime checks itself. ``int(t)`` instead asks for a
concrete Python int, the "Could not extract specialized integer from data-dependent
expression u0" error, and so does ``int()`` of the unbacked value.
``torch.sym_int`` / ``torch.sym_float`` are the casts that keep it symbolic; on plain
Python numbers they are ``int()`` / ``float()`` (``torch.sym_int`` truncates toward zero
as ``int`` does), so eager results do not change. Sizes need no ``torch._check_is_size``
any more (torch >= 2.6 treats an unbacked size as non-negative where it is used as one);
a bound the graph cannot know (``n <= x.shape[1]``) is checked at run time by the ops
themselves, as in eager.

The fix is *unsafe* in ruff's sense: it is exact on tensors, and the analysis only
reports ``int(t)`` where ``t`` is certainly a tensor, but that certainty is the
analysis's, not a proof. What stays: the value is still a Python number for the legacy
tracer (`dynamo=False`), so the site is reported again as ``.item()`` (UT201).
"""

from __future__ import annotations

import libcst as cst

from analyzer.analyses.kinds.facts import EscapeFact
from analyzer.diagnostics import Fix
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names

APPLICABILITY = "unsafe"

_CASTS = {"int": "sym_int", "float": "sym_float"}


def fix_escape(fact: EscapeFact, file, torch_name) -> Fix | str:
    """``file``: the `branches._File` of the site; ``torch_name(src, node)`` the name of
    the torch module there (raises with why when there is none)."""
    if fact.how == "bool":
        return _truth_flag(fact, file)
    cast = _CASTS.get(fact.how)
    if cast is None:
        return f"no rewrite for `{fact.how}`"
    src = file.source_at(fact.site.line)
    node = src.node_at(cst.Call, fact.site.line, fact.site.column)
    if node is None or not isinstance(node.func, cst.Name) or node.func.value != fact.how:
        return f"the `{fact.how}(...)` call was not found"
    if len(node.args) != 1 or node.args[0].star or node.args[0].keyword is not None:
        return f"`{fact.how}()` takes one plain argument here"
    torch = torch_name(src, node)
    value = node.args[0].value
    code = src.code_of(value.with_changes(lpar=[], rpar=[]) if not value.lpar else value)
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
        code = f"({code})"
    edit = src.edit(node, node, f"{torch}.{cast}({code}.item())")
    if not src.parses_after(edit, statement=False):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Rewrite `{fact.how}(...)` as `{torch}.{cast}((...).item())`, which torch.export keeps symbolic",
               (edit,), APPLICABILITY)


def _truth_flag(fact: EscapeFact, file) -> Fix | str:
    """``flag = bool(t)`` read only as a truth test (``if flag:``, ``if not flag and ...``,
    ``a if flag else b``, ``assert flag``) -> ``flag = t``: every test of ``flag`` then
    tests ``t``, which is what ``bool(t)`` computed (and raises where it raised). The
    ``if`` on it becomes a tensor branch, which the UT101 fixes rewrite next."""
    why = ("a Python bool decides a Python branch: keep the test a tensor and select with `torch.where` or "
           "`torch.cond`")
    src = file.source_at(fact.site.line)
    node = src.node_at(cst.Call, fact.site.line, fact.site.column)
    if node is None or not isinstance(node.func, cst.Name) or len(node.args) != 1 or node.args[0].keyword \
            or node.args[0].star:
        return why
    statement = src.parents.get(node)
    if not (isinstance(statement, cst.Assign) and statement.value is node and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)):
        return why
    name = statement.targets[0].target.value
    fn = _function_at(file, fact.site.line)
    if fn is None or not _only_truth_tests(fn, name):
        return why + f" (`{name}` is used as more than a truth test)"
    value = node.args[0].value
    edit = src.edit(node, node, src.code_of(value.with_changes(lpar=[], rpar=[])) if hasattr(value, "lpar")
                    else src.code_of(value))
    if not src.parses_after(edit, statement=False):
        return "the rewrite would not parse (please report this)"
    return Fix(f"Keep `{name}` a tensor (it is only tested for truth): the `if` on it becomes a tensor branch",
               (edit,), APPLICABILITY)


def _function_at(file, line: int):
    best = None
    for fn in ir.walk_statements(file.module.body, into_defs=True):
        if isinstance(fn, ir.FunctionDef) and fn.span.line <= line and any(
                s.span.line == line for s in ir.walk_statements(fn.body)):
            if best is None or fn.span.line >= best.span.line:
                best = fn
    return best


def _only_truth_tests(fn, name: str) -> bool:
    """Every read of ``name`` in ``fn`` is the test (or under ``not`` / ``and`` / ``or`` in
    the test) of an ``if``, a conditional expression or an ``assert``; it is bound once."""
    tests: set[int] = set()
    bound = 0

    def mark(expr) -> None:
        if isinstance(expr, ir.Name):
            tests.add(id(expr))
        elif isinstance(expr, ir.UnaryOp) and expr.op == "not":
            mark(expr.operand)
        elif isinstance(expr, ir.BoolOp):
            for value in expr.values:
                mark(value)

    for stmt in ir.walk_statements(fn.body):
        if isinstance(stmt, (ir.FunctionDef, ir.ClassDef)):
            return False  # a nested scope may read it
        if isinstance(stmt, (ir.If, ir.Assert)):
            mark(stmt.test)
        bound += name in assigned_names([stmt]) if not isinstance(stmt, (ir.If, ir.Loop, ir.With, ir.Try)) else 0
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.IfExp):
                    mark(sub.test)
    if bound != 1:
        return False
    for stmt in ir.walk_statements(fn.body):
        targets = set()
        if isinstance(stmt, ir.Assign):
            targets = {id(sub) for t in stmt.targets for sub in ir.walk_expression(t)}
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if isinstance(sub, ir.Name) and sub.id == name and id(sub) not in tests and id(sub) not in targets:
                    return False
    return True


# ------------------------------------------------------------------------------ .tolist() / .item()

def _escape_call(src, fact):
    """The ``t.<how>()`` call of the site: the outermost call starting there whose method is ``how``."""
    node = src.node_at(cst.Call, fact.site.line, fact.site.column)
    best = None
    while isinstance(node, (cst.Call, cst.Attribute)):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == fact.how \
                and not node.args:
            best = node
        node = src.parents.get(node)
    return best


def fix_unpacked_tolist(fact: EscapeFact, file, torch_name) -> Fix | str | None:
    """``a, b = t.tolist()`` -> ``a, b = [v.tolist() for v in t.unbind(0)]``: the same items
    (``tolist`` of each row of ``t`` is that row of ``t.tolist()``, a Python number for a
    1-d ``t``), and as many as the names unpacked, so torch.export keeps each a symbolic
    number (``.tolist()`` of a 0-d tensor is its ``.item()``) where ``t.tolist()`` needs the
    length of a list it cannot make. A length other than the names' raises as before
    (``ValueError`` of the unpacking). None when the list is not unpacked into names."""
    src = file.source_at(fact.site.line)
    call = _escape_call(src, fact)
    statement = src.parents.get(call) if call is not None else None
    if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, (cst.Tuple, cst.List))
            and all(isinstance(e, cst.Element) and not isinstance(e, cst.StarredElement)
                    and isinstance(e.value, cst.Name) for e in statement.targets[0].target.elements)):
        return None
    receiver = call.func.value
    code = src.code_of(receiver)
    names = {e.value.value for e in statement.targets[0].target.elements}
    item = "v" if "v" not in names and "v" not in code else "row"
    edit = src.edit(call, call, f"[{item}.tolist() for {item} in {code}.unbind(0)]")
    if not src.parses_after(edit, statement=False):
        return "the rewrite would not parse (please report this)"
    return Fix("Unpack the rows (`t.unbind(0)`), each made a Python number on its own, which torch.export keeps "
               "symbolic", (edit,), APPLICABILITY)


_SYM = {"max": "sym_max", "min": "sym_min"}


def fix_item_min_max(fact: EscapeFact, file, torch_name) -> Fix | None:
    """``n = t.item()`` then ``max(n, c)`` / ``min(n, c)`` -> ``torch.sym_max(n, c)`` /
    ``torch.sym_min``: on Python numbers ``builtins.max`` / ``min`` (the value), while the
    builtin compares an unbacked SymFloat and stops torch.export ("Could not guard on
    data-dependent expression"). Only where ``n`` is bound once, and each call is of the
    builtin with two positional arguments. What changes: with a float among the arguments
    the result is a float (``max(3, 1e-8)`` is ``3.0``, not ``3``): the same number."""
    src = file.source_at(fact.site.line)
    call = _escape_call(src, fact)
    statement = src.parents.get(call) if call is not None else None
    if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)):
        return None
    name = statement.targets[0].target.value
    fn = _function_at(file, fact.site.line)
    if fn is None or sum(name in assigned_names([s]) for s in ir.walk_statements(fn.body)
                         if not isinstance(s, (ir.If, ir.Loop, ir.With, ir.Try))) != 1:
        return None
    if any(p.name == name for p in fn.params):
        return None
    shadowed = {n for s in ir.walk_statements(file.module.body, into_defs=True)
                for n in (assigned_names([s]) if not isinstance(s, (ir.If, ir.Loop, ir.With, ir.Try)) else ())}
    shadowed |= {s.name for s in ir.walk_statements(file.module.body, into_defs=True) if isinstance(s, ir.FunctionDef)}
    edits = []
    for stmt in ir.walk_statements(fn.body):
        for expr in ir.child_expressions(stmt):
            for sub in ir.walk_expression(expr):
                if not (isinstance(sub, ir.Call) and isinstance(sub.func, ir.Name) and sub.func.id in _SYM
                        and sub.func.id not in shadowed and len(sub.args) == len(sub.positional) == 2):
                    continue
                if not any(isinstance(a.value, ir.Name) and a.value.id == name for a in sub.args):
                    continue
                where = file.source_at(sub.span.line)
                node = where.node_at(cst.Call, sub.span.line, sub.span.column)
                if node is None or not isinstance(node.func, cst.Name):
                    continue
                try:
                    torch = torch_name(where, node)
                except Exception:  # noqa: BLE001 - no torch name there: that call is left
                    continue
                edits.append(where.edit(node.func, node.func, f"{torch}.{_SYM[sub.func.id]}"))
    if not edits:
        return None
    return Fix(f"Compare `{name}` with `torch.sym_max` / `torch.sym_min`, which torch.export keeps symbolic, "
               f"instead of the builtin", tuple(edits), APPLICABILITY)


def fix_item_cast(fact: EscapeFact, file, torch_name) -> Fix | None:
    """``int(t.item())`` / ``float(t.item())`` -> ``torch.sym_int(t.item())`` /
    ``torch.sym_float(...)``: on a Python number the builtin itself (``builtins.int(a)``,
    so the same value), while torch.export keeps the unbacked number ``.item()`` makes
    symbolic instead of asking for a concrete one ("Could not extract specialized integer
    from data-dependent expression"), as ``fix_escape`` does for ``int(t)``. None when the
    ``.item()`` is not the one argument of the builtin (not shadowed in the module)."""
    src = file.source_at(fact.site.line)
    call = _escape_call(src, fact)
    arg = src.parents.get(call) if call is not None else None
    cast = src.parents.get(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(cast, cst.Call) and isinstance(cast.func, cst.Name) and cast.func.value in _CASTS
            and len(cast.args) == 1 and cast.args[0] is arg and not arg.star and arg.keyword is None):
        return None
    builtin = cast.func.value
    if any(builtin in assigned_names([s]) or (isinstance(s, ir.FunctionDef) and s.name == builtin)
           for s in ir.walk_statements(file.module.body, into_defs=True)
           if not isinstance(s, (ir.If, ir.Loop, ir.With, ir.Try))):
        return None  # `int` is another name in this module
    try:
        torch = torch_name(src, cast)
    except Exception:  # noqa: BLE001 - no torch name there: left as it is
        return None
    edit = src.edit(cast.func, cast.func, f"{torch}.{_CASTS[builtin]}")
    return Fix(f"Cast with `{torch}.{_CASTS[builtin]}`, which torch.export keeps symbolic, instead of `{builtin}()`",
               (edit,), APPLICABILITY)
