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
    compared = fix_compared_number(fact, file, torch_name)
    if compared is not None:
        return compared
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
    name = _bound_name(src, node)
    if name is None:
        return why
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


def _bound_name(src, call) -> str | None:
    """The one name ``call`` is assigned to (``name = call``), or None for any other use."""
    statement = src.parents.get(call) if call is not None else None
    if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)):
        return None
    return statement.targets[0].target.value


def _function_at(file, line: int):
    best = None
    for fn in ir.walk_statements(file.module.body, into_defs=True):
        if isinstance(fn, ir.FunctionDef) and fn.span.line <= line and any(
                s.span.line == line for s in ir.walk_statements(fn.body)):
            if best is None or fn.span.line >= best.span.line:
                best = fn
    return best


_ORDERINGS = frozenset({"<", "<=", ">", ">=", "==", "!="})


def _only_truth_tests(fn, name: str, compared=None) -> bool:
    """Every read of ``name`` in ``fn`` is the test (or under ``not`` / ``and`` / ``or`` in
    the test) of an ``if``, a ``while``, a conditional expression or an ``assert``; it is
    bound once. ``compared(c)`` (a predicate): instead, every read is one side of a single
    ordering comparison (``name < c``, ``c != name``) that is such a test, with ``compared(c)``."""
    tests: set[int] = set()
    bound = 0

    def mark(expr) -> None:
        if compared and isinstance(expr, ir.Compare) and len(expr.ops) == 1 and expr.ops[0] in _ORDERINGS:
            left, right = expr.left, expr.comparators[0]
            for side, other in ((left, right), (right, left)):
                if isinstance(side, ir.Name) and side.id == name and compared(other):
                    tests.add(id(side))
        elif not compared and isinstance(expr, ir.Name):
            tests.add(id(expr))
        elif isinstance(expr, ir.UnaryOp) and expr.op == "not":
            mark(expr.operand)
        elif isinstance(expr, ir.BoolOp):
            for value in expr.values:
                mark(value)

    for stmt in ir.walk_statements(fn.body):
        if isinstance(stmt, (ir.FunctionDef, ir.ClassDef)):
            return False  # a nested scope may read it
        if isinstance(stmt, (ir.If, ir.Assert)) or (isinstance(stmt, ir.Loop) and stmt.kind == "while"):
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


# ------------------------------------------------------------------------------ compared numbers

def fix_compared_number(fact: EscapeFact, file, torch_name) -> Fix | None:
    """``v = t.item()`` / ``v = float(t)`` -> ``v = t.double()``, and ``v = int(t)`` ->
    ``v = t.long().double()``, where every read of ``v`` is one side of a single ordering
    comparison tested by an ``if`` / ``while`` / ``assert`` / conditional expression (under
    ``not`` / ``and`` / ``or`` too): the test then compares a 0-d tensor, which the
    UT101/UT102 fixes move into the graph on the next pass. None otherwise (any other use:
    arithmetic, a call, a store, keeps the Python number).

    Why eager results do not change: ``.item()`` / ``float()`` give a Python float (a
    double) or int that Python compares exactly; the double tensor holds that number
    exactly (every float16/bfloat16/float32/float64 value, and every integer up to 2**53,
    the rule of ``predicates.item_comparison``), and a double tensor compared with a
    Python number compares in double. ``int()`` truncates toward zero, as ``.long()``
    does; the truth value of the comparison tensor is what ``bool`` of the Python
    comparison was (and a tensor of more than one element raises in the test, as
    ``int()``/``.item()`` raised)."""
    src = file.source_at(fact.site.line)
    if fact.how == "item":
        call = _escape_call(src, fact)
    else:
        call = src.node_at(cst.Call, fact.site.line, fact.site.column)
        if not (call is not None and isinstance(call.func, cst.Name) and call.func.value == fact.how
                and fact.how in _CASTS and len(call.args) == 1 and not call.args[0].star
                and call.args[0].keyword is None):
            return None
    name = _bound_name(src, call)
    if name is None:
        return None
    fn = _function_at(file, fact.site.line)
    if fn is None or any(p.name == name for p in fn.params) or not _only_truth_tests(
            fn, name, compared=lambda other: _python_number(other, fn, file.module)):
        return None
    if fact.how == "item":
        edit = src.edit(call.func.attr, call.func.attr, "double")
        kept = "`.item()` as `.double()`"
    else:
        value = call.args[0].value
        code = src.code_of(value)
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
            code = f"({code})"
        cast = ".long().double()" if fact.how == "int" else ".double()"
        edit = src.edit(call, call, f"{code}{cast}")
        kept = f"`{fact.how}(...)` as `(...){cast}`"
    if not src.parses_after(edit, statement=False):
        return None
    return Fix(f"Keep `{name}` a tensor ({kept}, the same number in double): it is only compared in tests, "
               "which become tensor tests", (edit,), APPLICABILITY)


def _python_number(expr, fn, module) -> bool:
    """``expr`` is a Python number by its form: a number literal, arithmetic of such, a
    parameter of ``fn`` annotated ``int``/``float`` or defaulting to a number, or a
    ``self.<attr>`` that every ``self.<attr> = ...`` of the module sets to such (in its own
    function). Why only these: a Python number compared with a *tensor* is compared in the
    tensor's dtype (a float32 tensor rounds the number to float32 first), which a double
    tensor in its place would not do: the truth value could change."""
    if isinstance(expr, ir.Const):
        return type(expr.value) in (int, float)
    if isinstance(expr, ir.UnaryOp) and expr.op in ("-", "+"):
        return _python_number(expr.operand, fn, module)
    if isinstance(expr, ir.BinOp) and expr.op in ("+", "-", "*", "/", "//", "%"):
        return _python_number(expr.left, fn, module) and _python_number(expr.right, fn, module)
    if isinstance(expr, ir.Name):
        return any(p.name == expr.id and _number_param(p) for p in fn.params)
    if module is not None and isinstance(expr, ir.Attribute) and isinstance(expr.value, ir.Name) \
            and expr.value.id == "self":
        sets = []  # (function, the value set there, or None when not a plain `self.attr = value`)
        for owner in ir.walk_statements(module.body, into_defs=True):
            if not isinstance(owner, ir.FunctionDef):
                continue
            for stmt in ir.walk_statements(owner.body):
                targets = stmt.targets if isinstance(stmt, ir.Assign) else \
                    [stmt.target] if isinstance(stmt, ir.AugAssign) else []
                for target in targets:
                    for sub in ir.walk_expression(target):
                        if isinstance(sub, ir.Attribute) and sub.attr == expr.attr \
                                and isinstance(sub.value, ir.Name) and sub.value.id == "self":
                            plain = isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 and target is sub
                            sets.append((owner, stmt.value if plain else None))
        return bool(sets) and all(value is not None and _python_number(value, owner, None) for owner, value in sets)
    return False


def _number_param(param) -> bool:
    annotation = param.annotation
    if annotation is not None:
        return isinstance(annotation, ir.Name) and annotation.id in ("int", "float")
    default = param.default
    if isinstance(default, ir.UnaryOp) and default.op in ("-", "+"):
        default = default.operand
    return isinstance(default, ir.Const) and type(default.value) in (int, float)


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
    name = _bound_name(src, call)
    if name is None:
        return None
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
