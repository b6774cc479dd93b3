"""Emptiness guards of an escape: `int(t.max()) + 1 if t.numel() > 0 else 0`.

The side taken for a non-empty `t` turns `t`'s values into a Python number, and that
escape is reported (UT201) where it is. The test only keeps the escape from failing on
an empty `t` (`max()` of no elements raises): whichever side a trace records, what it
freezes is the escape's constant, so the test is no hazard of its own. A test of any
other kind (`t.sum() > 0`), or one whose sides do not read `t`'s values into Python,
stays a branch like any other."""

from __future__ import annotations

from analyzer.frontend import expr_text, ir

_ESCAPE_METHODS = frozenset({"item", "tolist"})
_ESCAPE_BUILTINS = frozenset({"int", "float", "bool"})


def guards_an_escape(e: ir.IfExp) -> bool:
    """Whether ``e`` tests a tensor's emptiness and its non-empty side escapes that
    tensor's values."""
    found = _emptiness(e.test)
    if found is None:
        return False
    tensor, nonempty_when_true = found
    side = e.body if nonempty_when_true else e.orelse
    return _escapes(side, tensor)


def _emptiness(test) -> tuple[str, bool] | None:
    """(the text of the tensor, whether the test is true when it is non-empty) for
    `t.numel() > 0`, `t.numel() != 0`, `t.numel() == 0`, `len(t) > 0`, `t.shape[0] == 0`
    and the like."""
    if isinstance(test, ir.UnaryOp) and test.op == "not":
        size = _size_of(test.operand)
        return (size, False) if size is not None else None
    if not (isinstance(test, ir.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ir.Const)):
        return None
    bound, op = test.comparators[0].value, test.ops[0]
    size = _size_of(test.left)
    if size is None or isinstance(bound, bool) or not isinstance(bound, int):
        return None
    if (op, bound) in ((">", 0), ("!=", 0), (">=", 1)):
        return size, True
    if (op, bound) in (("==", 0), ("<", 1), ("<=", 0)):
        return size, False
    return None


def _size_of(e) -> str | None:
    """The tensor whose size ``e`` is: `t.numel()`, `len(t)`, `t.shape[0]`, `t.size(0)`."""
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and e.func.attr in ("numel", "nelement") and not e.args:
        return expr_text(e.func.value)
    if isinstance(e, ir.Call) and expr_text(e.func) == "len" and len(e.args) == 1:
        return expr_text(e.args[0].value)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and e.func.attr == "size" and len(e.args) == 1:
        return expr_text(e.func.value)
    if isinstance(e, ir.Subscript) and isinstance(e.value, ir.Attribute) and e.value.attr == "shape":
        return expr_text(e.value.value)
    return None


def _escapes(side, tensor: str) -> bool:
    """Whether ``side`` turns a value computed from ``tensor`` into Python."""
    for x in ir.walk_expression(side):
        if not isinstance(x, ir.Call):
            continue
        if isinstance(x.func, ir.Attribute) and x.func.attr in _ESCAPE_METHODS:
            inner = x.func.value
        elif expr_text(x.func) in _ESCAPE_BUILTINS and len(x.args) == 1:
            inner = x.args[0].value
        else:
            continue
        if any(expr_text(y) == tensor for y in ir.walk_expression(inner)):
            return True
    return False
