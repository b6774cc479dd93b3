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


_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def item_comparison(test: cst.BaseExpression, types, torch: str) -> cst.BaseExpression | None:
    """``r.item() < c`` as ``r.double() < c``, a 0-d tensor with the same truth value, or
    None when ``test`` is not one comparison with a ``.item()`` of a tensor on one side.

    Why ``.double()`` and not ``r`` itself: ``.item()`` gives a Python float (a double)
    or int, which Python compares exactly with ``c``; a float32 tensor compared with a
    Python float rounds ``c`` to float32 first, a double tensor does not. Every float16,
    bfloat16, float32 and bool value, and every integer up to 2**53, is exact in double,
    and a Python float or a tensor ``c`` is compared in double too: the same answer."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, _ORDERING)):
        return None
    left, right = test.left, test.comparisons[0].comparator
    sides = [(side, other) for side, other in ((left, right), (right, left)) if _item_of_tensor(side, types, torch)]
    if len(sides) != 1:
        return None
    item, other = sides[0]
    if not side_effect_free(other, tensor_methods=True, torch=torch):
        return None
    double = item.with_changes(func=item.func.with_changes(attr=cst.Name("double")))
    if item is left:
        return test.with_changes(left=double)
    return test.with_changes(comparisons=[test.comparisons[0].with_changes(comparator=double)])


def _item_of_tensor(node, types, torch: str) -> bool:
    return (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "item" and tensor_expression(node.func.value, types, torch))


def tensor_expression(node, types, torch: str) -> bool:
    """True when ``node`` is a tensor by its form: a name typed a tensor, a ``torch.*``
    call (not a constructor of Python values), a pure Tensor method of a tensor, or
    arithmetic with a tensor operand."""
    from analyzer.analyses.kinds import torch_api as api
    from analyzer.fixes.cond import is_tensor

    if isinstance(node, cst.Name):
        return is_tensor(types.get(node.value, "unknown"))
    if isinstance(node, cst.BinaryOperation):
        return tensor_expression(node.left, types, torch) or tensor_expression(node.right, types, torch)
    if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
        return tensor_expression(node.expression, types, torch)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        func = node.func
        if isinstance(func.value, cst.Name) and func.value.value == torch:
            return func.attr.value not in ("is_tensor", "numel", "is_floating_point", "is_complex", "get_default_dtype")
        method = func.attr.value
        return (method in api.TENSOR_METHODS and method not in api.PYTHON_ESCAPE_METHODS
                and method not in api.NUMPY_ESCAPE_METHODS
                and method not in ("size", "dim", "numel", "nelement", "ndimension", "equal", "allclose", "tolist",
                                   "item")
                and tensor_expression(func.value, types, torch))
    return False
