"""A JSON list of ``Diagnostic.to_dict()``: exactly the fields of the DESIGN contract
(code, name, message, severity, path, line, column, end_line, end_column, function,
call_path, suggestion, fix)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from analyzer.diagnostics import Diagnostic
from analyzer.report import ReportContext, json_text


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    return json_text(json.dumps([d.to_dict() for d in diagnostics], indent=2, ensure_ascii=False)) + "\n"
