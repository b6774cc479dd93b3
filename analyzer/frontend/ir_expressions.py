"""The expression kinds of the untrace IR (see `analyzer.frontend.ir`, which is where
they are used from: ``ir.Name``, ``ir.Call``, ...)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from analyzer.frontend.spans import NO_SPAN, Span

# --------------------------------------------------------------------------- expressions


@dataclass(eq=False, slots=True)
class Name:
    id: str
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Const:
    value: Any  # int, float, complex, str, bytes, bool, None, Ellipsis
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Attribute:
    value: "Expr"
    attr: str
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Arg:
    value: "Expr"
    keyword: str | None = None
    star: str = ""  # "" | "*" | "**"


@dataclass(eq=False, slots=True)
class Call:
    func: "Expr"
    args: list[Arg]
    span: Span = NO_SPAN

    @property
    def positional(self) -> list["Expr"]:
        return [a.value for a in self.args if a.keyword is None and not a.star]

    def keyword(self, name: str) -> "Expr | None":
        for a in self.args:
            if a.keyword == name:
                return a.value
        return None


@dataclass(eq=False, slots=True)
class Subscript:
    value: "Expr"
    index: "Expr"  # a Tuple for x[a, b]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Slice:
    lower: "Expr | None"
    upper: "Expr | None"
    step: "Expr | None"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Tuple:
    elts: list["Expr"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class List:
    elts: list["Expr"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Set:
    elts: list["Expr"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Dict:
    items: list[tuple["Expr | None", "Expr"]]  # key None: **mapping
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class BinOp:
    op: str  # "+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"
    left: "Expr"
    right: "Expr"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class UnaryOp:
    op: str  # "-", "+", "~", "not"
    operand: "Expr"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Compare:
    left: "Expr"
    ops: list[str]  # "<", "<=", "==", "!=", ">", ">=", "is", "is not", "in", "not in"
    comparators: list["Expr"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class BoolOp:
    op: str  # "and" | "or"
    values: list["Expr"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class IfExp:
    test: "Expr"
    body: "Expr"
    orelse: "Expr"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Param:
    name: str
    kind: str = "positional"  # "positional" | "posonly" | "vararg" | "kwonly" | "kwarg"
    default: "Expr | None" = None
    annotation: "Expr | None" = None
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Lambda:
    params: list[Param]
    body: "Expr"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Generator:
    target: "Target"
    iter: "Expr"
    ifs: list["Expr"]
    is_async: bool = False


@dataclass(eq=False, slots=True)
class Comprehension:
    kind: str  # "list" | "set" | "dict" | "generator"
    elt: "Expr"  # the value (for dicts: the value, with `key` the key)
    generators: list[Generator]
    key: "Expr | None" = None
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Starred:
    value: "Expr"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class NamedExpr:
    target: Name
    value: "Expr"
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class FormattedString:
    values: list["Expr"]  # the interpolated expressions
    span: Span = NO_SPAN
    # The string as Python builds it: literal text, or (index into `values`, conversion
    # "r"/"s"/"a" or None, format spec). None when untrace cannot build it (a format spec
    # with expressions in it, an f-string inside a concatenation).
    template: tuple | None = None


@dataclass(eq=False, slots=True)
class OpaqueExpr:
    reason: str
    children: list["Expr"] = field(default_factory=list)  # sub-expressions still read
    span: Span = NO_SPAN


Expr = Union[
    Name, Const, Attribute, Call, Subscript, Slice, Tuple, List, Set, Dict, BinOp, UnaryOp,
    Compare, BoolOp, IfExp, Lambda, Comprehension, Starred, NamedExpr, FormattedString,
    OpaqueExpr,
]
# Assignment targets are the subset Name | Attribute | Subscript | Tuple | List | Starred.
Target = Expr
