"""Diagnostics: the frozen records that rules produce and reporters render.

Positions are 1-based. ``end_column`` is exclusive (one past the last character),
as in ruff and SARIF's ``endColumn``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

# A path inside a message or suggestion ("... at models.py:8") is written as its
# absolute path between two of these, and spelled when the finding is reported
# (`analyzer.findings.reported`), as the finding's own path is: relative to the working
# directory when under it, else absolute. Spelled at analysis time, it would follow how
# the file was named on the command line (`./x.py`, `x.py`, `$PWD/x.py`), and a cached
# message would keep the working directory of the run that cached it.
PATH_MARK = "\x1e"
NOT_PATHS = ("-", "<stdin>", "<string>")  # names of sources that are not files


def path_ref(path: str) -> str:
    """``path`` as a message holds it (see `PATH_MARK`); a name that is not a path as it is."""
    if path in NOT_PATHS:
        return path
    return f"{PATH_MARK}{os.path.abspath(path)}{PATH_MARK}"


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``[line:column, end_line:end_column)`` of the file by ``content``."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    message: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"  # "safe" | "unsafe"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    name: str
    message: str
    severity: str  # "error" | "warning"
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    function: str | None = None
    call_path: tuple[str, ...] = field(default_factory=tuple)
    suggestion: str | None = None
    fix: Fix | None = None
    # Every call path from a `forward` that reaches the site, shortest first (then in
    # order): one finding per site however many ways lead to it. ``call_path`` is the
    # first of them. Empty when the finding was never merged: then it is ``call_path``.
    call_paths: tuple[tuple[str, ...], ...] = ()
    # In a notebook: the cell (1-based among all its cells); `line`/`end_line` are then
    # lines of that cell, as ruff reports them. None in a Python file.
    cell: int | None = None

    @property
    def all_call_paths(self) -> tuple[tuple[str, ...], ...]:
        if self.call_paths:
            return self.call_paths
        return (self.call_path,) if self.call_path else ()

    def to_dict(self) -> dict:
        data = asdict(self)
        del data["call_paths"], data["cell"]
        out = {}
        for key, value in data.items():
            out[key] = value
            if key == "path":
                out["cell"] = self.cell
            elif key == "call_path":
                out["call_path"] = list(self.call_path)
                out["call_paths"] = [list(p) for p in self.all_call_paths]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Diagnostic":
        fix = data.get("fix")
        if fix is not None:
            fix = Fix(fix["message"], tuple(Edit(**e) for e in fix["edits"]), fix.get("applicability", "safe"))
        call_path = tuple(data.get("call_path", ()))
        call_paths = tuple(tuple(p) for p in data.get("call_paths", ()))
        if call_paths == ((call_path,) if call_path else ()):
            call_paths = ()  # what `to_dict` writes for a finding never merged
        return cls(**{**data, "call_path": call_path, "call_paths": call_paths, "fix": fix})

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)
