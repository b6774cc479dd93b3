"""Reporters: diagnostics -> text. One module per ``--output-format``, each with
``render(diagnostics, context) -> str``; imported only when chosen.

=========  ===========================================================================
text       ruff-like: ``path:line:col: CODE [name] message``, the source line with a
           caret under the span, ``help:`` and ``via:``; a summary line
concise    one line per finding, and the summary line
json       a list of ``Diagnostic.to_dict()`` (the DESIGN contract)
sarif      SARIF 2.1.0, with rule metadata (for GitHub code scanning)
github     GitHub Actions workflow commands (annotations on the pull request)
=========  ===========================================================================
"""

from __future__ import annotations

import importlib
import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from analyzer.diagnostics import Diagnostic

FORMATS = ("text", "concise", "json", "sarif", "github")


@dataclass
class ReportContext:
    files_checked: int = 0
    color: bool = False
    sources: dict[str, str] = field(default_factory=dict)  # in-memory files (stdin)
    fixed: int = 0  # how many findings --fix repaired
    unsafe_fixes: bool = False
    unreadable: int = 0  # directories a walk could not list (their files were not checked)
    notebooks: dict = field(default_factory=dict)  # path -> notebook.Notebook (its cells' lines)
    cwd: Path = field(default_factory=Path.cwd)
    # sha256 of the bytes each file was analysed from (`CheckResult.hashes`): a file that
    # holds other bytes now (edited while the run went on) has its lines not shown, since
    # the findings' positions are those of the text analysed
    analysed: dict[str, str] = field(default_factory=dict)
    fix_requested: bool = False  # --fix ran: what is still fixable was not applied
    changed: set[str] = field(default_factory=set)  # files found changed since analysis
    _lines: dict[str, list[str] | None] = field(default_factory=dict, repr=False)

    def lines(self, path: str) -> list[str] | None:
        """The source lines of ``path`` (from memory or disk), or ``None``: also when the
        file no longer holds the bytes analysed (then it is in `changed`)."""
        if path not in self._lines:
            import hashlib

            from analyzer.noqa import split_lines
            from analyzer.runner import decode_source

            from analyzer.files import not_regular

            text = self.sources.get(path)
            if text is None and not not_regular(path):
                try:
                    with open(path, "rb") as handle:
                        data = handle.read()
                    expected = self.analysed.get(path)
                    if expected is not None and hashlib.sha256(data).hexdigest() != expected:
                        self.changed.add(path)
                    else:
                        text = decode_source(data)
                except OSError:
                    text = None
            self._lines[path] = split_lines(text) if text is not None else None
        return self._lines[path]

    def line(self, path: str, number: int) -> str | None:
        lines = self.lines(path)
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]

    def source_line(self, diag: Diagnostic) -> str | None:
        """The line a finding starts on: in its notebook cell, or in its file."""
        if diag.cell is not None:
            notebook = self.notebooks.get(diag.path)
            return notebook.cell_line(diag.cell, diag.line) if notebook is not None else None
        return self.line(diag.path, diag.line)

    def relative_uri(self, path: str) -> str:
        """``path`` relative to the working directory with forward slashes, or an
        absolute POSIX path when it lies elsewhere."""
        absolute = Path(os.path.abspath(path))
        try:
            return PurePosixPath(absolute.relative_to(self.cwd.absolute())).as_posix()
        except ValueError:
            return absolute.as_posix()

    def fixable(self, diag: Diagnostic) -> bool:
        return diag.fix is not None and (self.unsafe_fixes or diag.fix.applicability == "safe")


def renderer(name: str):
    if name not in FORMATS:
        raise ValueError(f"unknown output format {name!r}; choose from {', '.join(FORMATS)}")
    return importlib.import_module(f"analyzer.report.{name}")


def render(name: str, diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    return renderer(name).render(list(diagnostics), context)


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural_form or word + 's')}"


