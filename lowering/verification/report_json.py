"""``untrace verify --json``: ``VerifyReport.to_dict()`` as JSON, written atomically."""

from __future__ import annotations

import json
import os
import tempfile

from lowering.verification.report import VerifyReport


def dumps(report: VerifyReport) -> str:
    return json.dumps(report.to_dict(), indent=2, allow_nan=False, default=str) + "\n"


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees a half-written file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".untrace-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write(report: VerifyReport, path: str) -> None:
    write_atomic(path, dumps(report))
