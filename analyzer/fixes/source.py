"""The source side of a fix: one file's libcst tree with positions, the statement at a
diagnostic's site, and text edits on the original bytes.

Fixes are exact text edits (``analyzer.diagnostics.Edit``) so that the runner can apply
them without re-parsing, keep everything outside the edited range as it is, and refuse
overlapping ones. A rewrite renders its replacement from the original source text of
the statements it keeps (``code_of``), re-indented, so comments and formatting inside
them survive.
"""

from __future__ import annotations

import re
import textwrap

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from analyzer.diagnostics import Edit
from analyzer.frontend.positions import Positions
from analyzer.lines import NEWLINE, lines_with_ends

_COMMENT = re.compile(r"#[^\n]*")


class FixSource:
    """The part of one file a fix works on: ``scope``, a node of the file's own libcst
    tree (the function holding the site), with the file's positions and lines. Nothing is
    parsed again: libcst's position metadata over a large class cost seconds a finding.
    Lines and columns in and out are the file's."""

    def __init__(self, lines: list[str], tree: cst.Module, positions: Positions, scope: cst.CSTNode):
        self.lines = lines
        self.module = tree
        self.positions = _Ranges(positions)
        self.parents: dict = {}
        self._starts: dict = {}
        stack = [scope]
        while stack:
            node = stack.pop()
            where = positions.get(node)
            if where is not None:
                self._starts.setdefault((type(node), where[0], where[1] + 1), node)
            for child in node.children:
                self.parents[child] = node
                stack.append(child)

    def node_at(self, kind, line: int, column: int):
        """The ``kind`` node starting at 1-based ``line``:``column``."""
        return self._starts.get((kind, line, column))

    def line_of(self, node) -> int | None:
        """The first line of ``node``, if it is in this source's statement."""
        where = self.positions.get(node)
        return where[0] if where is not None else None

    def code_of(self, node) -> str:
        return self.module.code_for_node(node)

    def indent_of(self, node) -> str:
        """The whitespace before ``node`` on its first line."""
        start = self.positions[node].start
        return self.lines[start.line - 1][: start.column]

    def edit(self, first, last, content: str) -> Edit:
        """Replace the source from the start of ``first`` to the end of ``last``."""
        start, end = self.positions[first].start, self.positions[last].end
        return Edit(start.line, start.column + 1, end.line, end.column + 1, content)

    def loop_edit(self, first, last, content: str) -> Edit | str:
        """The edit replacing the statements ``first`` to ``last`` (a loop and what a
        rewrite takes with it) by ``content``, or why it cannot be made."""
        edit = self.edit(first, last, content)
        if loses_comments(self.text(edit), edit.content):
            return "comments inside the loop would be lost"
        if not self.parses_after(edit, statement=True):
            return "the rewrite would not parse (please report this)"
        return edit

    def parses_after(self, edit: Edit, statement: bool) -> bool:
        """Does the replacement parse, as the statement(s) it replaces (at their
        indentation) or as an expression? Checked locally: re-parsing a whole large
        file for every finding would make ``check`` quadratic."""
        # The content's new lines may mix the file's newline with "\n" (applying the fix
        # makes them all the file's); dedent and the parser are given "\n" alone.
        content = NEWLINE.sub("\n", edit.content)
        try:
            if statement:
                indent = self.lines[edit.line - 1][: edit.column - 1]
                cst.parse_module(textwrap.dedent(indent + content) + "\n")
            else:
                cst.parse_expression(content)
        except cst.ParserSyntaxError:
            return False
        return True

    def text(self, edit: Edit) -> str:
        """The original text an edit replaces."""
        lines = self.lines[edit.line - 1 : edit.end_line]
        if not lines:
            return ""
        if len(lines) == 1:
            return lines[0][edit.column - 1 : edit.end_column - 1]
        return lines[0][edit.column - 1 :] + "".join(lines[1:-1]) + lines[-1][: edit.end_column - 1]


class _Ranges:
    """``ranges[node]``: a node's ``CodeRange`` (1-based lines, 0-based columns, as
    libcst's ``PositionProvider`` gives them), from the file's `Positions`."""

    def __init__(self, positions: Positions):
        self._positions = positions

    def get(self, node) -> tuple[int, int, int, int] | None:
        return self._positions.get(node)

    def __getitem__(self, node) -> CodeRange:
        where = self._positions.get(node)
        if where is None:
            raise KeyError(node)
        line, column, end_line, end_column = where
        return CodeRange(CodePosition(line, column), CodePosition(end_line, end_column))


def comments(text: str) -> list[str]:
    return [c.rstrip() for c in _COMMENT.findall(text)]


def loses_comments(original: str, replacement: str) -> bool:
    """True when a comment of ``original`` is missing from ``replacement`` (a rough
    check on ``#`` outside strings is enough: the rewrites never add or drop strings)."""
    kept = comments(replacement)
    for comment in comments(original):
        if comment in kept:
            kept.remove(comment)
        else:
            return True
    return False


def reindent(code: str, indent: str) -> str:
    """``code`` (rendered at indentation zero) with ``indent`` before every non-empty line."""
    return "".join(indent + line if line.strip() else line for line in lines_with_ends(code))
