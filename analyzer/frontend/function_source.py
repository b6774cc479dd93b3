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

- The lines run from `co_firstlineno` (the first decorator's) past the last line the
  code object and its nested code objects run, up to the first line that starts a
  statement no deeper than the `def`. A line that looks like one but sits inside a
  bracket or string of the def leaves the snippet unbalanced, and libcst refuses it.
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

import io
import tokenize
import types

import libcst as cst

from analyzer.frontend import ir
from analyzer.frontend import nesting
from analyzer.frontend.build import _Builder, parse_module, screen
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
        head = lines[first - 1]
        indent = head[: len(head) - len(head.lstrip(" \t"))]
        if not head[len(indent):].startswith(("def", "async", "@")):
            return None
        end = _last_line(lines, first, indent, code)
        if end is None:
            return None
        block = lines[first - 1 : end]
        qualname, name = code.co_qualname, code.co_name
        if qualname != name and not qualname.endswith("." + name):
            return None
        # The wrapper (or the empty line) is the snippet's first line, the file's line
        # `first - 1`.
        wrapper = "if 1:" if indent else ""
        snippet = wrapper + self._newline + "".join(block)
        try:
            screen(snippet)  # libcst must not see it deeper than nesting.MAX_DEPTH
            tree = cst.parse_module(snippet)
        except Exception:  # noqa: BLE001 - any refusal: the whole file decides
            return None
        node = _only_def(tree, nested=bool(indent))
        if node is None or node.name.value != name:
            return None
        # Snippet line n is file line n + first - 2. The statement's line is its
        # syntactic start: the wrapper's (line 1), or the `def` line of a def at the
        # margin, after its decorators (CPython's parse of the snippet says where).
        if indent or not node.decorators:
            line = 1 if indent else 2
        else:
            start = statement_lines(snippet, tree)
            if not start:
                return None
            line = start[0]
        syntax = DeferredPositions(tree, snippet, [line + first - 2])
        builder = _Builder(syntax.statement(0), strict=False)
        try:
            with nesting.stack_room():
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


def _code_lines(code: types.CodeType):
    """Every line `code` and the code objects nested in it run."""
    yield from (line for _, _, line in code.co_lines() if line is not None)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_lines(const)


def _last_line(lines: list[str], first: int, indent: str, code: types.CodeType) -> int | None:
    """The def's last line: past every line its code runs, up to the first line that
    starts a statement no deeper than the `def` (blank and comment lines ride along).
    A stop inside a bracket or string of the def leaves the snippet unbalanced, which
    libcst refuses; indentation that compares neither way is None."""
    ran = list(_code_lines(code))
    if not ran or min(ran) < first:
        return None
    # A body without code (a docstring alone) runs only the first decorator's line.
    def_line = next((n for n in range(first, len(lines) + 1) if lines[n - 1].startswith(indent)
                     and lines[n - 1][len(indent):].startswith(("def ", "def\t", "async "))), first)
    end = max(max(ran), def_line)
    while end < len(lines):
        line = lines[end]
        text = line.lstrip(" \t")
        if not text.strip() or text.startswith("#"):
            end += 1
            continue
        ws = line[: len(line) - len(text)]
        if text.startswith("\f"):
            return None  # a form feed resets the tokenizer's column count
        if len(ws) > len(indent) and ws.startswith(indent):
            end += 1
        elif indent.startswith(ws):
            break
        else:
            return None
    return end


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
