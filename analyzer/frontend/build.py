"""libcst -> IR.

`parse_module(source, path)` parses with libcst (the whole Python 3.0-3.13 grammar,
bytes with a PEP 263 coding cookie included) and converts the tree into the IR of
`analyzer.frontend.ir`. Anything without an IR form becomes an explicit `Opaque` /
`OpaqueExpr` node; with `strict=True` those raise `Unmodelled` instead, so tests find
gaps before users do.

Walrus expressions stay in expressions (`NamedExpr`); the analyses treat them as
assignments at the point they are evaluated.
"""

from __future__ import annotations

import re
import sys

import libcst as cst
from libcst._nodes.base import CSTNode

from analyzer.frontend import ir, nesting
from analyzer.frontend.build_expressions import ExpressionBuilder
from analyzer.frontend.deferred_bodies import find_deferrable
from analyzer.frontend.positions import DeferredPositions, StatementPositions, cpython_parse, member_lines, statement_lines


class ParseError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class Unmodelled(Exception):
    """Raised in strict mode for a construct that would become Opaque."""


_AUGOPS = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*",
    cst.MatrixMultiplyAssign: "@", cst.DivideAssign: "/", cst.FloorDivideAssign: "//",
    cst.ModuloAssign: "%", cst.PowerAssign: "**", cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>", cst.BitAndAssign: "&", cst.BitOrAssign: "|", cst.BitXorAssign: "^",
}


def parse_module(source: str | bytes, path: str = "<string>", *, strict: bool = False,
                 defer_functions: bool = False, defer_methods: bool = False) -> ir.Module:
    """Parse and convert one file. Raises `ParseError` (never anything else) on bad input.

    With ``defer_functions`` the bodies of the top-level functions that can be are
    parsed when first read (`frontend.deferred_bodies`): what a check of a whole tree
    does, as most of them are never read. With ``defer_methods`` too, those of the
    methods of its top-level classes: what a file read as another's dependency needs."""
    if isinstance(source, bytes) and b"\x00" in source:
        raise ParseError("source contains a NUL byte")
    if isinstance(source, str) and "\x00" in source:
        raise ParseError("source contains a NUL byte")
    text = _decoded(source)
    screened = screen(text) if text is not None else nesting.Screened(None)
    if defer_functions and not strict and text is not None:
        module = _parse_deferring(text, path, screened, defer_methods)
        if module is not None:
            return module
    return _parse(source, path, strict, screened, decodes=text is not None)


def screen(text: str) -> nesting.Screened:
    """`nesting.screen`: raises the ParseError of a text too deep for libcst and for
    untrace's passes, which must never see it (libcst's native parser crashes on it).
    Every text given to libcst is screened first: a file here, a function's lines
    (`function_source`); a deferred body is lines of a file screened whole."""
    screened = nesting.screen(text)
    if screened.refusal is not None:
        refusal = screened.refusal
        raise ParseError(refusal.message, refusal.line, refusal.column)
    return screened


def _decoded(source: str | bytes) -> str | None:
    """The text of ``source`` as CPython decodes it; None when it does not decode (libcst
    then refuses it before it parses anything, and `_parse` says why)."""
    if isinstance(source, str):
        return source
    try:
        return source.decode(_declared_encoding(source)).removeprefix("\ufeff")
    except (LookupError, UnicodeDecodeError, SyntaxError):
        return None


def _parse_deferring(text: str, path: str, screened: nesting.Screened, methods: bool = False) -> ir.Module | None:
    """`parse_module` with deferred function bodies; None when there is nothing to defer
    or the reduced text does not give back every function (the caller parses it whole)."""
    deferral = find_deferrable(text, methods)
    if deferral is None:
        return None
    try:
        tree = _parse_cst(deferral.reduced)
    except Exception:  # noqa: BLE001 - the whole parse reports the file's error, as it always has
        return None
    stubs = deferral.stubs(tree)
    if stubs is None:
        return None
    return _module(tree, text, path, False, screened, stubs)


_VALIDATE = CSTNode.__post_init__


def _unchecked(self) -> None:
    pass


def _parse_cst(source: str | bytes) -> cst.Module:
    """libcst's parse without the validation each node's constructor runs: its parser
    builds valid trees (as libcst's own note on `CSTNode.__post_init__` says), and the
    validation is an eighth of the parse (timm: 8.1 s instead of 9.3 s). Nodes another
    thread makes meanwhile are not validated either; the fixes, which make nodes, check
    their edits by parsing them again."""
    CSTNode.__post_init__ = _unchecked
    try:
        return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = _VALIDATE


