"""How deeply a text nests, decided before libcst reads it.

    screened = screen(text)   # .refusal: None, or why the text is UT000 (message, line, column)
                              # .cpython: CPython's parse when it was asked (False: not asked)

libcst's parser is native code that recurses once per level of nesting, in time
superlinear in it, and untrace's own passes (the IR builder, the analyses, the printer,
the code generation that finds positions) recurse once per level too. Measured with
libcst 1.9 on an 8 MB main-thread stack: 2,000 nested parentheses, 4,000 chained
`.relu()` calls, 8,000 operands of one `and` or 20,000 `elif`s crash the process
(SIGSEGV); 2,000 chained calls take 13 s to parse, 1,000 nested `f(` 38 s. So every text
is measured before libcst sees it, on every path that gives libcst a text, and one that
is too deep is a UT000 at the place where it goes too deep:

- what CPython refuses for its own limits (200 nested brackets, 100 levels of
  indentation), with CPython's message and position: a file nobody can import;
- code nested deeper than `MAX_DEPTH`: the statements and expressions on the way from
  the module to the deepest node, as Python's syntax tree nests them, and as libcst
  nests what that tree keeps flat: the k operands of one `and`/`or` count k - 1 levels,
  k adjacent string literals k - 1, the k `for`s of a comprehension k. Every recursive
  pass of untrace works at that depth, on half the stack of the main thread (8 MB) that
  runs `untrace` and each of its workers (tests/analyzer/test_nesting.py: the deepest
  need is libcst's parse of 80 nested blocks around 200 nested calls, 3.4 MB); real model
  code stays far below it (timm, torchvision, transformers, ultralytics,
  segment-anything: 131 at the deepest, a bytes literal of 128 adjacent parts in
  transformers' integrations/gguf/dequant.py; 29 without such a literal).

Asking CPython costs a parse into `ast` objects (a tenth of libcst's time), so a cheap
scan decides first, and it is sound: when it says a text cannot reach a limit, it
cannot. It blanks comments and strings (an f-string keeps its replacement fields, which
are code), turns every word into one character and drops blanks, so that what is left
has at most one character per token. Then, pass after pass, it replaces each innermost
bracket pair by a run of characters as long as the levels its content can nest: a node
of Python's tree owns a token outside the node below it (an operator, a dot, a keyword,
a bracket), so a path is no longer than the tokens of the comma-separated item it goes
through, plus the pair's brackets, a tuple, a `yield`, and one per `lambda` (a path may
cross its parameters' commas). A pass takes one level off every nest, so the passes
count the bracket depth too. What is left bounds each statement, line by line; the
statements around a line are bounded by its indentation and the number of `elif`s.
An f-string whose field holds a quote of its own kind (Python 3.12) is read to the quote
that closes it. Brackets that do not balance once strings are gone, and fields that do
not close, are not ruled out: CPython is asked, and measures only the statements the
scan could not rule out. A text it cannot rule out and that the running Python does not
parse is not given to libcst: it is UT000 with Python's syntax error, or, for code too
deep for Python's own parser, at the first line the scan found too deep.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import re
import sys
import warnings
from dataclasses import dataclass

# The deepest nesting untrace analyses (see the module doc); deeper is UT000.
MAX_DEPTH = 300

# The recursion limit the recursive passes run under (`stack_room`): what they need at
# MAX_DEPTH (measured: 1,600 frames at most, nested subscripts in 80 nested blocks; 6 a
# level, libcst's code generation of nested subscripts) with room for the nested calls
# of the interprocedural analysis. Python 3.11 and later make Python-to-Python calls
# without taking C stack; 3.10 takes about 0.4 KB a frame: 2.4 MB of the main thread's
# 8 MB at this limit.
RECURSION_LIMIT = 6_000

# Brackets deeper than this, or indentation this wide, may reach CPython's limits (200
# and 100): CPython is asked.
_CPYTHON_BRACKETS = 150
_CPYTHON_INDENT = 90
_DEEP_INDENT = re.compile(r"^[ \t\f]{%d}" % _CPYTHON_INDENT, re.MULTILINE)

# What CPython refuses whatever its version, while libcst accepts it.
CPYTHON_LIMITS = frozenset({
    "too many nested parentheses",
    "too many levels of indentation",
    "too many statically nested blocks",
    "too many nested f-strings",
})

_STRING = (
    r"'''(?:\\[\s\S]|[^\\])*?'''"
    r'|"""(?:\\[\s\S]|[^\\])*?"""'
    r"|'(?:\\[\s\S]|[^\\'\n])*'"
    r'|"(?:\\[\s\S]|[^\\"\n])*"'
)
# Comments and strings, in the order a tokenizer meets them (the leftmost match is the
# token that starts there); one group, so that `split` keeps them.
_TOKEN = re.compile(r"(#[^\n]*|" + _STRING + ")")
_STRING_AT = re.compile(_STRING)
_FIELD_PREFIXES = frozenset("fFtT")  # f-strings and template strings: their fields are code
_FIELD_STOP = re.compile(r"[{}'\"]")
_LAMBDA = re.compile(r"\blambda\b")
_WORD = re.compile(r"[A-Za-z0-9_]+")  # other letters stay one character each: more, never fewer
_BLANKS = str.maketrans("", "", " \t\f")
_ONE_KIND = str.maketrans("[{\x01]}\x02", "((()))")  # "\x01" ... "\x02": an f-string's fields
_PAIR = re.compile(r"\(([^()]+)\)")  # an innermost pair with something inside
_ITEMS = re.compile(r"[,;\n]")
_LINE_BREAK = "\x04"  # a line break that ends no statement (in a string or between brackets)
_LAMBDA_MARK = "\x03"
_PAST = "\x05"  # starts the run of a pair that may nest deeper than the budget


@dataclass(frozen=True, slots=True)
class Refusal:
    message: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Screened:
    refusal: Refusal | None
    cpython: ast.Module | None | bool = False  # CPython's parse (None: it refused); False: not asked


def screen(text: str) -> Screened:
    """Whether libcst and untrace's passes may be given ``text`` (see the module doc)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    scan = Scan(text)
    if not (scan.cpython_may_refuse or scan.may_be_too_deep):
        return Screened(None)
    tree, error = cpython_parse(text)
    if isinstance(error, SyntaxError) and error.msg in CPYTHON_LIMITS and error.lineno:
        return Screened(Refusal(f"syntax error: {error.msg}", error.lineno, max(1, error.offset or 1)), None)
    if not scan.may_be_too_deep:
        return Screened(None, tree)
    if tree is None:
        return Screened(_unmeasured(error, scan, text), None)
    deepest = Deepest(tree, text, scan.lines)
    if deepest.depth > MAX_DEPTH:
        return Screened(Refusal(deepest.message(), deepest.line, deepest.column), tree)
    return Screened(None, tree)


