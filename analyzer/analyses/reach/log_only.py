"""Branches whose only effect is a message: `if bad: logger.warning(...)`. Nothing the
trace records depends on which side runs (a log line, a warning, a print), so the test
is no hazard, whatever it reads. A branch that raises is not one of them: the exported
graph would skip a check eager makes."""

from __future__ import annotations

from analyzer.frontend import expr_text, ir

_LOG_METHODS = frozenset({
    "debug", "info", "warning", "warn", "error", "critical", "exception", "log",
    "warning_once", "info_once", "warning_advice",
})
_LOG_FUNCTIONS = frozenset({"print", "warn", "warnings.warn"})


def only_logs(s: ir.If) -> bool:
    """Whether every statement on both sides of ``s`` (through nested `if`s) only logs."""
    return bool(s.body) and _logs(s.body) and _logs(s.orelse)


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
