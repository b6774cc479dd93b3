"""``untrace verify --json``: ``VerifyReport.to_dict()`` as JSON, written atomically."""

from __future__ import annotations

import json

from lowering.verification.report import VerifyReport


def dumps(report: VerifyReport) -> str:
    return json.dumps(report.to_dict(), indent=2, allow_nan=False, default=str) + "\n"


def write(report: VerifyReport, path: str) -> None:
    """Where a shell redirection would write, a regular file atomically."""
    from analyzer.outputs import write_output

    write_output(path, dumps(report).encode("utf-8"))
