"""The statements of a function body that an export of an eval-mode module on tensors
does not run, or may not, read from the syntax alone (training, scripting, quantized
and non-tensor branches)."""

from __future__ import annotations

from analyzer.frontend import expr_text, ir


def unexported_statements(body) -> set[int]:
    """ids of the statements an export of an eval-mode module on tensors does not run, or
    may not: `if self.training:` bodies, `if torch.jit.is_scripting():` bodies, bodies
    for non-tensors (`if not isinstance(x, torch.Tensor):`), quantized-only code
    (`if x.is_quantized:`), and the `else` of the negated forms. The ops they call are
    not reported as exported ops (their branch and escape facts still are)."""
    out: set[int] = set()
    for block in [body] + [b for s in ir.walk_statements(body) for b in ir.child_blocks(s)]:
        for i, stmt in enumerate(block):
            # `if not self.training: return x` -- what follows runs in training only.
            if isinstance(stmt, ir.If) and _true_in_export(stmt.test) and stmt.body \
                    and isinstance(stmt.body[-1], (ir.Return, ir.Raise)):
                out.update(id(s) for s in ir.walk_statements(block[i + 1:]))
                break
    for stmt in ir.walk_statements(body):
        if not isinstance(stmt, ir.If):
            continue
        test, negated = stmt.test, False
        if isinstance(test, ir.UnaryOp) and test.op == "not":
            test, negated = test.operand, True
        conjuncts = test.values if isinstance(test, ir.BoolOp) and test.op == "and" and not negated else [test]
        if any(_skipped_when_true(c) for c in conjuncts):
            out.update(id(s) for s in ir.walk_statements(stmt.orelse if negated else stmt.body))
        elif not negated and _is_tensor_check(test):
            out.update(id(s) for s in ir.walk_statements(stmt.orelse))
        elif negated and _is_tensor_check(test):
            out.update(id(s) for s in ir.walk_statements(stmt.body))
    return out


def _skipped_when_true(expr) -> bool:
    """A condition that is false when an eval-mode module is exported on float tensors,
    or whose value then is unknown (quantized inputs)."""
    if isinstance(expr, ir.Attribute):
        return (expr.attr == "training" and isinstance(expr.value, ir.Name) and expr.value.id == "self") \
            or expr.attr == "is_quantized"
    return isinstance(expr, ir.Call) and not expr.args and expr_text(expr.func) in (
        "torch.jit.is_scripting", "jit.is_scripting")


def _true_in_export(expr) -> bool:
    """`not self.training` / `not torch.jit.is_scripting()`, alone or or-ed with anything."""
    if isinstance(expr, ir.BoolOp) and expr.op == "or":
        return any(_true_in_export(v) for v in expr.values)
    return (isinstance(expr, ir.UnaryOp) and expr.op == "not" and _skipped_when_true(expr.operand)
            and not (isinstance(expr.operand, ir.Attribute) and expr.operand.attr == "is_quantized"))


def _is_tensor_check(expr) -> bool:
    """`isinstance(x, torch.Tensor)`."""
    return (isinstance(expr, ir.Call) and expr_text(expr.func) == "isinstance" and len(expr.args) == 2
            and expr_text(expr.args[1].value) in ("torch.Tensor", "Tensor"))
