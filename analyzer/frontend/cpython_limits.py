"""Whether CPython might refuse a text libcst accepted for one of CPython's own limits.

    may_exceed_cpython_limits(text) -> bool

CPython's tokenizer refuses more than 200 nested brackets ("too many nested
parentheses") and more than 100 levels of indentation ("too many levels of
indentation"); libcst has neither limit, and a file CPython refuses is one nobody can
import, so `parse_module` reports it as UT000. Asking CPython costs a parse into Python
`ast` objects (a tenth of libcst's time, on every file). This screen costs a few regular
expression passes, and is sound: when it says False, CPython's tokenizer cannot hit
either limit. When it says True (a deep file, or one it cannot read) CPython is asked.

- Indentation: each level has at least one more whitespace character than the one
  around it (CPython compares the tab-as-one-column widths too), so 100 levels need a
  line that starts with 100 of them.
- Brackets: strings and comments removed, what is left is reduced by removing adjacent
  matching pairs: each pass takes one level off every nest, so the number of passes is
  the greatest depth. An f-string's expressions go with its string; CPython 3.11 parses
  them apart, counting their brackets from the start again.
"""

from __future__ import annotations

import re

# Well under CPython's 200 and 100: the screen asks CPython long before either.
MAX_DEPTH = 150
_DEEP_INDENT = re.compile(r"^[ \t\f]{90}", re.MULTILINE)  # lines end in "\n" (or "\r\n")
_DEEP_INDENT_CR = re.compile(r"(?:^|[\r\n])[ \t\f]{90}")  # slower: for lines that end in a lone "\r"

# Strings (with any prefix, which stays behind as a name) and comments, in the order a
# tokenizer meets them: the leftmost match is the token that starts there.
_STRING_OR_COMMENT = re.compile(
    r"#[^\r\n]*"
    r"|'''(?:\\[\s\S]|[^\\])*?'''"
    r'|"""(?:\\[\s\S]|[^\\])*?"""'
    r"|'(?:\\[\s\S]|[^\\'\r\n])*'"
    r'|"(?:\\[\s\S]|[^\\"\r\n])*"'
)
_NOT_BRACKET = re.compile(r"[^()\[\]{}]+")
_INNERMOST_PAIR = re.compile(r"\(\)|\[\]|\{\}")


def may_exceed_cpython_limits(text: str) -> bool:
    """False only when CPython's tokenizer cannot refuse ``text`` for nesting brackets or
    indentation too deep (see the module doc)."""
    if (_DEEP_INDENT_CR if "\r" in text else _DEEP_INDENT).search(text):
        return True
    brackets = _NOT_BRACKET.sub("", _STRING_OR_COMMENT.sub("", text))
    for _ in range(MAX_DEPTH):
        if not brackets:
            return False
        reduced = _INNERMOST_PAIR.sub("", brackets)
        if len(reduced) == len(brackets):
            return True  # unbalanced once strings are gone: read it the way CPython does
        brackets = reduced
    return True
