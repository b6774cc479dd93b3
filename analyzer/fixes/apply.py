"""Applying the fixes of diagnostics: to a text (`apply_fixes`), and to files (`fix_files`).

A fix is applied to exactly the text it was planned on. `run_check` keeps the sha256 of
the bytes it analysed for every file it was given; `fix_files` applies edits only to
those files, only while they still hold those bytes, and writes through
`analyzer.fixes.files.rewrite` (locked, atomic, links, mode and owner kept). Inserted
text takes the file's own newline style. Nothing here imports libcst, torch or onnx.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

from analyzer import interrupts
from analyzer.diagnostics import Diagnostic, Fix
from analyzer.fixes import files
from analyzer.lines import NEWLINE, lines_with_ends, newline_of

NOT_NAMED = "not among the files checked, not fixed"
NOT_TEXT = "cannot be decoded, not fixed"
NOT_ENCODABLE = "the fix cannot be written in the file's encoding, not fixed"


def link_out_of_tree(target: str) -> str:
    return f"a symlink to {target}, outside the folders named, not fixed (name the file itself to fix it)"


@dataclass
class FixOutcome:
    path: str
    original: str
    fixed: str
    applied: list[Diagnostic]
    status: str | None = None  # files.WRITTEN or why not; None when not asked to write

    @property
    def written(self) -> bool:
        return self.status == files.WRITTEN

    def diff(self) -> str:
        return unified_diff(self.original, self.fixed, self.path)


def unified_diff(before: str, after: str, path: str) -> str:
    """A patch that `patch`/`git apply` accept: lines split only where Python ends them
    (not at U+2028, form feeds...), and a last line without a newline marked as such."""
    out = []
    for line in difflib.unified_diff(lines_with_ends(before), lines_with_ends(after), fromfile=f"a/{path}", tofile=f"b/{path}"):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _fixable(diag: Diagnostic, unsafe: bool) -> bool:
    return diag.fix is not None and bool(diag.fix.edits) and (unsafe or diag.fix.applicability == "safe")


def apply_fixes(text: str, diagnostics: Sequence[Diagnostic], *, unsafe: bool = False) -> tuple[str, list[Diagnostic]]:
    """Apply the fixes of ``diagnostics`` to ``text``: a fix is applied whole or not at
    all, fixes whose edits overlap an earlier-accepted one are skipped (the next pass
    applies them), and edits are applied bottom-up so offsets stay valid. New lines in
    an edit take the text's newline style (``\\r\\n``, ``\\r`` or ``\\n``)."""
    lines = NEWLINE.split(text)
    starts = [0]  # offsets of line starts, honouring \r\n, \r and \n
    for match in NEWLINE.finditer(text):
        starts.append(match.end())
    newline = newline_of(text)

    def offset(line: int, column: int) -> int | None:
        if not 1 <= line <= len(starts):
            return None
        length = len(lines[line - 1]) if line - 1 < len(lines) else 0
        if not 1 <= column <= length + 1:
            return None
        return starts[line - 1] + column - 1

    accepted: list[tuple[int, int, str]] = []
    applied: list[Diagnostic] = []
    candidates = sorted((d for d in diagnostics if _fixable(d, unsafe)), key=_order)
    seen_fixes: set[Fix] = set()
    for diag in candidates:
        spans = []
        for edit in diag.fix.edits:
            start, end = offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)
            if start is None or end is None or end < start:
                spans = None
                break
            content = edit.content if newline == "\n" else NEWLINE.sub(newline, edit.content)
            spans.append((start, end, content))
        if not spans:
            continue
        if diag.fix in seen_fixes:  # the same fix reported twice (e.g. via two call paths)
            applied.append(diag)
            continue
        if any(_overlaps(s, e, a, b) for s, e, _ in spans for a, b, _ in accepted) or any(
            _overlaps(s1, e1, s2, e2) for i, (s1, e1, _) in enumerate(spans) for s2, e2, _ in spans[i + 1 :]
        ):
            continue
        accepted.extend(spans)
        seen_fixes.add(diag.fix)
        applied.append(diag)
    for start, end, content in sorted(accepted, key=lambda span: (span[0], span[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _order(diag: Diagnostic) -> tuple:
    return (diag.path, diag.line, diag.column, diag.code, diag.end_line, diag.end_column, diag.message)


def _overlaps(s1: int, e1: int, s2: int, e2: int) -> bool:
    if s1 == e1 and s2 == e2:
        return s1 == s2  # two insertions at the same point: order would be ambiguous
    return s1 < e2 and s2 < e1


def _decode(data: bytes) -> tuple[str, str, bytes]:
    """(text, encoding, BOM) of a Python source, as its declaration says."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    bom = b""
    if encoding == "utf-8-sig":
        encoding, bom, data = "utf-8", b"\xef\xbb\xbf", data[3:]
    return data.decode(encoding), encoding, bom


def fix_files(
    diagnostics: Sequence[Diagnostic],
    *,
    unsafe: bool = False,
    write: bool = True,
    sources: dict[str, str] | None = None,
    planned: dict[str, str] | None = None,
    refused: dict[str, str] | None = None,
) -> list[FixOutcome]:
    """Apply the fixes to each file or, with ``write=False``, only compute them (for
    ``--diff``). In-memory ``sources`` (stdin) are never written.

    ``planned`` maps each file the run was given to the sha256 of the bytes it analysed
    (`CheckResult.hashes`): a file not in it is not fixed (a finding can lie in a file
    the analysis only read), nor is one whose bytes changed since. Without ``planned``
    (the Python API on a list of diagnostics) the current bytes are taken as planned.
    ``refused`` maps the files the caller will not have written to why (a symlink
    leading out of the folders named): neither fixed nor shown."""
    by_path: dict[str, list[Diagnostic]] = {}
    for diag in diagnostics:
        if _fixable(diag, unsafe):
            by_path.setdefault(diag.path, []).append(diag)
    outcomes = []
    for path, diags in sorted(by_path.items()):
        if sources and path in sources:
            fixed, applied = apply_fixes(sources[path], diags, unsafe=unsafe)
            if applied and fixed != sources[path]:
                outcomes.append(FixOutcome(path, sources[path], fixed, applied))
            continue
        if refused and path in refused:
            outcomes.append(FixOutcome(path, "", "", [], refused[path]))
            continue
        outcome = _fix_file(path, diags, unsafe, write, planned)
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def _fix_file(path: str, diags: list[Diagnostic], unsafe: bool, write: bool,
              planned: dict[str, str] | None) -> FixOutcome | None:
    if planned is not None and path not in planned:
        return FixOutcome(path, "", "", [], NOT_NAMED)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return FixOutcome(path, "", "", [], files.UNREADABLE)
    digest = hashlib.sha256(data).hexdigest()
    if planned is not None and planned[path] != digest:
        return FixOutcome(path, "", "", [], files.CHANGED)
    try:
        original, encoding, bom = _decode(data)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return FixOutcome(path, "", "", [], NOT_TEXT)
    fixed, applied = apply_fixes(original, diags, unsafe=unsafe)
    if not applied or fixed == original:
        return None
    outcome = FixOutcome(path, original, fixed, applied)
    if write:
        interrupts.check()  # no fix is started after Ctrl-C, even when its first raise was lost
        try:
            outcome.status = files.rewrite(path, digest, bom + fixed.encode(encoding))
        except UnicodeEncodeError:
            outcome.status = NOT_ENCODABLE
        except OSError as error:
            outcome.status = f"cannot be written ({error.strerror or error}), not fixed"
    return outcome
