"""Fork points: a data-dependent `if` whose two sides cannot be merged into one value per
name (a tensor of another rank or dtype on each side, a tensor on one side and None or
nothing on the other) is lowered by tail duplication: the code after it is lowered once
per side (`lowering.forks`). A recursive interpreter cannot capture its continuation, so
the export is lowered again, once with the `if` decided True and once False.

- An undecided lowering that meets such an `if` raises `Fork`, naming it by its ordinal
  among the data-dependent `if`s of the top-level graph (lowering is deterministic: the
  same ordinal is the same `if` in every lowering that decides the earlier ones alike).
- A decided lowering computes the condition as usual, records where the graph stands
  (`ForkPoint`), then runs only the decided side, as if the condition were that Python
  bool, and carries on.

Only an `if` of the top-level graph forks: inside a Loop body or an If branch the code
after it is part of that region, which has one body; inside a `try` with handlers or a
comprehension's filter on tensor values the code after it is not simply what follows.
"""

from __future__ import annotations

import dataclasses

from lowering.errors import LoweringError, PythonException
from lowering.graph import Value


@dataclasses.dataclass(frozen=True)
class ForkSite:
    """A data-dependent `if` of the top-level graph: its ordinal there, where it is, and
    the graph's size once its condition is computed."""

    ordinal: int
    where: tuple[str, int]
    nodes: int
    cond: str
    initializers: int


class Fork(BaseException):
    """An undecided lowering met a data-dependent `if` whose sides cannot be merged and
    whose continuation can be lowered once per side. A BaseException: no `except
    Exception` on the way out (the interpreter's own, or one it interprets) may stop it."""

    def __init__(self, site: ForkSite, reason: LoweringError):
        super().__init__(f"{site.where[0]}:{site.where[1]}: fork #{site.ordinal}")
        self.site = site
        self.reason = reason  # why the sides could not be merged


class ForkPoints:
    def fork_site(self, s, cond: Value, frame) -> ForkSite | None:
        """The fork site of a data-dependent `if` whose condition `cond` is computed, or None
        when the code after it could not be lowered once per side here."""
        if self.fork_refusal() is not None:
            return None
        self.fork_ordinal += 1
        return ForkSite(self.fork_ordinal, (frame.path, s.span.line), len(self.g.nodes), cond.name,
                        len(self.g.root._initializers))

    def follow_decision(self, site: ForkSite | None, s, frame) -> bool:
        """Run the decided side of a fork site, when this lowering decides it."""
        if site is None or site.ordinal not in self.decisions:
            return False
        self.fork_points[site.ordinal] = site
        taken = self.decisions[site.ordinal]
        if not s.synthetic:
            self.add_probe(self._probe_key(frame, s, "if", "branch"), self.g.const(int(taken)))
        self.exec_block(s.body if taken else s.orelse, frame)
        return True

    def unmerged(self, reason: LoweringError, site: ForkSite | None) -> BaseException:
        """What to raise when the sides of a data-dependent `if` cannot be merged: a Fork
        where the code after it can be lowered once per side, else the reason, saying why
        it could not be."""
        if site is not None and not isinstance(reason, PythonException):
            return Fork(site, reason)
        why = self.fork_refusal()
        if why is None:
            return reason
        return LoweringError(f"{reason.message}; the code after it cannot be lowered once per side here: {why}",
                             reason.path, reason.line, reason.construct, reason.hint)

    def fork_refusal(self) -> str | None:
        """Why the code after a data-dependent `if` here cannot be lowered once per side."""
        if self.g.parent is not None:
            region = next((f for f in reversed(self.frames) if f.region is not None), None)
            if region is None:
                return "inside a branch of a data-dependent expression"
            kind = "a graph loop" if region.region == "loop" else "a branch of a data-dependent `if`"
            where = f"line {region.region_line}" if region.path == self.location[0] else \
                f"{region.path}:{region.region_line}"
            return f"inside {kind} ({where})"
        if self._catching:
            return "inside a `try` with handlers"
        if self.conditional_element is not None:
            return f"inside a comprehension's filter on tensor values (line {self.conditional_element})"
        return None
