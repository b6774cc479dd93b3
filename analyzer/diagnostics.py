"""Diagnostics: the frozen records that rules produce and reporters render.

Positions are 1-based. ``end_column`` is exclusive (one past the last character),
as in ruff and SARIF's ``endColumn``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


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

    def to_dict(self) -> dict:
        data = asdict(self)
        data["call_path"] = list(self.call_path)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Diagnostic":
        fix = data.get("fix")
        if fix is not None:
            fix = Fix(fix["message"], tuple(Edit(**e) for e in fix["edits"]), fix.get("applicability", "safe"))
        return cls(**{**data, "call_path": tuple(data.get("call_path", ())), "fix": fix})

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)
