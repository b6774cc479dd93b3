"""One line per finding (``path:line:col: CODE message``), then the summary line."""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.diagnostics import Diagnostic
from analyzer.report import ReportContext, location, printable, summary


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    lines = [
        f"{location(d)}: {d.code}{' [*]' if context.fixable(d) else ''} {printable(d.message)}" for d in diagnostics
    ]
    lines.append(summary(diagnostics, context))
    return "\n".join(lines) + "\n"
