"""Top-level functions (and, when asked, methods of top-level classes) whose bodies libcst
parses only when the analysis first reads them.

    deferral = find_deferrable(text, methods=False)   # None: nothing to defer
    tree = libcst.parse_module(deferral.reduced)
    stubs = deferral.stubs(tree)   # statement index, or (class index, member index) -> Region;
                                   # None: parse `text` whole

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

Methods (``methods=True``) are deferred for a file read as another file's dependency,
for its classes, signatures and the few methods its users call: on transformers a
dependency's analysis reads a fifth of its method lines, a checked file's own analysis
nearly all (so a checked file is parsed with its methods). A method is deferred on the
same terms, one level in: it starts on a line of a top-level class's body with `@` or
`def` at the indentation of that body's first statement, it ends before the next line
with code no deeper, CPython parses its lines (under an `if 1:`, which keeps their
columns) as one function, and the reduced text's parse has that `def`, its whole body
the marker, as a direct statement of a top-level class's body.
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
    indent: str  # "" for a top-level function; a method's (its class body's indentation)
    first: int  # its first line (its first decorator's)
    def_line: int  # the line of `def`
    body: int  # the line its body's first statement starts on
    end: int  # one past its last line
    text: str  # lines `first` to `end`, as in the file: what its body is parsed from

    def source(self) -> str:
        """What its body is parsed from: its lines, a method's under an `if 1:` written on
        the line before its first (so that every line and column is the file's)."""
        if not self.indent:
            return self.text
        return "if 1:" + (_ending(self.text.splitlines(keepends=True)[0]) or "\n") + self.text

    def def_node(self, tree: cst.Module):
        """The `def` in the parse of `source()`, or None when it is not there alone."""
        if len(tree.body) != 1:
            return None
        node = tree.body[0]
        if self.indent:
            if not isinstance(node, cst.If) or node.orelse is not None or not isinstance(node.body, cst.IndentedBlock):
                return None
            if len(node.body.body) != 1:
                return None
            node = node.body.body[0]
        return node if isinstance(node, cst.FunctionDef) else None

    def statement_line(self) -> int:
        """The file's line (1-based) of the one top-level statement of `source()`'s parse:
        the wrapper's, the line before the method's first; or the function's `def` line."""
        return self.first if self.indent else self.def_line + 1


@dataclass(frozen=True, slots=True)
class Deferral:
    reduced: str  # the file with the regions' bodies replaced by their markers
    regions: tuple[Region, ...]

    def stubs(self, tree: cst.Module) -> dict | None:
        """Where each region's marker `def` is in ``tree`` (the parse of ``reduced``): a
        top-level statement index for a function, (class index, member index) for a
        method; None unless every region is found, once, under its name, where it belongs."""
        by_number = {r.number: r for r in self.regions}
        found: dict = {}

        def take(where, stmt, method: bool) -> bool:
            number = _marker_of(stmt)
            if number is None:
                return True
            region = by_number.pop(number, None)
            if region is None or stmt.name.value != region.name or bool(region.indent) != method:
                return False
            found[where] = region
            return True

        for index, stmt in enumerate(tree.body):
            if not take(index, stmt, False):
                return None
            if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                for k, member in enumerate(stmt.body.body):
                    if not take((index, k), member, True):
                        return None
        return found if not by_number else None


def find_deferrable(text: str, methods: bool = False) -> Deferral | None:
    """The top-level functions of ``text`` that can be deferred, and with ``methods`` the
    methods of its top-level classes (see the module doc)."""
    if _MARK_PREFIX in text or ("def" not in text):
        return None
    lines = lines_with_ends(text)
    regions: list[Region] = []
    for first, def_line, end in _candidates(lines):
        region = _validated(lines, first, def_line, end, len(regions))
        if region is not None:
            regions.append(region)
    if methods:
        for indent, first, def_line, end in _method_candidates(lines):
            region = _validated(lines, first, def_line, end, len(regions), indent)
            if region is not None:
                regions.append(region)
    if not regions:
        return None
    reduced = list(lines)
    for r in regions:
        # One string holds the lines' endings: one token where blank lines would each
        # be a node of libcst's tree.
        reduced[r.body] = f'{r.indent} """{_MARK_PREFIX}{r.number}__' + _ending(lines[r.body])
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


def _method_candidates(lines: list[str]):
    """(indent, first, def line, end) of each run of lines that may be one method of a
    top-level class: lines with `@` or `def` at the indentation of the class body's first
    line of code, up to the next line with code no deeper (a line that starts with a
    closing bracket there continues a signature or a decorator)."""
    n = len(lines)
    i = 0
    while i < n:
        if not lines[i].startswith("class"):
            i += 1
            continue
        # the class's extent: up to the next line with code in the first column
        j = i + 1
        while j < n and (lines[j][:1] in _NOT_CODE or lines[j].startswith(_CONTINUATION[1:])):
            j += 1
        code = [k for k in range(i + 1, j) if lines[k].strip() and not lines[k].lstrip(" \t\f").startswith("#")]
        i = j
        indents = [lines[k][: len(lines[k]) - len(lines[k].lstrip(" \t"))] for k in code]
        heads = [ind for k, ind in zip(code, indents)
                 if ind and (_DEF.match(lines[k][len(ind):]) or lines[k][len(ind):].startswith("@"))]
        if not heads:
            continue
        # the members' depth: that of the shallowest `def` or decorator (a `def` under an
        # `if` of the class body, deeper, is not a member: the reduced parse says so). A
        # line of a string shallower than that ends a run where the string is open,
        # and CPython refuses that run alone.
        indent = min(heads, key=len)
        # lines of code at the members' depth (or shallower: they end a member too)
        shallow = [k for k, ind in zip(code, indents) if len(ind) <= len(indent)]
        p = 0
        while p < len(shallow):
            head = lines[shallow[p]][len(indent):]
            if not lines[shallow[p]].startswith(indent) or not (head.startswith("@") or _DEF.match(head)):
                p += 1
                continue
            q = p
            while q < len(shallow) and not _DEF.match(lines[shallow[q]][len(indent):]) \
                    and lines[shallow[q]][len(indent):].startswith(_CONTINUATION):
                q += 1
            if q == len(shallow) or not _DEF.match(lines[shallow[q]][len(indent):]):
                p = max(q, p + 1)
                continue
            r = q + 1
            while r < len(shallow) and lines[shallow[r]][len(indent):].startswith(_CONTINUATION[1:]):
                r += 1
            yield indent, shallow[p], shallow[q], shallow[r] if r < len(shallow) else j
            p = r


def _validated(lines: list[str], first: int, def_line: int, end: int, number: int, indent: str = "") -> Region | None:
    chunk = "".join(lines[first:end])
    # A method's lines are parsed under `if 1:`, one line above them
    wrapped = "if 1:\n" + chunk if indent else chunk
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to print
            tree = compile(wrapped, "<deferred>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError...
        return None
    if indent:
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.If) or tree.body[0].orelse:
            return None
        tree, shift = tree.body[0], first - 1
    else:
        shift = first
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    fn = tree.body[0]
    if shift + fn.lineno - 1 != def_line or fn.col_offset != len(indent):
        return None
    statement = fn.body[0]
    body = shift + statement.lineno - 1
    line = lines[body]
    depth = len(line) - len(line.lstrip(" \t\f"))
    if body <= def_line or statement.col_offset <= len(indent) or depth != statement.col_offset:
        return None  # `def f(): return x`, or a body that does not start its own line
    if end - body < MIN_BODY_LINES:
        return None
    return Region(number, fn.name, indent, first, def_line, body, end, chunk)


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
