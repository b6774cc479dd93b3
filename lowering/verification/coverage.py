"""Branch and loop coverage from the probe outputs of an untrace ONNX model.

``lowering.export(..., probes=True)`` appends graph outputs named
``probe|<path>|<line>|<construct>|<kind>`` after the real outputs:

- kind ``branch`` (construct ``if``/``cond``/``ifexp``/...): int64, 1 = the then side
  ran, 0 = the else side ran, -1 = the ``If`` was not reached; 1-d (one entry per
  iteration) when the ``If`` sits inside a ``Loop`` body;
- kind ``trips`` (construct ``while``/``for``): the ``Loop``'s iteration count, -1 when
  not reached; 1-d inside an outer loop.

Coverage is counted per *site* = (path, line, construct); several probes on one site
(a helper called twice, an ``if`` in an unrolled ``ModuleList`` loop) are merged.

Definitions (over the inputs of one verify run):

- ``then`` / ``else`` of a branch site: the number of inputs on which at least one of
  its probe entries took that side;
- ``trip_counts`` of a loop site: the sorted distinct iteration counts seen (not-reached
  entries excluded);
- a branch site is **covered** when both ``then`` and ``else`` are > 0;
- a loop site is **covered** when at least two distinct trip counts were seen and one of
  them is > 0 (so the body ran, and the trip count really depended on the input);
- a site with both kinds of probes must meet both conditions.

What a site still needs is a list of *sides*: ``then``, ``else``, ``trips>0`` (no input
ran the body) and ``trips-other`` (only one trip count seen). Input search scores its
candidates by the sides they would add.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PROBE_PREFIX = "probe|"
BRANCH, TRIPS = "branch", "trips"
THEN, ELSE, TRIPS_POSITIVE, TRIPS_OTHER = "then", "else", "trips>0", "trips-other"

Site = tuple  # (path, line, construct)


@dataclass(frozen=True)
class Probe:
    name: str
    path: str
    line: int
    construct: str
    kind: str

    @property
    def site(self) -> Site:
        return (self.path, self.line, self.construct)


def parse_probe(name: str) -> Probe | None:
    """A probe from its output name, or None when ``name`` is not a probe."""
    if not name.startswith(PROBE_PREFIX):
        return None
    try:
        path, line, construct, kind = name[len(PROBE_PREFIX):].rsplit("|", 3)
        return Probe(name, display_path(path), int(line), construct, kind)
    except ValueError:
        return None


def display_path(path: str) -> str:
    """A path as `untrace check` spells the paths of its findings
    (`analyzer.findings.report_path`): relative to the working directory when the file is
    under it, else absolute. Whether TARGET was named `./m.py`, `m.py` or by its absolute
    path, the report is the same."""
    from analyzer.findings import report_path

    return report_path(path)


@dataclass
class Observation:
    """What one input did at one site."""

    then: bool = False
    else_: bool = False
    reached: bool = False
    trips: set = field(default_factory=set)


def observe(probes: list[Probe], values: list[np.ndarray]) -> dict[Site, Observation]:
    out: dict[Site, Observation] = {}
    for probe, value in zip(probes, values):
        obs = out.setdefault(probe.site, Observation())
        flat = np.asarray(value).astype(np.int64).ravel()
        reached = flat[flat >= 0]
        if reached.size:
            obs.reached = True
        if probe.kind == BRANCH:
            obs.then = obs.then or bool((reached == 1).any())
            obs.else_ = obs.else_ or bool((reached == 0).any())
        elif probe.kind == TRIPS:
            obs.trips.update(int(t) for t in reached)
    return out


@dataclass
class SiteCoverage:
    path: str
    line: int
    construct: str
    kinds: set = field(default_factory=set)
    then: int = 0
    else_: int = 0
    trip_counts: set = field(default_factory=set)

    @property
    def site(self) -> Site:
        return (self.path, self.line, self.construct)

    def missing(self) -> list[str]:
        sides = []
        if BRANCH in self.kinds:
            if not self.then:
                sides.append(THEN)
            if not self.else_:
                sides.append(ELSE)
        if TRIPS in self.kinds:
            if not any(t > 0 for t in self.trip_counts):
                sides.append(TRIPS_POSITIVE)
            if len(self.trip_counts) < 2:
                sides.append(TRIPS_OTHER)
        return sides

    @property
    def covered(self) -> bool:
        return not self.missing()

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "line": self.line,
            "construct": self.construct,
            "then": self.then if BRANCH in self.kinds else None,
            "else": self.else_ if BRANCH in self.kinds else None,
            "trip_counts": sorted(self.trip_counts) if TRIPS in self.kinds else None,
            "covered": self.covered,
            "missing": self.missing(),
        }


class CoverageCounter:
    """Accumulates observations input by input."""

    def __init__(self) -> None:
        self.sites: dict[Site, SiteCoverage] = {}

    def declare(self, probes: list[Probe]) -> None:
        """Sites exist from the model, even when no input reaches them."""
        for p in probes:
            site = self.sites.setdefault(p.site, SiteCoverage(p.path, p.line, p.construct))
            site.kinds.add(p.kind)

    def add(self, observations: dict[Site, Observation]) -> None:
        for key, obs in observations.items():
            site = self.sites.get(key)
            if site is None:
                continue
            site.then += obs.then
            site.else_ += obs.else_
            site.trip_counts.update(obs.trips)

    def gains(self, observations: dict[Site, Observation]) -> list[tuple[Site, str]]:
        """The missing sides that these observations would cover."""
        found = []
        for key, obs in observations.items():
            site = self.sites.get(key)
            if site is None:
                continue
            for side in site.missing():
                if hits(side, obs, site):
                    found.append((key, side))
        return found

    def entries(self) -> list[SiteCoverage]:
        return sorted(self.sites.values(), key=lambda s: (s.path, s.line, s.construct))

    def missing_sides(self) -> list[tuple[Site, str]]:
        return [(s.site, side) for s in self.entries() for side in s.missing()]

    def uncovered(self) -> list[str]:
        return [f"{s.path}:{s.line}" for s in self.entries() if not s.covered]


def hits(side: str, obs: Observation, site: SiteCoverage) -> bool:
    if side == THEN:
        return obs.then
    if side == ELSE:
        return obs.else_
    if side == TRIPS_POSITIVE:
        return any(t > 0 for t in obs.trips)
    if side == TRIPS_OTHER:
        return bool(obs.trips - site.trip_counts)
    return False
