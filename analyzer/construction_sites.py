"""Whether every construction of a class in the checked tree leaves one of its
constructor's parameters at its default, read from the files' text (no parse, so that a
warm run can re-ask it as cheaply as `module_index`'s questions).

    class LayerScale(nn.Module):
        def __init__(self, dim, init_values=1e-5, inplace=False):
            self.inplace = inplace
        def forward(self, x):
            return x.mul_(self.gamma) if self.inplace else x * self.gamma

    self.ls1 = LayerScale(dim, init_values=init_values) if init_values else nn.Identity()

When every mention of the class's name in the tree's code (its comments and docstrings
are not code), besides its `class` line and its imports, is a call that passes neither
that keyword nor that many positional arguments (and no `*args` or `**kwargs`),
`self.inplace` is False in every module the tree builds. Any other mention (the class
passed as a value, `partial(LayerScale, inplace=True)`, a subclass, a registry entry, a
string that is its name, as `__all__` and name registries hold) leaves the question
open: the answer is no. A class the tree never builds is no either: its user builds it.
Same-named classes of other modules count as mentions too, which can only make the
answer no.

Two mentions are no construction and leave the answer as it is: the class tested in
`isinstance(x, LayerScale2d)`, and the keywords a call spreads from a dict the function
builds itself (`LayerScale(dim, **dd)` after `dd = {'device': device, 'dtype': dtype}`):
when every mention of that name in the enclosing function is such a dict display (string
keys only) or `dict(k=...)`, or a `**` spread of it, its keys are the call's keywords."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple



def keeps_default(calls, param: str, position: int) -> bool:
    """Whether every construction in ``calls`` (`constructions`, None when the tree's
    mentions leave it open) leaves the parameter ``param`` (positional index ``position``
    after `self`) at its default; and there is at least one."""
    return bool(calls) and all(param not in keywords and positional <= position for positional, keywords, _ in calls)


def constructions(texts, class_name: str, bases_too: bool = False) -> list[tuple[int, frozenset, str | None]] | None:
    """(number of positional arguments, keywords, the attribute it is bound to) of every
    call of ``class_name`` in ``texts`` (file contents); the attribute is NAME for a
    statement `self.NAME = Cls(...)` (or `... if c else other`), else None. None when a
    mention other than its definition, imports and `isinstance` / `issubclass` tests is
    not such a call, or a call passes `*args` or a `**kwargs` that is not a dict built in
    its function. With ``bases_too`` a mention among the bases of a `class` statement is
    allowed too (the caller looks at the subclasses itself)."""
    mention = re.compile(r"(?<![\w.])" + re.escape(class_name) + r"\b")
    calls = []
    for text in texts:
        if not mention.search(text):
            continue
        code = _mentioning_statements(text, class_name, mention)
        if code is None:
            return None  # built by its name (`__all__`, a registry, `globals()[name]`): not seen
        lexed = _lex(code)
        if lexed is None:
            return None
        if class_name in lexed.strings:
            return None
        tokens = lexed.tokens
        for i in lexed.names.get(class_name, ()):
            line_start = lexed.starts[i]
            before = tokens[i - 1].string if i else ""
            after = tokens[i + 1].string if i + 1 < len(tokens) else ""
            if before == "class":
                continue
            if tokens[line_start].string in ("from", "import"):
                if after == "as":
                    return None  # used under another name
                continue
            if bases_too and tokens[line_start].string == "class":
                continue
            if before != "." and _in_type_test(tokens, i):
                continue  # `isinstance(m, LayerScale)` neither builds nor runs one
            call = None
            if before != "." and after == "(":
                call = _call(_arguments(tokens, i + 1), lambda name: _spread_keys(lexed, tokens[i].line, name))
            if call is None:
                return None
            calls.append((*call, _bound_attribute(tokens, line_start, i)))
    return calls


def _mentioning_statements(text: str, class_name: str, mention) -> str | None:
    """``text`` with only its top-level statements that mention ``class_name`` left (the
    other lines blank, so that lines keep their numbers): what the questions read, lexed
    at a fraction of the cost of the whole file (CPython's parser finds the statements).
    None when a string literal anywhere in the file is the class's name. The whole text
    when it does not parse (the lexer then decides)."""
    statements = _top_level_statements(text)
    if statements is None:
        return text
    if re.search("[\"']" + re.escape(class_name) + "[\"']", text) and class_name in _string_constants(text):
        return None
    lines = text.split("\n")  # the lines `ast` and `tokenize` count (not `splitlines`'s)
    marked = {text.count("\n", 0, m.start()) + 1 for m in mention.finditer(text)}
    keep = bytearray(len(lines) + 1)
    for first, last in statements:
        if any(first <= line <= last for line in marked):
            keep[first - 1 : last] = b"\x01" * (last - first + 1)
    return "\n".join(line if keep[i] else "" for i, line in enumerate(lines))


def _cpython_tree(text: str) -> ast.Module | None:
    # imported here: `analyzer.frontend` brings libcst, which a warm run (this module is
    # imported by the cache's module index) must not load
    from analyzer.frontend.nesting import cpython_parse

    return cpython_parse(text)[0]  # any file of the tree, not screened: see cpython_parse


@lru_cache(maxsize=256)
def _top_level_statements(text: str) -> tuple[tuple[int, int], ...] | None:
    """The (first, last) lines of each top-level statement (decorators included), once
    per file however many classes it mentions; None when CPython does not parse it."""
    tree = _cpython_tree(text)
    if tree is None:
        return None
    return tuple((min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", ())]), s.end_lineno or s.lineno)
                 for s in tree.body)


@lru_cache(maxsize=32)
def _string_constants(text: str) -> frozenset:
    """The values of the string and bytes literals of ``text`` (bytes decoded as UTF-8),
    for the rare file that quotes a class's name."""
    tree = _cpython_tree(text)
    values = (n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)) if tree is not None else ()
    return frozenset(v.decode("utf-8", "replace") if isinstance(v, bytes) else v
                     for v in values if isinstance(v, (str, bytes)))


