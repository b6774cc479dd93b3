"""``VerifyReport``: the result of one verify run, as data.

``to_dict()`` is the JSON contract of ``untrace verify --json`` (issue 4):
``ok``, ``n_inputs``, ``systems`` {name: {``exported``, ``error``, ``per_input``:
[{``match``, ``max_abs``, ``max_rel``, ``cosine``, ...}]}}, ``coverage`` [{``path``,
``line``, ``construct``, ``then``, ``else``, ``trip_counts``, ``covered``}],
``uncovered`` ["path:line"], ``record``; plus ``inputs``, ``divergence`` and ``search``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lowering.verification.compare import Comparison
from lowering.verification.coverage import Observation, Site, SiteCoverage
from lowering.verification.search import SearchResult


@dataclass
class InputInfo:
    index: int
    origin: str  # "given", "random" or "search"
    arguments: list[dict]  # [{name, shape, dtype}]
    eager_error: str | None = None

    def to_dict(self) -> dict:
        return {"index": self.index, "origin": self.origin, "arguments": self.arguments,
                "eager_error": self.eager_error}


@dataclass
class SystemReport:
    name: str
    exported: bool
    error: str | None
    per_input: list[Comparison]
    seconds: float = 0.0
    tracer_warnings: int = 0
    dynamic_axes: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "exported": self.exported,
            "error": self.error,
            "per_input": [c.to_dict() for c in self.per_input],
            "seconds": round(self.seconds, 3),
            "tracer_warnings": self.tracer_warnings,
        }


@dataclass
class Divergence:
    """A site where an input took another side than the traced one, and the traced
    export gave a wrong answer on that input."""

    path: str
    line: int
    construct: str
    traced: str  # what the tracing input (input 0) did there: "then", "else", "trips 3", "not reached"
    inputs: list[int]
    took: list[str]  # what each of those inputs did

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "construct": self.construct, "traced": self.traced,
                "inputs": self.inputs, "took": self.took}


@dataclass
class VerifyReport:
    ok: bool
    inputs: list[InputInfo]
    systems: dict[str, SystemReport]
    coverage: list[SiteCoverage]
    uncovered: list[str]
    divergence: list[Divergence]
    record: dict
    search: SearchResult | None = None
    observations: list[dict[Site, Observation]] = field(default_factory=list, repr=False)
    sources: list[str] = field(default_factory=list)
    has_probes: bool = False

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    @property
    def trace_diverges(self) -> bool:
        trace = self.systems.get("trace")
        return bool(trace and trace.exported and not all(c.match for c in trace.per_input))

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "n_inputs": self.n_inputs,
            "inputs": [i.to_dict() for i in self.inputs],
            "systems": {name: s.to_dict() for name, s in self.systems.items()},
            "coverage": [c.to_dict() for c in self.coverage],
            "uncovered": list(self.uncovered),
            "divergence": [d.to_dict() for d in self.divergence],
            "search": self.search.to_dict() if self.search else None,
            "record": self.record,
        }
