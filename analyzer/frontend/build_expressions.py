"""libcst -> IR for expressions: names, literals (strings and f-strings included),
calls, subscripts, displays, operators, comparisons, lambdas and comprehensions.
Statements are `build`."""

from __future__ import annotations

import ast

import libcst as cst

from analyzer.frontend import ir

_BINOPS = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.MatrixMultiply: "@", cst.Divide: "/",
    cst.FloorDivide: "//", cst.Modulo: "%", cst.Power: "**", cst.LeftShift: "<<",
    cst.RightShift: ">>", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
}
_UNARY = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~", cst.Not: "not"}
_CMP = {
    cst.LessThan: "<", cst.LessThanEqual: "<=", cst.Equal: "==", cst.NotEqual: "!=",
    cst.GreaterThan: ">", cst.GreaterThanEqual: ">=", cst.Is: "is", cst.IsNot: "is not",
    cst.In: "in", cst.NotIn: "not in",
}


class ExpressionBuilder:
    """The expressions of `build._Builder` (a mixin over its state: positions, strictness)."""

    def expr(self, node) -> ir.Expr:
        sp = self.span(node)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return ir.Const({"True": True, "False": False, "None": None}[node.value], sp)
            return ir.Name(node.value, sp)
        if isinstance(node, cst.Integer):
            return ir.Const(_number(node, int), sp)
        if isinstance(node, cst.Float):
            return ir.Const(_number(node, float), sp)
        if isinstance(node, cst.Imaginary):
            return ir.Const(node.evaluated_value, sp)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            try:
                return ir.Const(_string_value(node), sp)
            except Exception:  # f-strings inside a concatenation, odd escapes
                return ir.FormattedString([], sp)
        if isinstance(node, cst.FormattedString):
            values = [self.expr(p.expression) for p in node.parts if isinstance(p, cst.FormattedStringExpression)]
            return ir.FormattedString(values, sp, _fstring_template(cst.Module([]).code_for_node(node), len(values)))
        if isinstance(node, cst.Ellipsis):
            return ir.Const(..., sp)
        if isinstance(node, cst.Attribute):
            return ir.Attribute(self.expr(node.value), node.attr.value, sp)
        if isinstance(node, cst.Call):
            args = []
            for a in node.args:
                star = a.star if a.star in ("*", "**") else ""
                args.append(ir.Arg(self.expr(a.value), a.keyword.value if a.keyword is not None else None, star))
            return ir.Call(self.expr(node.func), args, sp)
        if isinstance(node, cst.Subscript):
            elems = [self.subscript_element(e) for e in node.slice]
            index = elems[0] if len(elems) == 1 and node.slice[0].comma in (None, cst.MaybeSentinel.DEFAULT) else ir.Tuple(elems, sp)
            return ir.Subscript(self.expr(node.value), index, sp)
        if isinstance(node, cst.Tuple):
            return ir.Tuple([self.element(e) for e in node.elements], sp)
        if isinstance(node, cst.List):
            return ir.List([self.element(e) for e in node.elements], sp)
        if isinstance(node, cst.Set):
            return ir.Set([self.element(e) for e in node.elements], sp)
        if isinstance(node, cst.Dict):
            items = []
            for e in node.elements:
                if isinstance(e, cst.StarredDictElement):
                    items.append((None, self.expr(e.value)))
                else:
                    items.append((self.expr(e.key), self.expr(e.value)))
            return ir.Dict(items, sp)
        if isinstance(node, cst.BinaryOperation):
            return ir.BinOp(_BINOPS[type(node.operator)], self.expr(node.left), self.expr(node.right), sp)
        if isinstance(node, cst.UnaryOperation):
            return ir.UnaryOp(_UNARY[type(node.operator)], self.expr(node.expression), sp)
        if isinstance(node, cst.BooleanOperation):
            # Flatten a and b and c into one BoolOp, as Python's ast does. libcst nests it
            # as (a and b) and c: its left operands are walked, not recursed into.
            op = type(node.operator)
            rights = []
            while True:
                rights.append(node.right)
                if not (isinstance(node.left, cst.BooleanOperation) and type(node.left.operator) is op
                        and not _parenthesized(node.left)):
                    break
                node = node.left
            values = [self.expr(node.left)]
            for side in reversed(rights):
                sub = self.expr(side)
                if isinstance(sub, ir.BoolOp) and isinstance(side, cst.BooleanOperation) \
                        and type(side.operator) is op and not _parenthesized(side):
                    values.extend(sub.values)
                else:
                    values.append(sub)
            return ir.BoolOp("and" if op is cst.And else "or", values, sp)
        if isinstance(node, cst.Comparison):
            return ir.Compare(
                self.expr(node.left),
                [_CMP[type(c.operator)] for c in node.comparisons],
                [self.expr(c.comparator) for c in node.comparisons],
                sp,
            )
        if isinstance(node, cst.IfExp):
            return ir.IfExp(self.expr(node.test), self.expr(node.body), self.expr(node.orelse), sp)
        if isinstance(node, cst.Lambda):
            return ir.Lambda(self.params(node.params), self.expr(node.body), sp)
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            gens = []
            f = node.for_in
            while f is not None:
                gens.append(ir.Generator(
                    self.target(f.target), self.expr(f.iter), [self.expr(i.test) for i in f.ifs],
                    f.asynchronous is not None,
                ))
                f = f.inner_for_in
            if isinstance(node, cst.DictComp):
                return ir.Comprehension("dict", self.expr(node.value), gens, self.expr(node.key), sp)
            kind = {cst.ListComp: "list", cst.SetComp: "set", cst.GeneratorExp: "generator"}[type(node)]
            return ir.Comprehension(kind, self.expr(node.elt), gens, None, sp)
        if isinstance(node, cst.NamedExpr):
            return ir.NamedExpr(self.expr(node.target), self.expr(node.value), sp)
        if isinstance(node, cst.StarredElement):
            return ir.Starred(self.expr(node.value), sp)
        if isinstance(node, cst.Await):
            return self.opaque_expr(node, "await", [self.expr(node.expression)])
        if isinstance(node, cst.Yield):
            child = node.value
            children = []
            if isinstance(child, cst.From):
                children = [self.expr(child.item)]
            elif child is not None:
                children = [self.expr(child)]
            return self.opaque_expr(node, "yield", children)
        return self.opaque_expr(node, f"expression {type(node).__name__}")

    def element(self, e) -> ir.Expr:
        if isinstance(e, cst.StarredElement):
            return ir.Starred(self.expr(e.value), self.span(e))
        return self.expr(e.value)

    def subscript_element(self, e: cst.SubscriptElement) -> ir.Expr:
        s = e.slice
        if isinstance(s, cst.Index):
            value = self.expr(s.value)
            return ir.Starred(value, self.span(s)) if s.star else value
        if isinstance(s, cst.Slice):
            return ir.Slice(
                self.expr(s.lower) if s.lower is not None else None,
                self.expr(s.upper) if s.upper is not None else None,
                self.expr(s.step) if s.step is not None else None,
                self.span(s),
            )
        return self.opaque_expr(s, "subscript element")