def cpython_parse(source: str | bytes, filename: str = "<unknown>") -> tuple[ast.Module | None, Exception | None]:
    """CPython's own parse of `source` (many times faster than libcst's), or None and
    why it refuses it. CPython builds the `ast` objects by recursing in C, as deep as the
    recursion limit allows (three levels a frame, in 3.10 and 3.11), so it is given the
    room of Python's default limit, however high `stack_room` has set it: a text nested
    deeper than that is a RecursionError, not a C stack overflow."""
    try:
        with warnings.catch_warnings(), _default_room():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to print
            return compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True), None
    except Exception as error:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError...
        return None, error


def too_deep_message(head: str) -> str:
    """``head`` ("expression nested 4,003 deep"), then what the limit is, and why."""
    return (f"{head}; untrace analyses code nested up to {MAX_DEPTH:,} deep (statements and "
            "expressions together): deeper code overflows the stack of its parser (libcst) "
            "and of its own analyses")


def _unmeasured(error: Exception | None, scan: "Scan", text: str) -> Refusal:
    """Why a text that may be too deep, and that CPython does not parse, is not given to
    libcst: CPython's syntax error, or (code too deep for CPython's own parser, which
    says no more) the place the scan found first."""
    if isinstance(error, SyntaxError) and error.lineno:
        return Refusal(f"syntax error: {error.msg}", error.lineno, max(1, error.offset or 1))
    lines = text.split("\n")
    line = min(min(scan.lines) if scan.lines else _elif_past_budget(text), len(lines))
    column = len(lines[line - 1]) - len(lines[line - 1].lstrip(" \t\f")) + 1
    if isinstance(error, (RecursionError, MemoryError)):
        return Refusal(too_deep_message("expression nested too deep for Python's own parser"), line, column)
    reason = f"{type(error).__name__}: {error}" if error is not None else "no reason given"
    return Refusal(too_deep_message(f"code that may nest too deep, which Python's parser refuses ({reason})"),
                   line, column)


def _elif_past_budget(text: str) -> int:
    """The line of the `elif` past which the scan cannot bound the statements around a
    line (the place to report when nothing better is known), else 1."""
    offset = -1
    for _ in range(max(1, MAX_DEPTH - 2 - _CPYTHON_INDENT)):
        offset = text.find("elif", offset + 1)
        if offset < 0:
            return 1
    return text.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------- the scan


