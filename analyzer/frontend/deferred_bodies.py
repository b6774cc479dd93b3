"""Top-level functions whose bodies libcst parses only when the analysis first reads them.

    deferral = find_deferrable(text)     # None: nothing to defer
    tree = libcst.parse_module(deferral.reduced)
    stubs = deferral.stubs(tree)         # statement index -> Region; None: parse `text` whole

libcst's parse is most of what `untrace check` costs, and most of a tree's top-level
functions are never reached from a `forward` (timm 1.0.31: 2,073 top-level functions in
the files a check analyses, 359 of them read; the rest are `@register_model` builders,
weight loaders and configuration helpers). So the file is parsed with each such
function's body replaced by one marker statement (a triple-quoted string
`__untrace_deferred_3__` holding the body's line endings), every line kept in place so that everything else has the positions it has in the file; the body
is parsed from the function's own lines when first read (`ir.DeferredFunctionDef`).

A function is deferred only when it is certainly a top-level `def` and CPython's
parser accepts it on its own (so a syntax error in it is still the file's UT000, from
libcst's parse of the whole file):
- it starts on a line with `@` or `def` in the first column, its `def` line follows
  its decorators, and it ends before the next line with code in the first column
  (lines that start with a closing bracket continue a signature or a decorator);
- CPython parses exactly those lines as one function whose `def` is that line and
  whose first statement begins its own, indented, line;
- the parse of the reduced text has, as a top-level statement, a `def` of that name
  whose whole body is the function's marker. A `def` inside a string (a docstring's
  example) fails this, and the file is parsed whole.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

import libcst as cst

from analyzer.lines import lines_with_ends

# Bodies shorter than this are parsed with the file: deferring costs a CPython parse.
MIN_BODY_LINES = 3

_MARK_PREFIX = "__untrace_deferred_"
_MARK = re.compile(r'"""__untrace_deferred_(\d+)__[\r\n]*"""')
_DEF = re.compile(r"(?:async[ \t]+)?def[ \t]")
_CONTINUATION = ("@", ")", "]", "}")  # first characters of the lines between a decorator and its `def`
_NOT_CODE = frozenset(" \t\f#\r\n")  # a line starting with one of these has no code in the first column


@dataclass(frozen=True, slots=True)
class Region:
    """One deferred function: 0-based line indexes into the file."""

    number: int  # its marker's number
    name: str
    first: int  # its first line (its first decorator's)
    def_line: int  # the line of `def`
    body: int  # the line its body's first statement starts on
    end: int  # one past its last line
    text: str  # lines `first` to `end`, as in the file: what its body is parsed from


@dataclass(frozen=True, slots=True)
class Deferral:
    reduced: str  # the file with the regions' bodies replaced by their markers
    regions: tuple[Region, ...]

    def stubs(self, tree: cst.Module) -> dict[int, Region] | None:
        """The top-level statement index of each region's marker `def` in ``tree`` (the
        parse of ``reduced``); None unless every region is found, once, under its name."""
        by_number = {r.number: r for r in self.regions}
        found: dict[int, Region] = {}
        for index, stmt in enumerate(tree.body):
            number = _marker_of(stmt)
            if number is None:
                continue
            region = by_number.pop(number, None)
            if region is None or stmt.name.value != region.name:
                return None
            found[index] = region
        return found if not by_number else None


def find_deferrable(text: str) -> Deferral | None:
    """The top-level functions of ``text`` that can be deferred (see the module doc)."""
    if _MARK_PREFIX in text or ("def" not in text):
        return None
    lines = lines_with_ends(text)
    regions: list[Region] = []
    for first, def_line, end in _candidates(lines):
        region = _validated(lines, first, def_line, end, len(regions))
        if region is not None:
            regions.append(region)
    if not regions:
        return None
    reduced = list(lines)
    for r in regions:
        # One string holds the lines' endings: one token where blank lines would each
        # be a node of libcst's tree.
        reduced[r.body] = f' """{_MARK_PREFIX}{r.number}__' + _ending(lines[r.body])
        for i in range(r.body + 1, r.end - 1):
            reduced[i] = _ending(lines[i])
        reduced[r.end - 1] = '"""' + _ending(lines[r.end - 1])
    return Deferral("".join(reduced), tuple(regions))


def _candidates(lines: list[str]):
    """(first, def line, end) of each run of lines that may be one top-level function."""
    code = [i for i, line in enumerate(lines) if line[:1] not in _NOT_CODE]
    p = 0
    while p < len(code):
        head = lines[code[p]]
        if not (head.startswith("@") or _DEF.match(head)):
            p += 1
            continue
        q = p
        while q < len(code) and not _DEF.match(lines[code[q]]) and lines[code[q]].startswith(_CONTINUATION):
            q += 1
        if q == len(code) or not _DEF.match(lines[code[q]]):
            p = max(q, p + 1)
            continue
        r = q + 1
        while r < len(code) and lines[code[r]].startswith(_CONTINUATION[1:]):
            r += 1  # `):` / `) -> Tensor:` closing a signature in the first column
        yield code[p], code[q], code[r] if r < len(code) else len(lines)
        p = r


def _validated(lines: list[str], first: int, def_line: int, end: int, number: int) -> Region | None:
    chunk = "".join(lines[first:end])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to print
            tree = compile(chunk, "<deferred>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError...
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    fn = tree.body[0]
    if first + fn.lineno - 1 != def_line:
        return None
    statement = fn.body[0]
    body = first + statement.lineno - 1
    line = lines[body]
    indent = len(line) - len(line.lstrip(" \t\f"))
    if body <= def_line or statement.col_offset == 0 or indent != statement.col_offset:
        return None  # `def f(): return x`, or a body that does not start its own line
    if end - body < MIN_BODY_LINES:
        return None
    return Region(number, fn.name, first, def_line, body, end, chunk)


def _marker_of(stmt) -> int | None:
    """The number of the marker that is ``stmt``'s whole body, if it is a marker `def`."""
    if not isinstance(stmt, cst.FunctionDef) or not isinstance(stmt.body, cst.IndentedBlock):
        return None
    block = stmt.body.body
    if len(block) != 1 or not isinstance(block[0], cst.SimpleStatementLine) or len(block[0].body) != 1:
        return None
    only = block[0].body[0]
    if not isinstance(only, cst.Expr) or not isinstance(only.value, cst.SimpleString):
        return None
    match = _MARK.fullmatch(only.value.value)
    return int(match.group(1)) if match else None


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return line[-1] if line[-1:] in ("\r", "\n") else ""
