"""Coverage probes (`export(probes=True)`): 1-d int64 vectors recorded in the current
graph, taken out of If branches and Loop bodies by their emitters."""

from __future__ import annotations

import torch

from lowering.graph import GraphBuilder, Value
from lowering.interp.values import Frame


class CoverageProbes:
    def _branch_probes(self, graphs) -> list[str]:
        """Yield each branch's probes from the If; a side that never reaches a probe
        yields [-1] for it."""
        per_branch = [dict(self.take_probes(sub)) for sub in graphs]
        keys = list(dict.fromkeys(k for probes in per_branch for k in probes))
        lengths = {}
        for key in keys:
            sizes = {p[key].shape[0] if p[key].shape and isinstance(p[key].shape[0], int) else None
                     for p in per_branch if key in p}
            lengths[key] = sizes.pop() if len(sizes) == 1 else None
        for sub, probes in zip(graphs, per_branch):
            saved, self.g = self.g, sub
            try:
                for key in keys:
                    value = probes.get(key)
                    if value is None:
                        # Not reached on this side: -1 per entry the other side records, so a
                        # Loop's per-iteration probe vectors keep one length.
                        value = self.g.const([-1] * (lengths[key] or 1), dtype=torch.int64)
                    sub.add_output(value, shape=(lengths[key],))
            finally:
                self.g = saved
        return keys

    def _probe_key(self, frame: Frame, node, construct: str, kind: str) -> str:
        return f"probe|{frame.path}|{node.span.line}|{construct}|{kind}"

    def add_probe(self, key: str, value: Value) -> None:
        """Record a coverage probe (`export(probes=True)`): a 1-d int64 vector in the
        current graph; taken out of If branches and Loop bodies by their emitters."""
        if not self.probes_enabled:
            return
        v = self.g.cast(value, torch.int64)
        v = self.g.op("Reshape", v, self.g.const([-1], dtype=torch.int64))
        self._probes.setdefault(id(self.g), []).append((key, v))

    def take_probes(self, builder: GraphBuilder) -> list[tuple[str, Value]]:
        """The probes recorded in `builder`, one 1-d vector per key (repeats concatenated)."""
        merged: dict[str, list[Value]] = {}
        for key, v in self._probes.pop(id(builder), []):
            merged.setdefault(key, []).append(v)
        saved, self.g = self.g, builder
        try:
            return [(k, vs[0] if len(vs) == 1 else self.g.op("Concat", *vs, axis=0)) for k, vs in merged.items()]
        finally:
            self.g = saved
