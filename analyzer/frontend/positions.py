"""Source positions of libcst nodes, computed in one code-generation pass.

libcst's `PositionProvider` gives the same *syntactic* ranges but updates a
(line, column) pair for every token and builds a `CodeRange` per node, which made it
~75% of the time `untrace check` spent per file. Here tokens only advance a character
offset; lines and columns are looked up (bisect over line starts) for the few nodes the
IR keeps. Semantics match `PositionProvider`: a node's range is the one it records
with `record_syntactic_position` if it does, else its whitespace-inclusive range.
"""

from __future__ import annotations

import ast
import bisect

import libcst as cst
from libcst._nodes.internal import CodegenState

from analyzer.frontend.nesting import cpython_parse
from analyzer.lines import NEWLINE




class _OffsetState(CodegenState):
    __slots__ = ("offset", "ranges", "_stack")

    def __init__(self, module: cst.Module):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.ranges: dict[int, tuple[int, int]] = {}
        self._stack: list[int] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens and self.tokens[-1] == self.default_newline:
            self.offset -= len(self.tokens.pop())

    def before_codegen(self, node) -> None:
        self._stack.append(self.offset)

    def after_codegen(self, node) -> None:
        start = self._stack.pop()
        self.ranges.setdefault(id(node), (start, self.offset))

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Recording(self, node, start_node, end_node)