class Scan:
    """The cheap scan of the module doc: `cpython_may_refuse` (brackets or indentation
    that may reach CPython's limits), `may_be_too_deep` (nesting that may be deeper than
    MAX_DEPTH), and `lines`, those of the statements that may be (None: any)."""

    def __init__(self, text: str):
        self.lines: set[int] | None = set()
        deep_indent = _DEEP_INDENT.search(text) is not None
        # The statements around a line: as many as its indentation has characters (under
        # _CPYTHON_INDENT unless a line has that many), one per `elif` of the text, and
        # the module's and a suite's on the line of its header.
        statements = 2 + (len(text) if deep_indent else _CPYTHON_INDENT - 1) + text.count("elif")
        budget = MAX_DEPTH - statements
        code = _compact(text) if budget > 4 else None
        if code is None:
            self.cpython_may_refuse = self.may_be_too_deep = True
            self.lines = None
            return
        passes = 0
        while passes <= _CPYTHON_BRACKETS:  # past it CPython is asked; a pass costs a pass over the text
            parts = _PAIR.split(code)
            if len(parts) > 1:
                runs = [_weigh(content, budget) for content in parts[1::2]]
                parts[1::2] = runs
                if _PAST in "".join(runs):
                    self.lines.update(_marked_lines(parts))
                code = "".join(parts)
            elif "()" not in code:
                break
            code = code.replace("()", "ww")
            passes += 1
        self.cpython_may_refuse = deep_indent or passes > _CPYTHON_BRACKETS
        if "(" in code or ")" in code:
            self.cpython_may_refuse = self.may_be_too_deep = True  # unbalanced once strings are gone
            self.lines = None
            return
        self.lines.update(_deep_lines(code, budget))
        self.may_be_too_deep = bool(self.lines)


def _compact(text: str) -> str | None:
    """``text`` with at most one character per token, every bracket "(" or ")" (see the
    module doc): comments gone, a string one quote, an f-string its replacement fields
    between brackets, a word one letter, blanks gone; line breaks inside strings and
    f-strings kept as `_LINE_BREAK`. None when an f-string's fields do not close."""
    parts = _TOKEN.split(text)
    tokens = parts[1::2]
    for i, token in enumerate(tokens):
        if token[0] == "#":
            tokens[i] = ""
        elif _has_fields(parts[2 * i]):
            quote = token[:3] if len(token) >= 6 and token[:3] in ('"""', "'''") else token[0]
            read = _read_fields(token, len(quote), quote)
            if read is None or read[1] != len(token):
                # A field holds a quote of the f-string's own kind (Python 3.12), where
                # the token above ends: the text is read again, a token at a time.
                return _compact_reading(text)
            tokens[i] = _fstring_run(token, read[0])
        else:
            tokens[i] = "'" + _LINE_BREAK * token.count("\n") if "\n" in token else "'"
    parts[1::2] = tokens
    return _squeezed("".join(parts))


def _compact_reading(text: str) -> str | None:
    """`_compact` for a text whose f-strings nest quotes of their own kind: each
    f-string read to the quote that closes it. None when one does not close."""
    out: list[str] = []
    pos = 0
    while True:
        token = _TOKEN.search(text, pos)
        if token is None:
            out.append(text[pos:])
            return _squeezed("".join(out))
        start = token.start()
        out.append(text[pos:start])
        pos = token.end()
        if text[start] == "#":
            continue
        if not _has_fields(text[max(0, start - 2) : start]):
            out.append("'" + _LINE_BREAK * token.group().count("\n"))
            continue
        quote = text[start : start + 3] if text.startswith(('"""', "'''"), start) else text[start]
        read = _read_fields(text, start + len(quote), quote)
        if read is None:
            return None
        out.append(_fstring_run(text[start : read[1]], read[0]))
        pos = read[1]


def _squeezed(code: str) -> str:
    if "lambda" in code:
        code = _LAMBDA.sub(_LAMBDA_MARK, code)
    code = _WORD.sub("a", code).translate(_BLANKS)
    if "\\\n" in code:
        code = code.replace("\\\n", "")
    return code.translate(_ONE_KIND)


def _has_fields(before: str) -> bool:
    """Whether a string whose quote follows ``before`` is an f-string or a template
    string (a name ending in one of their prefixes counts too: more fields, never fewer)."""
    return before[-1:] in _FIELD_PREFIXES or (before[-1:] in ("r", "R") and before[-2:-1] in _FIELD_PREFIXES)