def summary(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """``Found 12 hazards in 5 files (30 files checked); 1 file could not be parsed.``
    and the fix hints."""
    checked = plural(context.files_checked, "file")
    # A file that could not be parsed (UT000) is an error, not a hazard: counted apart.
    hazards = [d for d in diagnostics if d.code != "UT000"]
    unparsed = {d.path for d in diagnostics if d.code == "UT000" and d.name != "internal-error"}
    failed = {d.path for d in diagnostics if d.name == "internal-error"}
    notes = ""
    if unparsed:
        notes += f"; {plural(len(unparsed), 'file')} could not be parsed"
    if failed:
        notes += f"; {plural(len(failed), 'file')} could not be analysed (internal error)"
    if context.unreadable:
        notes += f"; {plural(context.unreadable, 'directory', 'directories')} could not be read"
    lines = []
    if context.fixed:
        lines.append(f"Fixed {plural(context.fixed, 'hazard')}.")
    if hazards:
        files = len({d.path for d in hazards})
        lines.append(f"Found {plural(len(hazards), 'hazard')} in {plural(files, 'file')} ({checked} checked){notes}.")
        fixable = sum(1 for d in diagnostics if context.fixable(d))
        if fixable and context.fix_requested:
            lines.append(f"[*] {fixable} fixable, not applied by --fix (see the warnings above).")
        elif fixable:
            lines.append(f"[*] {fixable} fixable with the `--fix` option.")
        hidden = sum(1 for d in diagnostics if d.fix is not None and not context.fixable(d))
        if hidden:
            lines.append(f"({hidden} more fixable with the `--unsafe-fixes` option.)")
    elif context.unreadable:
        lines.append(f"No hazards found in what could be read ({checked} checked){notes}.")
    else:
        lines.append(f"No hazards found ({checked} checked){notes}.")
    return "\n".join(lines)


def location(diag: Diagnostic) -> str:
    """``path:line:column``, or ``nb.ipynb:cell 3:2:9`` in a notebook (as ruff)."""
    cell = f"cell {diag.cell}:" if diag.cell is not None else ""
    return f"{printable(diag.path)}:{cell}{diag.line}:{diag.column}"


def via_paths(diag: Diagnostic) -> list[str]:
    """The call paths to show as ``via``: every one when several lead to the site, else
    the one path when it goes through a call (a site in ``forward`` itself needs none)."""
    paths = diag.all_call_paths
    if len(paths) == 1 and len(paths[0]) <= 1:
        return []
    return [" -> ".join(p) for p in paths]


# C0 and C1 control characters and DEL, and the bidirectional formatting characters
# (which reorder what a terminal shows: "Trojan Source"). Tab is shown as such in a
# source line (expanded) and escaped elsewhere.
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))} | {0x09: "\\t"}
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})
# A file name that is not UTF-8 holds its bytes as lone surrogates (surrogateescape):
# shown as the bytes they stand for, other lone surrogates as code points.
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})
_UNPRINTABLE.update({c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)})
_UNPRINTABLE_IN_LINE = {c: text for c, text in _UNPRINTABLE.items() if c != 0x09}
_UNPRINTABLE_BUT_LINES = {c: text for c, text in _UNPRINTABLE.items() if c not in (0x0A, 0x0D)}


def printable(text: str, *, keep_tabs: bool = False, keep_newlines: bool = False) -> str:
    """``text`` with the characters a terminal would act on escaped (``\x1b``), so that
    a scanned file cannot move the cursor, retitle the window or reorder the line.
    ``keep_newlines`` for a format that encodes line breaks itself (GitHub's ``%0A``)."""
    if text.isprintable():
        return text
    table = _UNPRINTABLE_IN_LINE if keep_tabs else _UNPRINTABLE_BUT_LINES if keep_newlines else _UNPRINTABLE
    return text.translate(table)


_SURROGATE = None


def json_text(text: str) -> str:
    """JSON from ``json.dumps(..., ensure_ascii=False)`` made valid UTF-8: a lone
    surrogate (from a file name that is not UTF-8) becomes its ``\\udcff`` escape,
    which JSON readers turn back into the same string."""
    global _SURROGATE
    if text.isascii():
        return text
    if _SURROGATE is None:
        import re

        _SURROGATE = re.compile("[\ud800-\udfff]")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def display_width(text: str) -> int:
    """Terminal cells taken by ``text`` (wide East Asian characters take two)."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def statistics(diagnostics: Sequence[Diagnostic], context: ReportContext) -> list[dict]:
    """Counts per code, most frequent first (then by code), as ruff's ``--statistics``."""
    counts: dict[str, dict] = {}
    for diag in diagnostics:
        entry = counts.setdefault(diag.code, {"code": diag.code, "name": diag.name, "count": 0, "fixable": False})
        entry["count"] += 1
        entry["fixable"] = entry["fixable"] or context.fixable(diag)
    return sorted(counts.values(), key=lambda e: (-e["count"], e["code"]))


def render_statistics(name: str, diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    rows = statistics(diagnostics, context)
    if name == "json":
        import json

        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    count_width = max(len(str(r["count"])) for r in rows)
    code_width = max(len(r["code"]) for r in rows)
    return "".join(
        f"{str(r['count']).rjust(count_width)}\t{r['code'].ljust(code_width)}\t{'[*]' if r['fixable'] else '[ ]'} {r['name']}\n"
        for r in rows
    )
