"""The UT000 diagnostics of a file that could not be checked: unreadable, unparsable,
or a failure of untrace itself (an internal error, reported as a bug)."""

from __future__ import annotations

from analyzer.diagnostics import Diagnostic

PARSE_ERROR = "parse-error"
INTERNAL_ERROR = "internal-error"


def file_diagnostic(path: str, name: str, message: str, suggestion: str | None = None) -> Diagnostic:
    return Diagnostic(
        code="UT000",
        name=name,
        message=message,
        severity="error",
        path=path,
        line=1,
        column=1,
        end_line=1,
        end_column=1,
        suggestion=suggestion,
    )


def internal_error(path: str, error: BaseException, where: str = "the analysis") -> Diagnostic:
    detail = str(error).splitlines()[0] if str(error) else ""
    named = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return file_diagnostic(
        path,
        INTERNAL_ERROR,
        f"untrace could not analyse this file: {named} in {where}",
        "this is a bug in untrace; the other files were still checked. Please report it with the file.",
    )


def read_error(path: str, error: OSError) -> Diagnostic:
    reason = error.strerror or type(error).__name__
    return file_diagnostic(path, PARSE_ERROR, f"cannot read file: {reason}")