def _fstring_run(token: str, fields: str) -> str:
    """An f-string ``token`` in the compact text: its fields between brackets, then the
    line breaks of its literal text."""
    breaks = token.count("\n") - fields.count("\n") - fields.count(_LINE_BREAK)
    return "\x01" + fields + "\x02" + _LINE_BREAK * breaks


# In an f-string's literal text: an escape, a doubled brace, a brace, or its closing quote.
_LITERAL_STOPS = {quote: re.compile(r"\\[\s\S]|\{\{|\}\}|[{}]|" + re.escape(quote) + ("|\n" if len(quote) == 1 else ""))
                  for quote in ("'", '"', "'''", '"""')}


def _read_fields(text: str, i: int, quote: str) -> tuple[str, int] | None:
    """The code of the replacement fields of the f-string whose body starts at
    ``text[i]``, each between braces, a string in them one quote (an f-string its own
    fields), and the index past its closing ``quote``; None when a field or the string
    does not close, or a `}` stands alone."""
    stops = _LITERAL_STOPS[quote]
    out: list[str] = []
    while True:
        stop = stops.search(text, i)
        if stop is None:
            return None
        found = stop.group()
        if found == quote:
            return "".join(out), stop.end()
        if found in ("}", "\n"):
            return None
        if found == "{":
            i = _field(text, stop.start(), out)
            if i < 0:
                return None
        else:
            i = stop.end()  # an escape, `{{` or `}}`


def _field(text: str, i: int, out: list[str]) -> int:
    """Append the code of the replacement field that opens at ``text[i]``; the index past
    it, or -1 when it does not close."""
    depth = 0
    while True:
        stop = _FIELD_STOP.search(text, i)
        if stop is None:
            return -1
        j = stop.start()
        out.append(text[i:j])
        char = text[j]
        if char in "{}":
            depth += 1 if char == "{" else -1
            out.append(char)
            i = j + 1
            if depth == 0:
                return i
            continue
        if _has_fields(text[max(0, j - 2) : j]):
            quote = text[j : j + 3] if text.startswith(('"""', "'''"), j) else char
            read = _read_fields(text, j + len(quote), quote)
            if read is None:
                return -1
            out.append("\x01" + read[0] + "\x02")
            i = read[1]
            continue
        string = _STRING_AT.match(text, j)
        if string is None:
            return -1
        out.append("'" + _LINE_BREAK * string.group().count("\n"))
        i = string.end()


def _weigh(content: str, budget: int) -> str:
    """The replacement of an innermost bracket pair holding ``content``: as many
    characters as the levels it may nest (see the module doc), and the line breaks it
    held. Past ``budget``, `_PAST` and no more than that."""
    breaks = content.count("\n") + content.count(_LINE_BREAK)
    if breaks:
        content = content.replace("\n", "").replace(_LINE_BREAK, "")
    if "," in content:
        levels = max(map(len, content.split(","))) + 4  # its brackets, a tuple, a `yield`
    else:
        levels = len(content) + 2
    if _LAMBDA_MARK in content:
        levels += content.count(_LAMBDA_MARK)
    if levels > budget:
        return _PAST + "w" * budget + _LINE_BREAK * breaks
    return "w" * levels + _LINE_BREAK * breaks if breaks else "w" * levels


def _marked_lines(parts: list[str]) -> list[int]:
    """The lines where the pairs weighed past the budget start, in `split` parts of a pass."""
    lines, line = [], 1
    for i, part in enumerate(parts):
        if i % 2 and part[:1] == _PAST:
            lines.append(line)
        line += part.count("\n") + part.count(_LINE_BREAK)
    return lines


def _deep_lines(code: str, budget: int) -> list[int]:
    """The lines whose statements may nest deeper than ``budget`` once every bracket pair
    is replaced (a pair past it is marked `_PAST`)."""
    flat = code.replace(_LINE_BREAK, "")
    if _PAST not in flat and max(map(len, _ITEMS.split(flat))) + 2 + flat.count(_LAMBDA_MARK) <= budget:
        return []
    lines, line = [], 1
    for statement in code.split("\n"):
        items = statement.replace(";", ",").split(",")
        levels = max(len(item) - item.count(_LINE_BREAK) for item in items) + 2 + statement.count(_LAMBDA_MARK)
        if levels > budget or _PAST in statement:
            lines.append(line)
        line += 1 + statement.count(_LINE_BREAK)
    return lines


