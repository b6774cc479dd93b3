"""Whether every call of a module class's instances in the checked tree leaves one of its
`forward`'s parameters at its default, read from the files' text (as `construction_sites`,
whose constructions it starts from).

    class EsmFoldTriangleMultiplicativeUpdate(nn.Module):
        def forward(self, z, mask=None, inplace_safe: bool = False): ...

    self.tri_mul_out = EsmFoldTriangleMultiplicativeUpdate(config, _outgoing=True)
    pairwise_state = pairwise_state + self.row_drop(self.tri_mul_out(pairwise_state, mask=tri_mask))

Every construction of the class must be bound straight to an attribute (`self.NAME =
Cls(...)`), so that its instances are reached through `.NAME` only. Then every mention of
`.NAME` in the tree's text must be a call (`.NAME(...)`, `.NAME.forward(...)`) that
passes neither that keyword nor that many positional arguments (and no `*args` or
`**kwargs`), a read of an attribute of the submodule (`.NAME.linear_z.weight`), or an
assignment to it. Anything else (`.NAME` handed on as a value, a method called on it,
`"NAME"` as a string, as `getattr` holds it) leaves the question open: the answer is
no. (The class calling `self(...)` itself is the analysis' to see: `default_flags`.) Comments and strings
are read as code, which can only make the answer no."""

from __future__ import annotations

import io
import re
import tokenize

from analyzer.construction_sites import _arguments, _call


def keeps_forward_default(texts, calls, param: str, position: int) -> bool:
    """Whether every call in ``texts`` (file contents) of the modules built by ``calls``
    (`construction_sites.constructions`) leaves ``param`` (positional index ``position``
    after `self`) at its default."""
    if not calls or any(attr is None for _, _, attr in calls):
        return False
    for attr in sorted({attr for _, _, attr in calls}):
        uses = _attribute_calls(texts, attr)
        if uses is None or any(param in keywords or positional > position for positional, keywords in uses):
            return False
    return True


def _attribute_calls(texts, attr: str) -> list[tuple[int, frozenset]] | None:
    """(positional count, keywords) of every call through `.attr` in ``texts``; None when
    a mention of it is anything but such a call, a read of its attributes or an assignment."""
    mention = re.compile(r"\.\s*" + re.escape(attr) + r"\b")
    named = re.compile(r"""['"]""" + re.escape(attr) + r"""['"]""")
    calls = []
    for text in texts:
        if attr not in text:
            continue
        if named.search(text):
            return None
        for m in mention.finditer(text):
            use = _use(text, m.end())
            if use is None:
                return None
            if use != "read":
                calls.append(use)
    return calls


def _use(text: str, end: int):
    """How the mention ending at ``end`` uses the module: "read" (an attribute of it, an
    assignment to it), the (positional, keywords) of a call, or None."""
    rest = text[end:end + 200].lstrip(" \t")
    if rest.startswith("=") and not rest.startswith("=="):
        return "read"
    if rest.startswith("("):
        return _call_at(text, end + text[end:].index("("))
    m = re.match(r"\.\s*(\w+)\s*(\(?)", rest)
    if m is None:
        return None
    if m.group(1) == "forward" and m.group(2):
        return _call_at(text, end + text[end:].index("(", text[end:].index("forward")))
    return "read" if not m.group(2) and m.group(1) not in ("forward", "__call__") else None


def _call_at(text: str, open_at: int):
    """(positional, keywords) of the call whose `(` is at ``text[open_at]``."""
    tokens, depth = [], 0
    try:
        for t in tokenize.generate_tokens(io.StringIO(text[open_at:]).readline):
            if t.type in (tokenize.NL, tokenize.COMMENT):
                continue
            tokens.append(t)
            depth += t.string in ("(", "[", "{") and t.type == tokenize.OP
            depth -= t.string in (")", "]", "}") and t.type == tokenize.OP
            if depth == 0 or t.type == tokenize.NEWLINE:
                break
    except (tokenize.TokenError, SyntaxError):
        return None
    return _call(_arguments(tokens, 0)) if depth == 0 else None