@dataclass
class _Lexed:
    """One file's code tokens (no comments, blank lines or indents), indexed."""

    tokens: list
    starts: list[int]  # token index -> index of the first token of its statement
    names: dict[str, list[int]]  # identifier -> indices of its tokens
    strings: set[str]  # the contents of its one-word string literals
    scopes: list[tuple[int, int]]  # the line ranges of its functions (`_function_scopes`)


class _Token(NamedTuple):
    type: int
    string: str
    line: int


@lru_cache(maxsize=128)
def _lex(text: str) -> _Lexed | None:
    """The tokens of ``text``, once per text however many classes its questions name."""
    try:
        all_tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    tokens = [_Token(t.type, t.string, t.start[0]) for t in all_tokens
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)]
    starts, names, strings, line_start = [], {}, set(), 0
    for i, t in enumerate(tokens):
        starts.append(line_start)
        if t.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            line_start = i + 1
        elif t.type == tokenize.NAME:
            names.setdefault(t.string, []).append(i)
        elif t.type == tokenize.STRING:
            strings.add(t.string.lstrip("rbuRBU").strip("'\""))
    return _Lexed(tokens, starts, names, strings, _function_scopes(all_tokens))


def _in_type_test(tokens, at: int) -> bool:
    """Whether ``tokens[at]`` is the class argument of `isinstance` / `issubclass`, alone
    or in a tuple of classes: `isinstance(m, C)`, `isinstance(m, (C, D))`."""
    if at + 1 >= len(tokens) or tokens[at + 1].string not in (",", ")") or tokens[at - 1].string not in (",", "("):
        return False
    depth, i = 0, at - 1
    while i >= 0:
        t = tokens[i].string
        if t in (")", "]", "}"):
            depth += 1
        elif t in ("(", "[", "{"):
            if depth == 0:
                before = tokens[i - 1] if i else None
                if before is not None and before.string in ("isinstance", "issubclass"):
                    return True
                if t == "(" and before is not None and before.string == ",":
                    i -= 1  # a tuple of classes: its call is one level up
                    continue
                return False
            depth -= 1
        elif tokens[i].type == tokenize.NEWLINE:
            return False
        i -= 1
    return False


def _bound_attribute(tokens, line_start: int, i: int) -> str | None:
    """NAME when the mention at ``i`` is the call right of `self.NAME =` opening its statement."""
    head = [t.string for t in tokens[line_start:i]]
    return head[2] if len(head) == 4 and head[0] == "self" and head[1] == "." and head[3] == "=" else None


def _arguments(tokens, open_at: int) -> list[list]:
    """The tokens of each top-level argument of the call whose `(` is ``tokens[open_at]``."""
    depth, args, current = 0, [], []
    for t in tokens[open_at:]:
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
            if depth == 1:
                continue
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
            if depth == 0:
                break
        elif t.type == tokenize.OP and t.string == "," and depth == 1:
            args.append(current)
            current = []
            continue
        current.append(t)
    if current:
        args.append(current)
    return args


