"""One function's IR from its own lines, without parsing the rest of its file.

Lowering interprets library code from source: an export of a transformers model reads a
few functions each from a dozen files, modeling_utils.py's 5,000 lines among them, and
parsing and converting whole files with libcst took most of the export's time.
`SourceFile.function(code)` parses only the lines of the `def` that `code` was compiled
from, and gives the very IR `parse_module` gives that `def` in the whole file: the same
nodes, spans (lines and columns are the file's) and qualified name. Whenever the lines
cannot be cut out with certainty it answers None, and the caller reads the whole file
(`SourceFile.module()`).

How the lines are cut out and parsed:

- `inspect.getblock` (Python's tokenizer, which knows strings and brackets) finds the end
  of the `def` from its first line (`co_firstlineno`: the first decorator's); every line
  the code object and its nested code objects run must lie inside.
- A `def` at the margin is parsed after one empty line; an indented one inside
  `if 1:`, on the line before its own (there always is one: an indented line is never a
  file's first), so that every column stays the file's. Spans are shifted to the file's
  lines by the line that one top-level statement starts on (CPython's parse of the
  snippet says which: the `def` line of a decorated def).
- The snippet's first newline is the file's, so that libcst infers the same default
  newline and every node is the one it makes from the whole file.
- The qualified name comes from `co_qualname`, which names enclosing classes and
  functions the way the front end does.
"""

from __future__ import annotations

import inspect
import io
import tokenize
import types

import libcst as cst

from analyzer.frontend import ir
from analyzer.frontend.build import _Builder, _refuse_pathological, parse_module
from analyzer.frontend.positions import DeferredPositions, statement_lines
from analyzer.lines import NEWLINE, lines_with_ends


class SourceFile:
    """One file's bytes, parsed a function at a time (`function`) or whole (`module`)."""

    def __init__(self, data: bytes, path: str):
        self.data = data
        self.path = path
        self._lines: list[str] | None = None
        self._newline = "\n"
        self._module: ir.Module | None = None

    def module(self) -> ir.Module:
        """The whole file's IR (`parse_module`, which raises ParseError), parsed once."""
        if self._module is None:
            self._module = parse_module(self.data, self.path)
        return self._module

    def function(self, code: types.CodeType) -> ir.FunctionDef | None:
        """The IR of the `def` that `code` was compiled from, or None when its lines
        cannot be cut out with certainty."""
        lines = self._text_lines()
        first = code.co_firstlineno
        if not lines or not 1 <= first <= len(lines) or not hasattr(code, "co_qualname"):
            return None
        try:
            block = inspect.getblock(lines[first - 1:])
        except (tokenize.TokenError, SyntaxError, IndexError):
            return None
        if not _covers(code, first, first + len(block) - 1):
            return None
        head = block[0]
        indent = head[: len(head) - len(head.lstrip(" \t"))]
        if not head[len(indent):].startswith(("def", "async", "@")):
            return None
        qualname, name = code.co_qualname, code.co_name
        if qualname != name and not qualname.endswith("." + name):
            return None
        # The wrapper (or the empty line) is the snippet's first line, the file's line
        # `first - 1`.
        wrapper = "if 1:" if indent else ""
        snippet = wrapper + self._newline + "".join(block)
        try:
            _refuse_pathological(snippet)
            tree = cst.parse_module(snippet)
        except Exception:  # noqa: BLE001 - any refusal: the whole file decides
            return None
        node = _only_def(tree, nested=bool(indent))
        if node is None or node.name.value != name:
            return None
        # Snippet line n is file line n + first - 2. The statement's line is its
        # syntactic start: the `def` line of a decorated def at the margin.
        start = statement_lines(snippet, tree)
        if not start:
            return None
        syntax = DeferredPositions(tree, snippet, [start[0] + first - 2])
        builder = _Builder(syntax.statement(0), strict=False)
        try:
            fn = builder.function(node, qualname[: -len(name) - 1] if qualname != name else "")
        except RecursionError:
            return None
        if fn.span.line != first and all(d.span.line != first for d in fn.decorators):
            return None
        return fn

    def _text_lines(self) -> list[str] | None:
        """The decoded file's lines with their endings (none when it does not decode)."""
        if self._lines is None:
            self._lines = []
            try:
                encoding, _ = tokenize.detect_encoding(io.BytesIO(self.data).readline)
                text = self.data.decode(encoding).removeprefix("\ufeff")
            except (SyntaxError, LookupError, UnicodeDecodeError):
                return None
            first_newline = NEWLINE.search(text)
            self._newline = first_newline.group() if first_newline else "\n"
            self._lines = lines_with_ends(text)
        return self._lines


def _covers(code: types.CodeType, first: int, last: int) -> bool:
    """Whether every line `code` (nested functions included) runs is in first..last."""
    for _, _, line in code.co_lines():
        if line is not None and not first <= line <= last:
            return False
    return all(_covers(c, first, last) for c in code.co_consts if isinstance(c, types.CodeType))


def _only_def(tree: cst.Module, nested: bool) -> cst.FunctionDef | None:
    """The snippet's one `def` (inside the `if 1:` wrapper when `nested`)."""
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if nested:
        if not isinstance(stmt, cst.If) or not isinstance(stmt.body, cst.IndentedBlock) or stmt.orelse is not None:
            return None
        if len(stmt.body.body) != 1:
            return None
        stmt = stmt.body.body[0]
    return stmt if isinstance(stmt, cst.FunctionDef) else None