def _declared_encoding(source: bytes) -> str:
    """The encoding of a file's bytes as CPython reads them: a PEP 263 cookie, a UTF-8
    BOM, else UTF-8 (raises SyntaxError for an unknown cookie)."""
    import io
    import tokenize

    return tokenize.detect_encoding(io.BytesIO(source).readline)[0]


def _check_decodes(source: bytes) -> None:
    """Raise UnicodeDecodeError at the first byte CPython would refuse: it decodes the
    whole file, comments included, in its declared encoding, where libcst and
    ``compile`` of bytes let a bad byte in a comment through. A first or second line that
    does not decode makes ``tokenize`` refuse the file as having "an invalid or missing
    encoding declaration": decoding it says where."""
    try:
        encoding = _declared_encoding(source)
    except SyntaxError:
        encoding = "utf-8"  # the bytes that made the declaration unreadable fail below
    source.decode(encoding)


def _parse(source: str | bytes, path: str, strict: bool, screened: nesting.Screened, *,
           decodes: bool) -> ir.Module:
    """``decodes``: `_decoded` read the whole text, so it need not be decoded again to
    find a bad byte."""
    try:
        if isinstance(source, bytes) and not decodes:
            _check_decodes(source)
        tree = _parse_cst(source)
    except cst.ParserSyntaxError as exc:
        # CPython's position and words when it refuses the file too: libcst's tokenizer
        # errors (tabs, dedents) have no position, and its parser's often points past
        # the error (the next token it could not use)
        _, error = cpython_parse(source)
        if isinstance(error, SyntaxError) and error.lineno:
            raise ParseError(f"syntax error: {error.msg}", error.lineno, max(1, error.offset or 1)) from None
        where = re.search(r"error at (\d+):(\d+)", exc.message)
        line, column = (int(where.group(1)), int(where.group(2))) if where else (exc.raw_line, exc.raw_column + 1)
        line, column = max(1, line), max(1, column)
        raise ParseError(f"syntax error: {exc.message}", line, column) from None
    except UnicodeDecodeError as exc:
        line, column = _decode_position(exc)
        bad = exc.object[exc.start : exc.start + 1].hex() if isinstance(exc.object, bytes) else ""
        raise ParseError(f"cannot decode the file as {exc.encoding}: {exc.reason}" + (f" (0x{bad})" if bad else ""), line, column) from None
    except LookupError as exc:
        raise ParseError(f"cannot decode the file: {exc}") from None
    except RecursionError:
        raise ParseError("nesting too deep to parse") from None
    except Exception as exc:  # libcst raises assorted errors on exotic input
        raise ParseError(f"cannot parse: {type(exc).__name__}: {exc}") from None
    return _module(tree, _text(source, tree), path, strict, screened)


def _module(tree: cst.Module, text: str, path: str, strict: bool, screened: nesting.Screened,
            stubs: dict | None = None) -> ir.Module:
    """The IR of ``tree``, the parse of ``text`` (or, with ``stubs``, of its reduced text:
    statement index, or (class index, member index), -> the `deferred_bodies.Region`
    whose marker it holds). ``screened``:
    the screen the text passed, with CPython's parse when the screen asked for it."""
    # The spans ask CPython for the line of each statement when a first span is resolved
    # (a fifth of the files of a tree, those with findings), unless the screen has
    # CPython's parse already.
    lines: list[int] | None | bool = False
    members = None
    if screened.cpython is not False:
        lines = statement_lines(text, tree, screened.cpython)
        members = member_lines(tree, screened.cpython) if lines is not None else None
    syntax = DeferredPositions(tree, text, lines, members)
    builder = _Builder(syntax, strict)
    builder.stubs = stubs or {}
    body: list[ir.Stmt] = []
    try:
        with nesting.stack_room():  # the text is screened: at most nesting.MAX_DEPTH deep
            for index, stmt in enumerate(tree.body):
                # Spans resolve per top-level statement: see DeferredPositions.
                builder.positions = syntax.statement(index)
                region = stubs.get(index) if stubs else None
                if region is None:
                    body.extend(builder.block([stmt], scope=""))
                    continue
                fn = builder.function(stmt, "", _body_loader(region, syntax, index))
                syntax.deferred[index] = (fn, region.first + 1, region.end)
                syntax.stub_nodes[id(stmt)] = (index, fn)
                body.append(fn)
    except RecursionError:
        raise ParseError("nesting too deep to analyse") from None
    return ir.Module(path=path, body=body, source=text, syntax=syntax)