def _call(args: list[list], spread=lambda name: None) -> tuple[int, frozenset] | None:
    """(positional count, keywords) of a call's arguments; ``spread`` gives the keys of a
    `**name` (None when unknown)."""
    positional, keywords = 0, set()
    for a in args:
        if a[0].string == "**" and len(a) == 2 and a[1].type == tokenize.NAME and (keys := spread(a[1].string)) is not None:
            keywords |= keys
        elif a[0].string in ("*", "**"):
            return None
        elif len(a) > 1 and a[0].type == tokenize.NAME and a[1].string == "=":
            keywords.add(a[0].string)
        else:
            positional += 1
    return positional, frozenset(keywords)


def _function_scopes(all_tokens) -> list[tuple[int, int]]:
    """The (first, last) source lines of every function with a block body, from its
    `def` line to the line before the dedent that closes it."""
    scopes, open_defs, depth, pending = [], [], 0, None
    for k, t in enumerate(all_tokens):
        if t.type == tokenize.NAME and t.string == "def" and pending is None:
            pending = t.start[0]
        elif t.type == tokenize.NEWLINE and pending is not None:
            following = next((all_tokens[n] for n in range(k + 1, len(all_tokens))
                              if all_tokens[n].type not in (tokenize.NL, tokenize.COMMENT)), None)
            if following is None or following.type != tokenize.INDENT:
                pending = None  # `def f(): ...` on one line: no block of its own
        elif t.type == tokenize.INDENT:
            depth += 1
            if pending is not None:
                open_defs.append((pending, depth))
                pending = None
        elif t.type == tokenize.DEDENT:
            if open_defs and open_defs[-1][1] == depth:
                scopes.append((open_defs.pop()[0], t.start[0] - 1))
            depth -= 1
    scopes.extend((first, 1 << 30) for first, _ in open_defs)
    return scopes


def _spread_keys(lexed: _Lexed, line: int, name: str) -> frozenset | None:
    """The keys of the dict ``name`` spread at ``line``, when every mention of ``name`` in
    the innermost function around it is `name = {'k': ...}` / `name = dict(k=...)` or a
    `**name`; None otherwise (a parameter, an update, another binding, none at all)."""
    around = [s for s in lexed.scopes if s[0] <= line <= s[1]]
    if not around:
        return None
    first, last = max(around)
    tokens, keys, bound = lexed.tokens, set(), False
    for j in lexed.names.get(name, ()):
        if not first <= tokens[j].line <= last:
            continue
        if j and tokens[j - 1].string in (".", "**"):
            continue  # an attribute of that name, or a spread of it
        starts = lexed.starts[j] == j
        display = _dict_display_keys(tokens, j + 2) if starts and j + 1 < len(tokens) and tokens[j + 1].string == "=" else None
        if display is None:
            return None
        keys |= display
        bound = True
    return frozenset(keys) if bound else None


def _dict_display_keys(tokens, at: int) -> set | None:
    """The keys of the dict display (`{'k': v}`) or `dict(k=v)` call filling the
    statement from ``tokens[at]``; None for anything else."""
    if at >= len(tokens):
        return None
    if tokens[at].string == "{":
        items, end = _arguments(tokens, at), _closing(tokens, at)
        keys = set()
        for item in items:
            if len(item) < 3 or item[0].type != tokenize.STRING or item[1].string != ":" or item[0].string[:1] not in "'\"":
                return None
            keys.add(item[0].string.strip("'\""))
    elif tokens[at].string == "dict" and at + 1 < len(tokens) and tokens[at + 1].string == "(":
        call, end = _call(_arguments(tokens, at + 1)), _closing(tokens, at + 1)
        if call is None or call[0]:
            return None
        keys = set(call[1])
    else:
        return None
    return keys if end is not None and end + 1 < len(tokens) and tokens[end + 1].type == tokenize.NEWLINE else None


def _closing(tokens, open_at: int) -> int | None:
    depth = 0
    for k in range(open_at, len(tokens)):
        if tokens[k].string in ("(", "[", "{"):
            depth += 1
        elif tokens[k].string in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return k
    return None


def forget_texts() -> None:
    """Drop the parses and tokens kept per text (`analyzer.memory_budget`: they are a
    pure function of the text, and the largest thing kept besides the texts)."""
    for cached in (_top_level_statements, _string_constants, _lex):
        cached.cache_clear()
