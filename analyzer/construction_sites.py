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
answer no. A type test (`isinstance(m, LayerScale)`) is not a mention: it neither builds
nor runs one."""

from __future__ import annotations

import io
import re
import tokenize


def keeps_default(calls, param: str, position: int) -> bool:
    """Whether every construction in ``calls`` (`constructions`, None when the tree's
    mentions leave it open) leaves the parameter ``param`` (positional index ``position``
    after `self`) at its default; and there is at least one."""
    return bool(calls) and all(param not in keywords and positional <= position for positional, keywords in calls)


def constructions(texts, class_name: str, bases_too: bool = False) -> list[tuple[int, frozenset]] | None:
    """(number of positional arguments, keywords) of every call of ``class_name`` in
    ``texts`` (file contents); None when a mention other than its definition and imports
    is not such a call, or a call passes `*args` / `**kwargs`. With ``bases_too`` a
    mention among the bases of a `class` statement is allowed too (the caller looks at
    the subclasses itself)."""
    mention = re.compile(r"(?<![\w.])" + re.escape(class_name) + r"\b")
    calls = []
    for text in texts:
        if not mention.search(text):
            continue
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                      if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)]
        except (tokenize.TokenError, SyntaxError):
            return None
        line_start = 0
        for i, t in enumerate(tokens):
            if t.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                line_start = i + 1
                continue
            if t.type == tokenize.STRING and t.string.lstrip("rbuRBU").strip("'\"") == class_name:
                return None  # built by its name (`__all__`, a registry, `globals()[name]`): not seen
            if t.type != tokenize.NAME or t.string != class_name:
                continue
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
            call = _call(_arguments(tokens, i + 1)) if before != "." and after == "(" else None
            if call is None:
                return None
            calls.append(call)
    return calls


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


def _call(args: list[list]) -> tuple[int, frozenset] | None:
    positional, keywords = 0, set()
    for a in args:
        if a[0].string in ("*", "**"):
            return None
        if len(a) > 1 and a[0].type == tokenize.NAME and a[1].string == "=":
            keywords.add(a[0].string)
        else:
            positional += 1
    return positional, frozenset(keywords)
