"""Python truth tests made tensor operations: `a and b` -> `torch.logical_and(a, b)`,
`not a` -> `torch.logical_not(a)`, for the branch and loop rewrites that move a test
into the graph (`torch.where`, `torch.cond`, `while_loop`)."""

from __future__ import annotations

import libcst as cst

from analyzer.fixes.source import FixSource
from analyzer.fixes.where import side_effect_free


def tensor_predicate(src: FixSource, test: cst.BaseExpression, torch: str) -> cst.BaseExpression | str:
    """``test`` with Python ``and`` / ``or`` / ``not`` made tensor operations (``torch``:
    the name of the torch module there)."""
    if isinstance(test, cst.BooleanOperation):
        left, right = tensor_predicate(src, test.left, torch), tensor_predicate(src, test.right, torch)
        for side in (left, right):
            if isinstance(side, str):
                return side
        if not (side_effect_free(test.left, tensor_methods=True, torch=torch)
                and side_effect_free(test.right, tensor_methods=True, torch=torch)):
            return (f"`{src.code_of(test)}`: the operands of `{'and' if isinstance(test.operator, cst.And) else 'or'}` "
                    "may have side effects, and the rewrite evaluates both")
        function = "logical_and" if isinstance(test.operator, cst.And) else "logical_or"
        return _torch_call(torch, function, left, right, test)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = tensor_predicate(src, test.expression, torch)
        if isinstance(inner, str):
            return inner
        return _torch_call(torch, "logical_not", inner, None, test)
    return test


def _torch_call(torch: str, function: str, a, b, original) -> cst.Call:
    args = [cst.Arg(_bare(a))] + ([cst.Arg(_bare(b))] if b is not None else [])
    for i in range(len(args) - 1):
        args[i] = args[i].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    call = cst.Call(func=cst.Attribute(cst.Name(torch), cst.Name(function)), args=args)
    return call.with_changes(lpar=original.lpar, rpar=original.rpar)


def _bare(expr):
    """``expr`` without its own parentheses (it becomes a call argument)."""
    return expr.with_changes(lpar=[], rpar=[]) if hasattr(expr, "lpar") else expr