def _body_loader(region, syntax: DeferredPositions, index):
    """What builds a deferred function's body: its own lines parsed, its spans resolved
    against them (shifted to the file's lines), the positions kept for the fixes
    (``index``: the function's top-level statement index, or a method's (class index,
    member index)). The lines are a part of a file that was screened whole (`screen`),
    so no deeper."""

    def load(qualname: str) -> list[ir.Stmt]:
        source = region.source()
        try:
            tree = _parse_cst(source)
        except Exception as exc:  # noqa: BLE001 - CPython parsed these lines; libcst may still refuse
            return [ir.Opaque(f"the body does not parse on its own: {type(exc).__name__}")]
        node = region.def_node(tree)
        if node is None:
            return [ir.Opaque("the body does not parse on its own")]
        own = DeferredPositions(tree, source, [region.statement_line()])
        syntax.expanded[index] = own
        builder = _Builder(own.statement(0), strict=False)
        # Read from deep in an analysis: the build gets the room it has in a parse, the
        # frames a build of nesting.MAX_DEPTH takes (at most 3 a level) above these.
        with nesting.stack_room(_depth() + _BUILD_FRAMES):
            try:
                return builder.block(node.body, qualname + ".<locals>")
            except RecursionError:
                return [ir.Opaque("nesting too deep to analyse")]

    load.text = region.text
    return load


_BUILD_FRAMES = 3 * nesting.MAX_DEPTH + 100


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _decode_position(exc: UnicodeDecodeError) -> tuple[int, int]:
    """The line and column (in characters) of the first byte that does not decode."""
    data = exc.object
    if not isinstance(data, (bytes, bytearray)):
        return 1, 1
    before = bytes(data[: exc.start])
    line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
    column = len(before[line_start:].decode(exc.encoding if exc.encoding else "utf-8", errors="replace")) + 1
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1, column


def _text(source: str | bytes, tree: cst.Module) -> str:
    """The decoded source: what libcst's code generation would print, without the pass."""
    if isinstance(source, str):
        return source
    try:
        return source.decode(tree.encoding).removeprefix("\ufeff")
    except (LookupError, UnicodeDecodeError):
        return tree.code


