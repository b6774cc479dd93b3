"""Whether CPython might refuse a text libcst accepted for one of CPython's own limits.

    may_exceed_cpython_limits(text) -> bool

CPython's tokenizer refuses more than 200 nested brackets ("too many nested
parentheses") and more than 100 levels of indentation ("too many levels of
indentation"); libcst has neither limit (and its native parser crashes on a few
thousand nested brackets), and a file CPython refuses is one nobody can import. The
screen that decides it is `nesting.Scan`, which also bounds how deep the text nests,
before libcst reads it; it is sound: when it says False, CPython's tokenizer cannot hit
either limit.

- Indentation: each level has at least one more whitespace character than the one
  around it (CPython compares the tab-as-one-column widths too), so 100 levels need a
  line that starts with 100 of them.
- Brackets: with strings and comments removed (an f-string's fields kept), the scan
  replaces the innermost bracket pairs pass after pass: each pass takes one level off
  every nest, so the number of passes is the greatest depth. Brackets that do not
  balance once strings are gone are read the way CPython does: it is asked.
"""

from __future__ import annotations

from analyzer.frontend.nesting import Scan


def may_exceed_cpython_limits(text: str) -> bool:
    """False only when CPython's tokenizer cannot refuse ``text`` for nesting brackets or
    indentation too deep (see the module doc)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return Scan(text).cpython_may_refuse
