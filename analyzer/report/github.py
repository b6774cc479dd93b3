"""GitHub Actions workflow commands: each finding becomes an annotation on the diff.

    ::error file=model.py,line=12,col=9,endLine=12,endColumn=20,title=UT101 data-dependent-branch::message

Values are escaped as the Actions toolkit does (``%``, CR and LF everywhere; ``:`` and
``,`` in properties too).
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.diagnostics import Diagnostic
from analyzer.report import ReportContext, printable, via_paths


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    lines = []
    for d in diagnostics:
        level = "warning" if d.severity == "warning" else "error"
        where = [("file", printable(context.relative_uri(d.path)))]
        if d.cell is None:
            where += [("line", d.line), ("col", d.column), ("endLine", d.end_line), ("endColumn", d.end_column)]
        properties = ",".join(
            f"{key}={_property(str(value))}" for key, value in (*where, ("title", f"{d.code} {d.name}"))
        )
        # a line of a notebook's JSON is not a line of its cell: the cell is in the message
        # the file's control characters escaped (`\x1b`): workflow logs are terminals too
        message = printable(d.message, keep_newlines=True) if d.cell is None else f"cell {d.cell}, line {d.line}: {printable(d.message, keep_newlines=True)}"
        if d.suggestion:
            message += f"\nhelp: {printable(d.suggestion, keep_newlines=True)}"
        for path in via_paths(d):
            message += f"\nvia: {printable(path)}"
        lines.append(f"::{level} {properties}::{_data(message)}")
    return "".join(line + "\n" for line in lines)
