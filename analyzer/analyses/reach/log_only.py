"""Branches whose only effect is a message: `if bad: logger.warning(...)`. Nothing the
trace records depends on which side runs (a log line, a warning, a print), so the test
is no hazard, whatever it reads. A branch that raises is not one of them: the exported
graph would skip a check eager makes."""

from __future__ import annotations

from analyzer.analyses.engine.memo import per_function_cache
from analyzer.frontend import expr_text, ir

_LOG_METHODS = frozenset({
    "debug", "info", "warning", "warn", "error", "critical", "exception", "log",
    "warning_once", "info_once", "warning_advice",
})
_LOG_FUNCTIONS = frozenset({"print", "warn", "warnings.warn"})


def only_logs(s: ir.If) -> bool:
    """Whether every statement on both sides of ``s`` (through nested `if`s) only logs."""
    return bool(s.body) and _logs(s.body) and _logs(s.orelse)


@per_function_cache
def error_choices(fn: ir.FunctionDef) -> frozenset[int]:
    """ids of the `if`s of ``fn`` that only pick which error is raised: the body raises,
    and so does every way on from the `if` (`if t.min() < 0: raise IndexError(...)`
    followed by `raise e`). Every path raises whatever the test reads; which exception
    and message it carries changes nothing a trace records."""
    out: set[int] = set()
    for block in [fn.body] + [b for s in ir.walk_statements(fn.body) for b in ir.child_blocks(s)]:
        for i, stmt in enumerate(block):
            if _raises_only(stmt) and _always_raises(block[i + 1:]):
                out.add(id(stmt))
    return frozenset(out)


def _raises_only(stmt) -> bool:
    """`if test: raise ...` (an `else`, if any, raises as well)."""
    return isinstance(stmt, ir.If) and not stmt.synthetic and _ends_in_raise(stmt.body) \
        and (not stmt.orelse or _ends_in_raise(stmt.orelse))


def _ends_in_raise(stmts) -> bool:
    return bool(stmts) and all(isinstance(st, ir.Pass) or _logs([st]) for st in stmts[:-1]) \
        and isinstance(stmts[-1], ir.Raise)


def _always_raises(stmts) -> bool:
    """Whether running ``stmts`` ends in a `raise` on every path, with only other
    error-picking `if`s before it."""
    return bool(stmts) and isinstance(stmts[-1], ir.Raise) and all(
        isinstance(st, ir.Pass) or _raises_only(st) for st in stmts[:-1])


def _logs(stmts) -> bool:
    for st in stmts:
        if isinstance(st, ir.Pass):
            continue
        if isinstance(st, ir.If) and not st.synthetic and _logs(st.body) and _logs(st.orelse):
            continue
        if isinstance(st, ir.ExprStmt) and isinstance(st.value, ir.Call) and _is_log_call(st.value):
            continue
        return False
    return True


def _is_log_call(call: ir.Call) -> bool:
    func = call.func
    if expr_text(func) in _LOG_FUNCTIONS:
        return True
    if not isinstance(func, ir.Attribute) or func.attr not in _LOG_METHODS:
        return False
    owner = expr_text(func.value).rsplit(".", 1)[-1].lower()
    return owner in ("warnings", "logging") or owner.endswith("logger") or owner in ("log", "_log")


def message_choices(fn: ir.FunctionDef) -> frozenset[int]:
    """ids of the conditional expressions of ``fn`` whose value only reaches a message:
    the expression form of `only_logs`. One inside what a `raise`, an `assert`'s message
    or a log call evaluates (`raise ValueError(f"{'a' if t.any() else 'b'}")`), or one
    bound to a name that only such messages read, directly or through other such names
    (`msg = "x" if cond else "y"; warnings.warn(msg)`). Which text the message has changes
    nothing a trace records, whatever the test reads."""
    sinks, bound, names = _message_names(fn, with_parameters=False)
    out = {id(x) for e in sinks for x in ir.walk_expression(e) if isinstance(x, ir.IfExp)}
    out.update(id(x) for name in names for v in bound[name] for x in ir.walk_expression(v)
               if isinstance(x, ir.IfExp))
    return frozenset(out)


@per_function_cache
def message_parameters(fn: ir.FunctionDef) -> frozenset[str]:
    """The parameters of ``fn`` that only a message reads (`def check(cond, msg=None):
    ... raise Error(msg)`): what a caller passes there, a choice of text included, is no
    computation (`check(ok, "a" if ok else f"got {t}")`)."""
    _, _, names = _message_names(fn, with_parameters=True)
    return frozenset(p.name for p in fn.params if p.name in names and p.name != "self")


def _message_names(fn: ir.FunctionDef, with_parameters: bool):
    """(the message expressions of ``fn``, name -> the expressions bound to it, the names
    only messages read). Solved as a greatest fixpoint: a name is a message name until a
    read of it outside a message (or outside the definition of another message name, or
    a None test) is found. A parameter is a candidate ``with_parameters`` only; one
    never read is none."""
    statements = list(ir.walk_statements(fn.body, into_defs=True))
    sinks = [e for s in statements for e in _message_expressions(s)]
    # name -> the expressions bound to it (single-name assignments only)
    bound: dict[str, list] = {}
    written: set[int] = set()  # the target names of those bindings: writes, not reads
    for s in statements:
        target = s.targets[0] if isinstance(s, ir.Assign) and len(s.targets) == 1 else getattr(s, "target", None)
        if isinstance(s, (ir.Assign, ir.AugAssign)) and isinstance(target, ir.Name):
            bound.setdefault(target.id, []).append(s.value)
            written.add(id(target))
    in_sinks = {id(x) for e in sinks for x in ir.walk_expression(e)}
    params = {p.name for p in fn.params}
    if with_parameters:
        for name in params:
            bound.setdefault(name, [])
    if not bound or not in_sinks:
        return sinks, bound, set()
    reads: dict[str, list[int]] = {name: [] for name in bound}
    none_tests: set[int] = set()
    for s in statements:
        for e in ir.child_expressions(s):
            for x in ir.walk_expression(e):
                if isinstance(x, ir.Name) and x.id in reads and id(x) not in written:
                    reads[x.id].append(id(x))
                elif _is_none_test(x):
                    none_tests.add(id(x.left))
    candidates = set(bound) if with_parameters else set(bound) - params
    candidates = {n for n in candidates if n not in params or reads[n]}
    while True:
        allowed = set(in_sinks)
        for name in candidates:
            allowed.update(id(x) for v in bound[name] for x in ir.walk_expression(v))
        kept = {name for name in candidates
                if all(i in allowed or (name in params and i in none_tests) for i in reads[name])}
        if kept == candidates:
            break
        candidates = kept
    return sinks, bound, candidates


def _is_none_test(e) -> bool:
    return isinstance(e, ir.Compare) and len(e.ops) == 1 and e.ops[0] in ("is", "is not") \
        and isinstance(e.left, ir.Name) and isinstance(e.comparators[0], ir.Const) and e.comparators[0].value is None


def _message_expressions(s) -> list:
    """What ``s`` evaluates only to build a message: a raise's exception, an assert's
    message, the arguments of a log call."""
    if isinstance(s, ir.Raise):
        return [e for e in (s.exc, s.cause) if e is not None]
    if isinstance(s, ir.Assert):
        return [s.msg] if s.msg is not None else []
    if isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Call) and _is_log_call(s.value):
        return [a.value for a in s.value.args]
    return []
