"""Physical lines as Python counts them: ended by ``\\r\\n``, ``\\r`` or ``\\n`` only.

``str.splitlines`` also splits at form feeds, U+2028 and other separators that can sit
inside a line of Python (in a string or a comment), which shifts every line after them;
positions, fixes and diffs use these instead.
"""

from __future__ import annotations

import re

NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings (one more than its newlines)."""
    return NEWLINE.split(text)


# What `str.splitlines` splits at besides \r and \n.
_OTHER_SEPARATORS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def lines_with_ends(text: str) -> list[str]:
    """The lines of ``text`` with their endings; no empty last line."""
    if not _OTHER_SEPARATORS.search(text):
        return text.splitlines(keepends=True)  # the same lines, split in C
    lines, start = [], 0
    for match in NEWLINE.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def newline_of(text: str) -> str:
    """The newline the text uses (its first one), ``\\n`` when it has none."""
    match = NEWLINE.search(text)
    return match.group() if match else "\n"
