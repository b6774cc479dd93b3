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
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from analyzer.diagnostics import Edit

_COMMENT = re.compile(r"#[^\n]*")


def dotted(node) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


class FixSource:
    """A piece of one file being fixed: the lines from ``first_line`` on (a whole
    top-level statement; libcst's position metadata over a
    whole large file costs seconds). Lines and columns in and out are the file's."""

    def __init__(self, source: str, first_line: int = 1):
        self.offset = first_line - 1
        self.lines = [""] * self.offset + source.splitlines(keepends=True)
        self.wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(PositionProvider)
        self.parents = self.wrapper.resolve(ParentNodeProvider)

    @cached_property
    def _starts(self) -> dict:
        index: dict = {}
        for node, where in self.positions.items():
            index.setdefault((type(node), where.start.line + self.offset, where.start.column + 1), node)
        return index

    def node_at(self, kind, line: int, column: int):
        """The ``kind`` node starting at 1-based ``line``:``column``."""
        return self._starts.get((kind, line, column))

    def code_of(self, node) -> str:
        return self.module.code_for_node(node)

    def indent_of(self, node) -> str:
        """The whitespace before ``node`` on its first line."""
        start = self.positions[node].start
        return self.lines[start.line + self.offset - 1][: start.column]

    def edit(self, first, last, content: str) -> Edit:
        """Replace the source from the start of ``first`` to the end of ``last``."""
        start, end = self.positions[first].start, self.positions[last].end
        return Edit(start.line + self.offset, start.column + 1, end.line + self.offset, end.column + 1, content)

    def parses_after(self, edit: Edit, statement: bool) -> bool:
        """Does the replacement parse, as the statement(s) it replaces (at their
        indentation) or as an expression? Checked locally: re-parsing a whole large
        file for every finding would make ``check`` quadratic."""
        try:
            if statement:
                indent = self.lines[edit.line - 1][: edit.column - 1]
                cst.parse_module(textwrap.dedent(indent + edit.content) + "\n")
            else:
                cst.parse_expression(edit.content)
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
    return "".join(indent + line if line.strip() else line for line in code.splitlines(keepends=True))