class _Builder(ExpressionBuilder):
    def __init__(self, positions, strict: bool):
        self.positions = positions
        self.strict = strict
        self.stubs: dict = {}  # (class index, member index) -> a deferred method's Region

    # ----------------------------------------------------------------- helpers

    def span(self, node: cst.CSTNode) -> ir.Span:
        return ir.Span.deferred(self.positions, node)

    def head(self, node: cst.CSTNode, last: cst.CSTNode) -> ir.Span:
        """From the start of `node` to the end of `last` (a statement's head)."""
        return ir.Span.deferred(self.positions, node, last)

    def opaque_stmt(self, node, reason, reads=()):
        if self.strict:
            raise Unmodelled(f"{reason} at line {self.span(node).line}")
        return ir.Opaque(reason, list(reads), self.span(node))

    def opaque_expr(self, node, reason, children=()):
        if self.strict:
            raise Unmodelled(f"{reason} at line {self.span(node).line}")
        return ir.OpaqueExpr(reason, list(children), self.span(node))

    # ----------------------------------------------------------------- statements

    def block(self, body, scope: str) -> list[ir.Stmt]:
        if isinstance(body, cst.SimpleStatementSuite):
            items = body.body
            return [s for item in items for s in self.small(item, scope)]
        if isinstance(body, cst.IndentedBlock):
            body = body.body
        out: list[ir.Stmt] = []
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for item in stmt.body:
                    out.extend(self.small(item, scope))
            else:
                out.extend(self.compound(stmt, scope))
        return out

    def _class_body(self, node: cst.ClassDef, scope: str) -> list[ir.Stmt]:
        """A class's body; each statement of a top-level class's with the resolver of its
        own positions (`positions.MemberPositions`)."""
        top = self.positions
        if not (isinstance(top, StatementPositions) and isinstance(node.body, cst.IndentedBlock)
                and top.file.tree.body[top.index] is node):
            return self.block(node.body, scope)
        out: list[ir.Stmt] = []
        try:
            for k, member in enumerate(node.body.body):
                self.positions = top.file.member(top.index, k)
                region = self.stubs.get((top.index, k))
                if region is None:
                    out.extend(self.block([member], scope))
                    continue
                fn = self.function(member, scope, _body_loader(region, top.file, (top.index, k)))
                top.file.stub_nodes[id(member)] = ((top.index, k), fn)
                out.append(fn)
        finally:
            self.positions = top
        return out

    def small(self, node, scope) -> list[ir.Stmt]:
        sp = self.span(node)
        if isinstance(node, cst.Assign):
            targets = [self.target(t.target) for t in node.targets]
            return [ir.Assign(targets, self.expr(node.value), sp)]
        if isinstance(node, cst.AnnAssign):
            if node.value is None:
                return [ir.Pass(sp)]  # a bare annotation binds nothing
            return [ir.Assign([self.target(node.target)], self.expr(node.value), sp, self.expr(node.annotation.annotation))]
        if isinstance(node, cst.AugAssign):
            return [ir.AugAssign(self.target(node.target), _AUGOPS[type(node.operator)], self.expr(node.value), sp)]
        if isinstance(node, cst.Expr):
            return [ir.ExprStmt(self.expr(node.value), sp)]
        if isinstance(node, cst.Return):
            return [ir.Return(self.expr(node.value) if node.value is not None else None, sp)]
        if isinstance(node, cst.Break):
            return [ir.Break(sp)]
        if isinstance(node, cst.Continue):
            return [ir.Continue(sp)]
        if isinstance(node, cst.Pass):
            return [ir.Pass(sp)]
        if isinstance(node, cst.Raise):
            return [ir.Raise(
                self.expr(node.exc) if node.exc is not None else None,
                self.expr(node.cause.item) if node.cause is not None else None,
                sp,
            )]
        if isinstance(node, cst.Assert):
            return [ir.Assert(self.expr(node.test), self.expr(node.msg) if node.msg is not None else None, sp)]
        if isinstance(node, cst.Import):
            names = [(_dotted(a.name), _asname(a)) for a in node.names]
            return [ir.Import(None, names, 0, sp)]
        if isinstance(node, cst.ImportFrom):
            module = _dotted(node.module) if node.module is not None else None
            if isinstance(node.names, cst.ImportStar):
                names = [("*", None)]
            else:
                names = [(_dotted(a.name), _asname(a)) for a in node.names]
            return [ir.Import(module or "", names, len(node.relative), sp)]
        if isinstance(node, cst.Global):
            return [ir.Global([n.name.value for n in node.names], sp)]
        if isinstance(node, cst.Nonlocal):
            return [ir.Nonlocal([n.name.value for n in node.names], sp)]
        if isinstance(node, cst.Del):
            t = node.target
            targets = [self.target(e.value) for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [self.target(t)]
            return [ir.Delete(targets, sp)]
        if isinstance(node, cst.TypeAlias):
            return [ir.Pass(sp)]
        return [self.opaque_stmt(node, f"statement {type(node).__name__}")]

    def compound(self, node, scope) -> list[ir.Stmt]:
        if isinstance(node, cst.If):
            return [self.if_(node, scope, is_elif=False)]
        if isinstance(node, cst.For):
            return [ir.Loop(
                kind="for",
                target=self.target(node.target),
                iter=self.expr(node.iter),
                body=self.block(node.body, scope),
                orelse=self.block(node.orelse.body, scope) if node.orelse else [],
                span=self.head(node, node.iter),
                is_async=node.asynchronous is not None,
            )]
        if isinstance(node, cst.While):
            return [ir.Loop(
                kind="while",
                test=self.expr(node.test),
                body=self.block(node.body, scope),
                orelse=self.block(node.orelse.body, scope) if node.orelse else [],
                span=self.head(node, node.test),
            )]
        if isinstance(node, cst.With):
            items = [(self.expr(i.item), self.target(i.asname.name) if i.asname else None) for i in node.items]
            return [ir.With(items, self.block(node.body, scope), self.head(node, node.items[-1]))]
        if isinstance(node, (cst.Try, cst.TryStar)):
            handlers = [
                ir.Handler(
                    self.expr(h.type) if h.type is not None else None,
                    h.name.name.value if h.name is not None and isinstance(h.name.name, cst.Name) else None,
                    self.block(h.body, scope),
                    self.span(h),
                )
                for h in node.handlers
            ]
            return [ir.Try(
                self.block(node.body, scope),
                handlers,
                self.block(node.orelse.body, scope) if node.orelse else [],
                self.block(node.finalbody.body, scope) if node.finalbody else [],
                self.span(node),
            )]
        if isinstance(node, cst.FunctionDef):
            return [self.function(node, scope)]
        if isinstance(node, cst.ClassDef):
            qual = f"{scope}.{node.name.value}" if scope else node.name.value
            return [ir.ClassDef(
                name=node.name.value,
                bases=[self.expr(a.value) for a in node.bases],
                body=self._class_body(node, qual),
                decorators=[self.expr(d.decorator) for d in node.decorators],
                span=self.head(node, node.name),
            )]
        if isinstance(node, cst.Match):
            cases = []
            for case in node.cases:
                pattern_code = cst.Module([]).code_for_node(case.pattern)
                cases.append(ir.MatchCase(
                    pattern_code,
                    sorted(_pattern_bindings(case.pattern)),
                    self.expr(case.guard) if case.guard is not None else None,
                    self.block(case.body, scope),
                    self.span(case),
                ))
            return [ir.Match(self.expr(node.subject), cases, self.head(node, node.subject))]
        return [self.opaque_stmt(node, f"statement {type(node).__name__}")]

    def if_(self, node: cst.If, scope, is_elif: bool) -> ir.If:
        orelse: list[ir.Stmt] = []
        if isinstance(node.orelse, cst.If):
            orelse = [self.if_(node.orelse, scope, is_elif=True)]
        elif isinstance(node.orelse, cst.Else):
            orelse = self.block(node.orelse.body, scope)
        return ir.If(self.expr(node.test), self.block(node.body, scope), orelse, self.head(node, node.test), is_elif)

    def function(self, node: cst.FunctionDef, scope: str, load_body=None) -> ir.FunctionDef:
        """A `def`; with ``load_body`` (qualname -> body) its body is built when first read."""
        qual = f"{scope}.{node.name.value}" if scope else node.name.value
        header = dict(
            name=node.name.value,
            params=self.params(node.params),
            decorators=[self.expr(d.decorator) for d in node.decorators],
            returns=self.expr(node.returns.annotation) if node.returns is not None else None,
            span=self.head(node, node.name),
            is_async=node.asynchronous is not None,
            qualname=qual,
        )
        if load_body is not None:
            return ir.DeferredFunctionDef.of(lambda: load_body(qual), load_body.text, **header)
        return ir.FunctionDef(body=self.block(node.body, qual + ".<locals>"), **header)

    def params(self, p: cst.Parameters) -> list[ir.Param]:
        out = []

        def one(param: cst.Param, kind: str):
            out.append(ir.Param(
                name=param.name.value,
                kind=kind,
                default=self.expr(param.default) if param.default is not None else None,
                annotation=self.expr(param.annotation.annotation) if param.annotation is not None else None,
                span=self.span(param),
            ))

        for param in p.posonly_params:
            one(param, "posonly")
        for param in p.params:
            one(param, "positional")
        if isinstance(p.star_arg, cst.Param):
            one(p.star_arg, "vararg")
        for param in p.kwonly_params:
            one(param, "kwonly")
        if p.star_kwarg is not None:
            one(p.star_kwarg, "kwarg")
        return out

    # ----------------------------------------------------------------- targets

    def target(self, node) -> ir.Expr:
        if isinstance(node, (cst.Tuple, cst.List)):
            elts = [self.target(e.value) if not isinstance(e, cst.StarredElement)
                    else ir.Starred(self.target(e.value), self.span(e)) for e in node.elements]
            cls = ir.Tuple if isinstance(node, cst.Tuple) else ir.List
            return cls(elts, self.span(node))
        return self.expr(node)


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return ""


def _asname(alias) -> str | None:
    if alias.asname is None:
        return None
    name = alias.asname.name
    return name.value if isinstance(name, cst.Name) else None


def _pattern_bindings(pattern) -> set[str]:
    names: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def visit_MatchAs(self, node):
            if node.name is not None:
                names.add(node.name.value)

        def visit_MatchStar(self, node):
            if node.name is not None:
                names.add(node.name.value)

        def visit_MatchMapping(self, node):
            if node.rest is not None:
                names.add(node.rest.value)

    pattern.visit(Visitor())
    return names