# --------------------------------------------------------------------------- the measure


class Deepest:
    """The deepest nesting of CPython's parse ``tree`` of ``text`` (see the module doc):
    `depth`, and the `line` and `column` where it first goes past MAX_DEPTH (else of the
    deepest node). With ``lines``, only the statements holding one of those lines are
    measured: the scan found the others shallow enough."""

    _OWN = (ast.stmt, ast.expr, ast.pattern)
    _COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

    def __init__(self, tree: ast.Module, text: str, lines: set[int] | None = None):
        self._lines = text.encode("utf-8", "surrogatepass").splitlines()
        marked = sorted(lines) if lines is not None else None
        self.depth = self.statements = 0
        deepest = past = None
        past_statements = 0
        # (node, its depth, the statements among them)
        stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
        while stack:
            node, depth, statements = stack.pop()
            if isinstance(node, self._OWN):
                if isinstance(node, ast.stmt):
                    if marked is not None and not _holds(node, marked):
                        continue
                    statements += 1
                outer, depth = depth, depth + self._levels(node)
                if depth > self.depth:
                    self.depth, self.statements, deepest = depth, statements, node
                if depth > MAX_DEPTH >= outer and (past is None or _before(node, past)):
                    past, past_statements = node, statements  # where it first goes too deep, in the text
            if isinstance(node, self._COMPREHENSIONS):
                # libcst nests each `for` of a comprehension in the one before it
                stack.extend((generator, depth + i, statements) for i, generator in enumerate(node.generators))
                stack.extend((child, depth, statements) for child in ast.iter_child_nodes(node)
                             if not isinstance(child, ast.comprehension))
                continue
            stack.extend((child, depth, statements) for child in ast.iter_child_nodes(node))
        node = past or deepest
        self.kind = "statements" if 2 * (past_statements if past else self.statements) > self.depth else "expression"
        self.line = getattr(node, "lineno", 1) or 1
        self.column = self._column(node)

    def message(self) -> str:
        return too_deep_message(f"{self.kind} nested {self.depth:,} deep")

    def _levels(self, node) -> int:
        if isinstance(node, ast.BoolOp):
            return len(node.values) - 1  # libcst: `a and b and c` is `(a and b) and c`
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
            return self._string_parts(node)  # libcst: `"a" "b" "c"` is `"a" ("b" "c")`
        return 1

    def _string_parts(self, node) -> int:
        """How many string literals are written side by side to make ``node``."""
        line, end = node.lineno, node.end_lineno
        if end is None or (end == line and node.end_col_offset - node.col_offset < 5):
            return 1
        lines = self._lines[line - 1 : end]
        if not lines:
            return 1
        if len(lines) == 1:
            segment = lines[0][node.col_offset : node.end_col_offset]
        else:
            segment = b"\n".join([lines[0][node.col_offset :], *lines[1:-1], lines[-1][: node.end_col_offset]])
        return max(1, sum(1 for m in _TOKEN_BYTES.finditer(segment) if m.group(0)[:1] != b"#"))

    def _column(self, node) -> int:
        line, offset = getattr(node, "lineno", None), getattr(node, "col_offset", None)
        if not line or offset is None or line > len(self._lines):
            return 1
        return len(self._lines[line - 1][:offset].decode("utf-8", "replace")) + 1


_TOKEN_BYTES = re.compile(_TOKEN.pattern.encode())


def _before(node, other) -> bool:
    return (node.lineno, node.col_offset) < (other.lineno, other.col_offset)


def _holds(stmt: ast.stmt, lines: list[int]) -> bool:
    """Whether one of the sorted ``lines`` is among the lines of ``stmt``."""
    i = bisect.bisect_left(lines, stmt.lineno)
    return i < len(lines) and lines[i] <= (stmt.end_lineno or stmt.lineno)


# --------------------------------------------------------------------------- the stack


_DEFAULT_ROOM = 1_000  # Python's default recursion limit


@contextlib.contextmanager
def _default_room():
    """The recursion limit Python has by default, above the frames already in use."""
    saved = sys.getrecursionlimit()
    if saved <= _DEFAULT_ROOM:
        yield
        return
    limit = min(saved, _frames() + _DEFAULT_ROOM)
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _frames() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@contextlib.contextmanager
def stack_room(limit: int = RECURSION_LIMIT):
    """Run the recursive passes under at least ``limit`` frames (see RECURSION_LIMIT);
    the limit in force before is put back afterwards."""
    saved = sys.getrecursionlimit()
    if saved >= limit:
        yield
        return
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)