def _number(node: cst.Integer | cst.Float, kind: type):
    """The value of a number literal. libcst's `evaluated_value` is a compile per literal
    (`ast.literal_eval`); `int(text, 0)` and `float` read every literal Python writes
    (`0x1F`, `1_000`, `1e-5`, `.5`) to the same value."""
    try:
        return int(node.value, 0) if kind is int else float(node.value.replace("_", ""))
    except ValueError:
        return node.evaluated_value


def _string_value(node: cst.SimpleString | cst.ConcatenatedString):
    """The literal's value. libcst evaluates it with `ast.literal_eval`, a compile per
    string, which costs more than the rest of the conversion on docstring-heavy files;
    a plain literal without escapes or carriage returns is just its text between the quotes."""
    text = node.value if isinstance(node, cst.SimpleString) else ""
    if text and text[0] in "'\"" and "\\" not in text and "\r" not in text:
        quotes = 3 if text[:3] in ('"""', "'''") and len(text) >= 6 else 1
        return text[quotes:-quotes]
    return node.evaluated_value


def _parenthesized(node) -> bool:
    return bool(getattr(node, "lpar", None))


_CONVERSIONS = {-1: None, ord("s"): "s", ord("r"): "r", ord("a"): "a"}


def _fstring_template(code: str, n_values: int) -> tuple | None:
    """How Python joins an f-string's parts (`ir.FormattedString.template`), read with
    Python's own parser so that escapes and `{{` come out as Python decodes them."""
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.JoinedStr):
        return None
    parts, index = [], 0
    for value in tree.values:
        if isinstance(value, ast.Constant):
            parts.append(value.value)
            continue
        spec = ""
        if value.format_spec is not None:
            if not all(isinstance(v, ast.Constant) for v in value.format_spec.values):
                return None
            spec = "".join(v.value for v in value.format_spec.values)
        parts.append((index, _CONVERSIONS.get(value.conversion), spec))
        index += 1
    return tuple(parts) if index == n_values else None
