"""The default, ruff-like format: where, what, the line with a caret, what to do.

    model.py:12:9: UT101 [data-dependent-branch] branch on tensor data: `x.sum() > 0`
       |
    12 |         if x.sum() > 0:
       |            ^^^^^^^^^^^
       |
       = help: rewrite with torch.where(...) or torch.cond(...)
       = via: Net.forward -> Net.gate

    Found 1 hazard in 1 file (3 files checked).

Colour (rich markup) only when the caller says the output is a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.diagnostics import Diagnostic
from analyzer.report import ReportContext, display_width, location, printable, summary, via_paths

TAB_WIDTH = 4
MAX_LINE = 160  # longer source lines are shown as a window around the span


class _Style:
    def __init__(self, color: bool):
        self.color = color
        if color:
            from rich.markup import escape

            self.escape = escape
        else:
            self.escape = lambda text: text

    def __call__(self, text: str, style: str) -> str:
        text = self.escape(text)
        return f"[{style}]{text}[/]" if self.color and style and text else text


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    style = _Style(context.color)
    blocks = [render_one(diag, context, style) for diag in diagnostics]
    out = "\n".join(blocks)
    return out + ("\n" if out else "") + style(summary(diagnostics, context), "bold") + "\n"


def render_one(diag: Diagnostic, context: ReportContext, style: _Style | None = None) -> str:
    style = style or _Style(False)
    fix_mark = " " + style("[*]", "cyan") if context.fixable(diag) else ""
    head = (
        style(f"{location(diag)}:", "bold")
        + " "
        + style(diag.code, "bold red")
        + fix_mark
        + " "
        + style(f"[{diag.name}]", "dim")
        + " "
        + style(printable(diag.message), "")
    )
    lines = [head]
    snippet = _snippet(diag, context)
    notes = []
    if diag.suggestion:
        notes.append(("help", printable(diag.suggestion)))
    notes.extend(("via", printable(path)) for path in via_paths(diag))
    if snippet is not None:
        number, shown, caret_at, caret_len = snippet
        gutter = " " * len(str(number))
        bar = style("|", "blue")
        lines.append(f"{gutter} {bar}")
        lines.append(f"{style(str(number), 'blue')} {bar} {style(shown, '')}".rstrip())
        lines.append(f"{gutter} {bar} {' ' * caret_at}{style('^' * caret_len, 'bold red')}")
        if notes:
            lines.append(f"{gutter} {bar}")
        for label, text in notes:
            lines.append(f"{gutter} {style('=', 'blue')} {style(label + ':', 'bold')} {style(text, '')}")
    else:
        if diag.path in context.changed:
            notes.append(("note", "the file changed since it was analysed; its lines are not shown"))
        for label, text in notes:
            lines.append(f"  {style(label + ':', 'bold')} {style(text, '')}")
    return "\n".join(lines) + "\n"


def _snippet(diag: Diagnostic, context: ReportContext) -> tuple[int, str, int, int] | None:
    """(line number, line as displayed, caret offset, caret length) or None."""
    line = context.source_line(diag)
    if line is None or not line.strip():
        return None
    line = line.rstrip()
    start = min(max(0, diag.column - 1), len(line))
    end = diag.end_column - 1 if diag.end_line == diag.line else len(line)
    end = min(max(end, start + 1), max(len(line), start + 1))
    head = tail = ""
    left, right = 0, len(line)
    if display_width(line) > MAX_LINE:
        # a window around the span, so a 1 MB one-line file does not flood the terminal
        left = max(0, start - 40)
        right = min(len(line), left + MAX_LINE)
        head = "…" if left > 0 else ""
        tail = "…" if right < len(line) else ""
    # control characters of the file are shown escaped (`\x1b`), and measured so
    prefix = head + printable(line[left:start], keep_tabs=True)
    span = printable(line[start : max(start + 1, min(end, right))], keep_tabs=True)
    shown = (head + printable(line[left:right], keep_tabs=True) + tail).expandtabs(TAB_WIDTH)
    caret_at = display_width(prefix.expandtabs(TAB_WIDTH))
    caret_len = max(1, display_width(_expand_from(prefix, span)))
    return diag.line, shown, caret_at, caret_len


def _expand_from(prefix: str, span: str) -> str:
    """``span`` with its tabs expanded as they appear after ``prefix``."""
    whole = (prefix + span).expandtabs(TAB_WIDTH)
    return whole[len(prefix.expandtabs(TAB_WIDTH)) :]
