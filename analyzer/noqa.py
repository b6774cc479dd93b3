"""``# noqa`` suppression, with ruff's semantics.

A ``# noqa`` comment on the *first* line of a diagnostic's span suppresses it:

- ``# noqa`` (bare) suppresses every code on that line;
- ``# noqa: UT101`` / ``# noqa: UT101, UT2`` / ``# noqa:UT101 UT102`` suppress the listed
  codes, or codes that start with a listed prefix;
- the comment is case-insensitive, may share the line with other comments
  (``# type: ignore  # noqa: UT101``), and must be a real comment, not text in a string.
"""

from __future__ import annotations

from analyzer.lines import split_lines  # noqa: F401 - used by the reporters

import io
import re
import tokenize
from collections.abc import Iterable, Sequence

from analyzer.diagnostics import Diagnostic

_NOQA = re.compile(
    r"#\s*noqa(?![\w-])(?P<sep>\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)?)?",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")

ALL = None  # a bare noqa: every code


def parse_noqa(comment: str) -> frozenset[str] | None | bool:
    """The codes a comment suppresses: ``None`` for all, a set of codes/prefixes, or
    ``False`` when the comment has no noqa directive."""
    match = _NOQA.search(comment)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return ALL  # `# noqa` or `# noqa:` with nothing usable after it (flake8 does the same)
    return frozenset(c.upper() for c in _CODE.findall(codes))


def _comments_by_line(text: str) -> dict[int, str] | None:
    """Line -> comment text, from the tokenizer (so strings that contain ``# noqa`` do
    not count). ``None`` when the file does not tokenize."""
    comments: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return comments




def _suppressed(code: str, directive) -> bool:
    if directive is ALL:
        return True
    return any(code.startswith(c) for c in directive)


def filter_noqa(diagnostics: Sequence[Diagnostic], text_for: "callable") -> list[Diagnostic]:
    """Drop the diagnostics suppressed by a ``# noqa`` on their first line.

    ``text_for(path)`` returns the decoded source of ``path`` or ``None``.
    """
    if not diagnostics:
        return []
    kept = []
    lines_cache: dict[str, list[str] | None] = {}
    comments_cache: dict[str, dict[int, str] | None] = {}
    for diag in diagnostics:
        if diag.path not in lines_cache:
            text = text_for(diag.path)
            lines_cache[diag.path] = split_lines(text) if text is not None else None
        lines = lines_cache[diag.path]
        if lines is None or not (1 <= diag.line <= len(lines)):
            kept.append(diag)
            continue
        line = lines[diag.line - 1]
        if "#" not in line or parse_noqa(line) is False:
            kept.append(diag)
            continue
        # A candidate: confirm it is a real comment, not text inside a string.
        if diag.path not in comments_cache:
            comments_cache[diag.path] = _comments_by_line(text_for(diag.path) or "")
        comments = comments_cache[diag.path]
        comment = line if comments is None else comments.get(diag.line, "")
        directive = parse_noqa(comment)
        if directive is not False and _suppressed(diag.code, directive):
            continue
        kept.append(diag)
    return kept


def noqa_codes(lines: Iterable[str]) -> dict[int, frozenset[str] | None]:
    """Every noqa directive in ``lines``: line number -> codes (None for all)."""
    found = {}
    for number, line in enumerate(lines, 1):
        directive = parse_noqa(line)
        if directive is not False:
            found[number] = directive
    return found
