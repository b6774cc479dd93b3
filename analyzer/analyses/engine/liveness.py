"""Live variables.

Requires: a `Cfg`. Computes: for every node, the names live at its start and end.

    OUT[n] = U IN[s] for s in succ(n)
    IN[n]  = use(n) U (OUT[n] - def(n))

A backward may-analysis over the finite lattice of name sets.

    >>> from analyzer.frontend import parse_module
    >>> fn = parse_module("def f(x):\\n    y = x\\n    z = 1\\n    return y\\n").functions()["f"]
    >>> live = Liveness(Cfg(fn.body, fn.params))
    >>> sorted(live.live_in(live.cfg.nodes[2]))   # before `y = x`
    ['x']
"""

from __future__ import annotations

from analyzer.analyses.engine.cfg import Cfg, Node
from analyzer.analyses.engine.dataflow import Analysis, node_uses_defs, solve


class Liveness:
    def __init__(self, cfg: Cfg):
        self.cfg = cfg
        self._use_def = {n.id: node_uses_defs(n) for n in cfg.nodes}

        def transfer(node: Node, out: frozenset) -> frozenset:
            uses, defs = self._use_def[node.id]
            return frozenset(uses) | (out - defs)

        self._in, self._out = solve(cfg, Analysis(
            forward=False,
            bottom=frozenset,
            join=frozenset.union,
            transfer=transfer,
        ))

    def live_in(self, node: Node) -> frozenset:
        return self._in[node.id]

    def live_out(self, node: Node) -> frozenset:
        return self._out[node.id]
