"""The untrace IR: a closed set of statement and expression kinds with structured
control flow, every node carrying its source span.

Statements
    Assign(targets, value)           a = b = value; tuple/starred targets; walrus lifts here
    AugAssign(target, op, value)     a += value
    ExprStmt(value)
    If(test, body, orelse)           also `elif` (is_elif); `results` filled by annotate_regions
    Loop(kind, target, iter, test, body, orelse)
                                     kind "for": target/iter; kind "while": test;
                                     `carried` filled by annotate_regions
    Break, Continue, Return(value), Raise(exc), Assert(test, msg), Pass
    With(items, body)                items: (context expr, target or None)
    Try(body, handlers, orelse, finalbody)
    FunctionDef(name, params, body, decorators), ClassDef(name, bases, body, decorators)
    Import(module, names, level)     `import a.b as c` / `from .m import x as y`
    Global(names), Nonlocal(names), Delete(targets)
    Match(subject, cases)            each case: (pattern text, bound names, guard, body)
    Opaque(reason)                   anything the front end does not model

Expressions
    Name, Const, Attribute, Call(func, args: Arg), Subscript, Slice, Tuple, List, Set,
    Dict, BinOp, UnaryOp, Compare, BoolOp, IfExp, Lambda, Comprehension, Starred,
    NamedExpr, FormattedString, Opaque

Spans are 1-based lines and columns; ``end_column`` is exclusive. Statement spans cover
the statement *head* (``if x > 0``, ``for a in b``), which is what diagnostics point at.

This module defines the statements, `Module` and the walks over them; the expression
kinds are `ir_expressions`, spans `spans`. All are used from here (``ir.Name``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from analyzer.frontend.ir_expressions import (  # noqa: F401 - the IR's expression kinds, used as ir.Name, ...
    Arg,
    Attribute,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Comprehension,
    Const,
    Dict,
    Expr,
    FormattedString,
    Generator,
    IfExp,
    Lambda,
    List,
    Name,
    NamedExpr,
    OpaqueExpr,
    Param,
    Set,
    Slice,
    Starred,
    Subscript,
    Target,
    Tuple,
    UnaryOp,
)
from analyzer.frontend.spans import NO_SPAN, Span  # noqa: F401 - used as ir.Span

# --------------------------------------------------------------------------- statements


@dataclass(eq=False, slots=True)
class Assign:
    targets: list[Target]
    value: Expr
    span: Span = NO_SPAN
    annotation: Expr | None = None


@dataclass(eq=False, slots=True)
class AugAssign:
    target: Target
    op: str
    value: Expr
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class ExprStmt:
    value: Expr
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class If:
    test: Expr
    body: list["Stmt"]
    orelse: list["Stmt"]
    span: Span = NO_SPAN
    is_elif: bool = False
    results: tuple[str, ...] = ()  # assigned in either branch and live after (annotate_regions)
    synthetic: bool = False  # a guard made by structure_control_flow, not in the source


@dataclass(eq=False, slots=True)
class Loop:
    kind: str  # "for" | "while"
    body: list["Stmt"]
    orelse: list["Stmt"]
    target: Target | None = None  # for
    iter: Expr | None = None  # for
    test: Expr | None = None  # while
    span: Span = NO_SPAN
    is_async: bool = False
    carried: tuple[str, ...] = ()  # assigned in body and live at header or after (annotate_regions)


@dataclass(eq=False, slots=True)
class Break:
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Continue:
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Return:
    value: Expr | None
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Raise:
    exc: Expr | None
    cause: Expr | None = None
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Assert:
    test: Expr
    msg: Expr | None
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Pass:
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class With:
    items: list[tuple[Expr, Target | None]]
    body: list["Stmt"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Handler:
    type: Expr | None
    name: str | None
    body: list["Stmt"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Try:
    body: list["Stmt"]
    handlers: list[Handler]
    orelse: list["Stmt"]
    finalbody: list["Stmt"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class FunctionDef:
    name: str
    params: list[Param]
    body: list["Stmt"]
    decorators: list[Expr] = field(default_factory=list)
    returns: Expr | None = None
    span: Span = NO_SPAN
    is_async: bool = False
    qualname: str = ""  # Class.method for methods, outer.<locals>.f for nested defs


class DeferredFunctionDef(FunctionDef):
    """A top-level function whose body is built when first read (`frontend.deferred_bodies`):
    the same IR as a `FunctionDef` parsed with its file, its header built with the file."""

    __slots__ = ("_load", "_text")

    @classmethod
    def of(cls, load, text: str, **fields) -> "DeferredFunctionDef":
        fn = cls(body=[], **fields)
        fn._load = load  # () -> list[Stmt]
        fn._text = text  # its lines in the file
        return fn

    @property
    def body(self) -> list["Stmt"]:
        load = getattr(self, "_load", None)
        if load is not None:
            self._load = None
            FunctionDef.body.__set__(self, load())
        return FunctionDef.body.__get__(self)

    @body.setter
    def body(self, value: list["Stmt"]) -> None:
        FunctionDef.body.__set__(self, value)

    @property
    def body_read(self) -> bool:
        """Whether the body has been built."""
        return getattr(self, "_load", None) is None

    def may_mention(self, words) -> bool:
        """False when the body is not built and the function's text holds none of
        ``words``: a walk looking for a name (a call of `Cls`, an `import`) skips it."""
        return self.body_read or any(word in self._text for word in words)


def may_mention(stmt, words) -> bool:
    """Whether a walk looking for ``words`` must read ``stmt``'s body (see
    `DeferredFunctionDef.may_mention`; True for any other statement)."""
    return not isinstance(stmt, DeferredFunctionDef) or stmt.may_mention(words)


@dataclass(eq=False, slots=True)
class ClassDef:
    name: str
    bases: list[Expr]
    body: list["Stmt"]
    decorators: list[Expr] = field(default_factory=list)
    span: Span = NO_SPAN
    _methods: dict | None = field(default=None, repr=False)

    def methods(self) -> dict[str, FunctionDef]:
        """The class body's functions by name (built on first use: the analyses look a
        method up for every call through `self`)."""
        if self._methods is None:
            self._methods = {s.name: s for s in self.body if isinstance(s, FunctionDef)}
        return self._methods


@dataclass(eq=False, slots=True)
class Import:
    module: str | None  # `from X import ...`: X (without the leading dots); `import X`: None
    names: list[tuple[str, str | None]]  # (name, asname); "*" for star imports
    level: int = 0  # number of leading dots
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Global:
    names: list[str]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Nonlocal:
    names: list[str]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Delete:
    targets: list[Target]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class MatchCase:
    pattern: str  # source text of the pattern
    bindings: list[str]  # names the pattern binds
    guard: Expr | None
    body: list["Stmt"]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Match:
    subject: Expr
    cases: list[MatchCase]
    span: Span = NO_SPAN


@dataclass(eq=False, slots=True)
class Opaque:
    """A statement the front end does not model; `reads` are the expressions it still uses."""

    reason: str
    reads: list[Expr] = field(default_factory=list)
    span: Span = NO_SPAN


Stmt = Union[
    Assign, AugAssign, ExprStmt, If, Loop, Break, Continue, Return, Raise, Assert, Pass, With,
    Try, FunctionDef, ClassDef, Import, Global, Nonlocal, Delete, Match, Opaque,
]


@dataclass(eq=False, slots=True)
class Module:
    path: str
    body: list[Stmt]
    source: str  # the decoded text
    # The libcst tree and its positions (`frontend.positions.DeferredPositions`): what
    # fixes edit. None for a module not built by `parse_module`.
    syntax: Any = None
    _defs: dict | None = None  # top-level classes and functions by name, built on first use
    _lines: list[str] | None = None

    @property
    def source_lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.source.splitlines()
        return self._lines

    def _index(self) -> dict:
        if self._defs is None:
            self._defs = {"class": {}, "function": {}}
            for s in self.body:
                if isinstance(s, ClassDef):
                    self._defs["class"][s.name] = s
                elif isinstance(s, FunctionDef):
                    self._defs["function"][s.name] = s
        return self._defs

    def classes(self) -> dict[str, ClassDef]:
        return self._index()["class"]

    def functions(self) -> dict[str, FunctionDef]:
        return self._index()["function"]

    def text(self, span: Span) -> str:
        """Source text of a span (joined with spaces when it covers several lines)."""
        text = span.source_text()
        if text is not None:
            return text
        if span.line <= 0 or span.line > len(self.source_lines):
            return ""
        if span.line == span.end_line:
            return self.source_lines[span.line - 1][span.column - 1 : span.end_column - 1]
        parts = [self.source_lines[span.line - 1][span.column - 1 :].strip()]
        parts += [self.source_lines[i].strip() for i in range(span.line, min(span.end_line - 1, len(self.source_lines)))]
        if span.end_line <= len(self.source_lines):
            parts.append(self.source_lines[span.end_line - 1][: span.end_column - 1].strip())
        return " ".join(p for p in parts if p)


STATEMENT_KINDS = Stmt.__args__
EXPRESSION_KINDS = Expr.__args__


def child_blocks(stmt: Stmt) -> list[list[Stmt]]:
    """The nested statement lists of a compound statement, in source order."""
    if isinstance(stmt, If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, Loop):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, With):
        return [stmt.body]
    if isinstance(stmt, Try):
        return [stmt.body, *[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody]
    if isinstance(stmt, Match):
        return [c.body for c in stmt.cases]
    return []


def walk_statements(body: list[Stmt], *, into_defs: bool = False, mentioning: tuple[str, ...] | None = None):
    """Every statement in `body`, depth first, in source order. With ``mentioning`` (and
    ``into_defs``), the walk looks for those words only: the deferred functions whose
    text has none of them are not read (`DeferredFunctionDef.may_mention`). A stack, not
    nested generators: each statement yielded through k nested generators costs k, and an
    `elif` chain nests one level per `elif`."""
    stack = [iter(body)]
    while stack:
        stmt = next(stack[-1], None)
        if stmt is None:
            stack.pop()
            continue
        yield stmt
        if isinstance(stmt, (FunctionDef, ClassDef)):
            if into_defs and (mentioning is None or may_mention(stmt, mentioning)):
                stack.append(iter(stmt.body))
            continue
        blocks = child_blocks(stmt)
        if blocks:
            stack.append(s for block in blocks for s in block)


def child_expressions(node) -> list:
    """Direct sub-expressions of an expression or the expressions a statement evaluates
    (for compound statements: only the head, not the bodies)."""
    if isinstance(node, (Name, Const)):
        return []
    if isinstance(node, Attribute):
        return [node.value]
    if isinstance(node, Call):
        return [node.func, *[a.value for a in node.args]]
    if isinstance(node, Subscript):
        return [node.value, node.index]
    if isinstance(node, Slice):
        return [e for e in (node.lower, node.upper, node.step) if e is not None]
    if isinstance(node, (Tuple, List, Set)):
        return list(node.elts)
    if isinstance(node, Dict):
        return [e for kv in node.items for e in kv if e is not None]
    if isinstance(node, BinOp):
        return [node.left, node.right]
    if isinstance(node, UnaryOp):
        return [node.operand]
    if isinstance(node, Compare):
        return [node.left, *node.comparators]
    if isinstance(node, BoolOp):
        return list(node.values)
    if isinstance(node, IfExp):
        return [node.test, node.body, node.orelse]
    if isinstance(node, Lambda):
        return [node.body, *[p.default for p in node.params if p.default is not None]]
    if isinstance(node, Comprehension):
        out = []
        for g in node.generators:
            out += [g.target, g.iter, *g.ifs]
        return out + [node.elt] + ([node.key] if node.key is not None else [])
    if isinstance(node, (Starred,)):
        return [node.value]
    if isinstance(node, NamedExpr):
        return [node.target, node.value]
    if isinstance(node, FormattedString):
        return list(node.values)
    if isinstance(node, OpaqueExpr):
        return list(node.children)
    # statements
    if isinstance(node, Assign):
        return [*node.targets, node.value]
    if isinstance(node, AugAssign):
        return [node.target, node.value]
    if isinstance(node, ExprStmt):
        return [node.value]
    if isinstance(node, If):
        return [node.test]
    if isinstance(node, Loop):
        return [e for e in (node.target, node.iter, node.test) if e is not None]
    if isinstance(node, Return):
        return [node.value] if node.value is not None else []
    if isinstance(node, Raise):
        return [e for e in (node.exc, node.cause) if e is not None]
    if isinstance(node, Assert):
        return [e for e in (node.test, node.msg) if e is not None]
    if isinstance(node, With):
        return [e for item in node.items for e in item if e is not None]
    if isinstance(node, Delete):
        return list(node.targets)
    if isinstance(node, Match):
        return [node.subject, *[c.guard for c in node.cases if c.guard is not None]]
    if isinstance(node, Opaque):
        return list(node.reads)
    if isinstance(node, (FunctionDef,)):
        return [*node.decorators, *[p.default for p in node.params if p.default is not None]]
    if isinstance(node, ClassDef):
        return [*node.decorators, *node.bases]
    return []


def walk_expression(expr):
    """`expr` and all its sub-expressions, not descending into lambdas' bodies' scopes
    differently: callers that care about scoping handle Lambda/Comprehension themselves."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(child_expressions(node)))