class _Recording:
    """`record_syntactic_position`'s context: a class, not a generator context manager,
    since code generation enters one for most nodes."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _OffsetState, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc) -> None:
        state = self.state
        start, end = self.start, state.offset
        if self.start_node is not None:
            start = state.ranges[id(self.start_node)][0]
        if self.end_node is not None:
            end = state.ranges[id(self.end_node)][1]
        state.ranges[id(self.node)] = (start, end)


class Positions:
    """`positions.get(node) -> (line, column0, end_line, end_column0)` or None.

    Of the whole module, or of one `statement` whose syntactic start is on `first_line`
    (its code alone is generated, and lines are shifted to the file's): a top-level one,
    or one of a top-level class's body, generated under that body's ``indent`` so that
    its columns are the file's."""

    def __init__(self, module: cst.Module, statement: cst.CSTNode | None = None, first_line: int = 1,
                 indent: str = ""):
        state = _OffsetState(module)
        if indent:
            state.increase_indent(indent)
        (module if statement is None else statement)._codegen(state)
        self._ranges = state.ranges
        self._code = code = "".join(state.tokens)
        self._line_starts = [0]
        self._line_starts.extend(m.end() for m in NEWLINE.finditer(code))
        self._shift = 0
        if statement is not None:
            self._shift = first_line - self._point(self._ranges[id(statement)][0])[0]

    def _point(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1 + self._shift, offset - self._line_starts[line]

    def get(self, node):
        r = self._ranges.get(id(node))
        if r is None:
            return None
        return (*self._point(r[0]), *self._point(r[1]))

    def code_of(self, node) -> str | None:
        """The code of ``node`` within its range (an expression's own parentheses are not
        in it), as generated; None for a node this code does not hold."""
        r = self._ranges.get(id(node))
        return self._code[r[0] : r[1]] if r is not None else None


def cpython_ast(source: str | bytes, filename: str = "<unknown>") -> ast.Module | None:
    """CPython's own parse of `source`, or None when it refuses it."""
    return cpython_parse(source, filename)[0]


def statement_lines(text: str, tree: cst.Module, parsed: ast.Module | None | bool = False) -> list[int] | None:
    """The line each top-level statement of `tree` starts on (its syntactic start: the
    `def`/`class` line of a decorated one), from CPython's parser, which is many times
    faster than generating the code before it; None when the two parsers disagree.
    ``parsed``: CPython's parse of ``text`` when the caller has it (None: it refused)."""
    if parsed is False:
        parsed = cpython_ast(text)
    if parsed is None:
        return None
    return _body_lines(tree.body, parsed.body)


def member_lines(tree: cst.Module, parsed: ast.Module | None) -> dict[int, list[int]]:
    """Top-level statement index -> the line each statement of its body starts on, for
    the top-level classes (whose methods get positions of their own: a finding in one
    method costs the code generation of that method, not of the whole class)."""
    if parsed is None:
        return {}
    out = {}
    classes = iter(s for s in parsed.body if isinstance(s, ast.ClassDef))
    for index, stmt in enumerate(tree.body):
        if isinstance(stmt, cst.ClassDef):
            found = next(classes, None)
            if found is None:
                return out
            if isinstance(stmt.body, cst.IndentedBlock):
                lines = _body_lines(stmt.body.body, found.body)
                if lines is not None:
                    out[index] = lines
    return out


def _body_lines(statements, parsed_body: list) -> list[int] | None:
    """The first line of each of libcst's ``statements``, from CPython's parse of the
    same block (a libcst line of several simple statements is several of CPython's)."""
    lines, i = [], 0
    for stmt in statements:
        if i >= len(parsed_body):
            return None
        lines.append(parsed_body[i].lineno)
        i += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    return lines if i == len(parsed_body) else None


# A text longer than this makes its statement's positions found (see `text_of`).
_LONG_TEXT = 160


class DeferredPositions:
    """One file's libcst tree, and its positions computed when first asked for: per
    top-level statement for `ir.Span.deferred` spans (`statement(i)`), so that a file
    with one finding pays for the code generation of one statement, or for the whole
    file (`positions()`). The tree costs no memory of its own: the spans that are not
    resolved refer to nearly all its nodes."""

    __slots__ = ("tree", "text", "_positions", "_lines", "_members", "_pieces", "deferred", "expanded", "stub_nodes")

    def __init__(self, tree: cst.Module, text: str, lines: list[int] | None | bool = False,
                 members: dict[int, list[int]] | None = None):
        self.tree = tree
        self.text = text
        self._positions: Positions | None = None
        self._lines: list[int] | None | bool = lines  # False: not computed yet
        self._members = members or {}  # `member_lines`, computed with the lines
        self._pieces: dict = {}  # statement index, or (class index, member index) -> Positions
        # Top-level functions whose bodies are parsed apart (frontend.deferred_bodies):
        # statement index -> (its ir.DeferredFunctionDef, its first and last lines), and
        # once its body is built, -> the DeferredPositions of its own tree.
        self.deferred: dict[int, tuple[object, int, int]] = {}
        self.expanded: dict = {}  # also (class index, member index) for a deferred method
        # id of a deferred function's or method's `def` in ``tree`` (its body a marker) ->
        # (its index in `expanded`, its ir.DeferredFunctionDef)
        self.stub_nodes: dict[int, tuple] = {}

    def statement_source(self, index: int) -> tuple[Positions, cst.CSTNode, cst.Module]:
        """The positions, the libcst node and the tree of top-level statement ``index``
        with its whole body: a deferred function's own parse (built if it was not)."""
        deferred = self.deferred.get(index)
        if deferred is not None:
            deferred[0].body  # noqa: B018 - builds it, which fills `expanded`
        own = self.expanded.get(index)
        if own is not None:
            return own.positions_of(0), own.tree.body[0], own.tree
        return self.positions_of(index), self.tree.body[index], self.tree

    def own_source(self, node) -> tuple[Positions, cst.CSTNode, cst.Module] | None:
        """For the `def` of a deferred function or method in ``tree`` (whose body is a
        marker), the positions, the `def` and the tree of its own parse, which its body's
        IR was built from (built if it was not); None for any other node."""
        stub = self.stub_nodes.get(id(node))
        if stub is None:
            return None
        key, fn = stub
        fn.body  # noqa: B018 - builds it, which fills `expanded`
        own = self.expanded.get(key)
        if own is None:
            return None
        top = own.tree.body[0]
        inner = top.body.body[0] if isinstance(key, tuple) else top
        return own.positions_of(0), inner, own.tree

    def positions(self) -> Positions:
        if self._positions is None:
            self._positions = Positions(self.tree)
        return self._positions

    def statement(self, index: int) -> "StatementPositions":
        return StatementPositions(self, index)

    def _statement_lines(self) -> list[int] | None:
        if self._lines is False:
            parsed = cpython_ast(self.text)
            self._lines = statement_lines(self.text, self.tree, parsed)
            self._members = member_lines(self.tree, parsed) if self._lines is not None else {}
        return self._lines

    def member(self, index: int, k: int) -> "MemberPositions":
        return MemberPositions(self, index, k)

    def member_positions(self, index: int, k: int) -> Positions:
        """Positions that know the nodes of statement ``k`` of the body of the top-level
        class at ``index`` (those of the whole class when they were found already, or
        when the member's line is not known)."""
        whole = self._positions if self._positions is not None else self._pieces.get(index)
        if whole is not None:
            return whole
        lines = self._members.get(index) if self._statement_lines() is not None else None
        if lines is None:
            return self.positions_of(index)
        piece = self._pieces.get((index, k))
        if piece is None:
            body = self.tree.body[index].body
            indent = body.indent if body.indent is not None else self.tree.default_indent
            piece = self._pieces[(index, k)] = Positions(self.tree, body.body[k], lines[k], indent)
        return piece

    def positions_of(self, index: int) -> Positions:
        """Positions that know the nodes of top-level statement `index`."""
        if self._positions is not None:
            return self._positions
        lines = self._statement_lines()
        if lines is None:
            return self.positions()
        piece = self._pieces.get(index)
        if piece is None:
            piece = self._pieces[index] = Positions(self.tree, self.tree.body[index], lines[index])
        return piece

    def statement_at(self, line: int) -> int | None:
        """The index of the top-level statement holding `line`, if the lines are known."""
        for index, (_, first, last) in self.deferred.items():
            if first <= line <= last:
                return index
        lines = self._statement_lines()
        if not lines or line < lines[0]:
            return None
        return bisect.bisect_right(lines, line) - 1

    def text_of(self, node, index: int | None = None, member: int | None = None) -> str | None:
        """What `ir.Module.text` gives for an expression's span, from the expression's
        own code: a finding's text without positions. Its own parentheses are not in its
        span; lines are stripped and joined with spaces. ``index``: the top-level
        statement that holds ``node``.

        Generating an expression's code costs its size, and the texts asked for are often
        of nested expressions (each op of `x.relu().relu()...` has the chain before it
        as its text): once one text of a statement is long, the statement's positions
        are found (one code generation of it), and its texts are cut from that code, so
        that the texts cost the length of their text, not the size of their trees again."""
        if not isinstance(node, cst.BaseExpression) or not hasattr(node, "lpar"):
            return None
        if getattr(node, "comma", cst.MaybeSentinel.DEFAULT) is not cst.MaybeSentinel.DEFAULT:
            return None  # `*rest,`: the comma is in its code, not in its span
        dotted = dotted_name(node, exact=True)
        if dotted is not None:
            return dotted
        found = self._positions if self._positions is not None else self._pieces.get(index)
        if found is None and member is not None:
            found = self._pieces.get((index, member))
        code = found.code_of(node) if found is not None else None
        if code is None:
            code = self.tree.code_for_node(node)
            if node.lpar or node.rpar:
                lead = sum(len(self.tree.code_for_node(p)) for p in node.lpar)
                trail = sum(len(self.tree.code_for_node(p)) for p in node.rpar)
                code = code[lead : len(code) - trail]
            if index is not None and len(code) > _LONG_TEXT:
                self.positions_of(index) if member is None else self.member_positions(index, member)
        if "\n" not in code and "\r" not in code:
            return code
        return " ".join(part for part in (line.strip() for line in code.splitlines()) if part)

    def resolve(self, node, last=None) -> tuple[int, int, int, int]:
        return _resolve(self.positions(), node, last)


class StatementPositions:
    """The resolver of the spans of one top-level statement's nodes."""

    __slots__ = ("file", "index")

    def __init__(self, file: DeferredPositions, index: int):
        self.file = file
        self.index = index

    def resolve(self, node, last=None) -> tuple[int, int, int, int]:
        return _resolve(self.file.positions_of(self.index), node, last)

    def text_of(self, node) -> str | None:
        return self.file.text_of(node, self.index)


class MemberPositions:
    """The resolver of the spans of one statement of a top-level class's body."""

    __slots__ = ("file", "index", "k")

    def __init__(self, file: DeferredPositions, index: int, k: int):
        self.file = file
        self.index = index
        self.k = k

    def resolve(self, node, last=None) -> tuple[int, int, int, int]:
        return _resolve(self.file.member_positions(self.index, self.k), node, last)

    def text_of(self, node) -> str | None:
        return self.file.text_of(node, self.index, self.k)


def dotted_name(node, exact: bool = False) -> str | None:
    """``a.b.c`` for a name or a chain of attributes of one, else None. With ``exact``
    only when written with no space or parenthesis inside (its own are not in its span),
    so that it is the chain's source text: the text most calls' functions have, without a
    code-generation pass (one per op a forward calls)."""
    parts = []
    while isinstance(node, cst.Attribute):
        dot = node.dot
        if exact and (node.value.lpar or node.value.rpar or not _bare(dot.whitespace_before)
                      or not _bare(dot.whitespace_after)):
            return None
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _bare(whitespace) -> bool:
    return isinstance(whitespace, cst.SimpleWhitespace) and not whitespace.value


def _resolve(positions: Positions, node, last) -> tuple[int, int, int, int]:
    """1-based (line, column, end_line, end_column) of `node`, or from the start of
    `node` to the end of `last` (a statement head); zeros if the node has none."""
    start = positions.get(node)
    end = positions.get(last) if last is not None else start
    if start is None:
        return (0, 0, 0, 0)
    if end is None:
        end = start
    return (start[0], start[1] + 1, end[2], end[3] + 1)
