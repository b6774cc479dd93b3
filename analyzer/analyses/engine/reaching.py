"""Reaching definitions.

Requires: a `Cfg`. Computes: for every node, the definitions `(name, node id)` that may
reach its start (parameters are defined at the entry node).

    IN[n]  = U OUT[p] for p in pred(n)
    OUT[n] = gen(n) U (IN[n] - kill(n)),  gen(n) = {(v, n) | v in def(n)},
                                          kill(n) = {(v, *) | v in def(n)}

    >>> from analyzer.frontend import parse_module
    >>> fn = parse_module("def f(c):\\n    if c:\\n        a = 1\\n    else:\\n        a = 2\\n    return a\\n").functions()["f"]
    >>> rd = ReachingDefinitions(Cfg(fn.body, fn.params))
    >>> ret = [n for n in rd.cfg.nodes if n.kind == "stmt"][-1]
    >>> sorted(line for line in rd.definition_lines(ret, "a"))
    [3, 5]
"""

from __future__ import annotations

from analyzer.analyses.engine.cfg import Cfg, Node
from analyzer.analyses.engine.dataflow import Analysis, node_uses_defs, solve


class ReachingDefinitions:
    def __init__(self, cfg: Cfg):
        self.cfg = cfg
        defs = {n.id: node_uses_defs(n)[1] for n in cfg.nodes}
        params = frozenset((p.name, cfg.entry.id) for p in cfg.params)

        def transfer(node: Node, state: frozenset) -> frozenset:
            killed = defs[node.id]
            if not killed:
                return state
            return frozenset(d for d in state if d[0] not in killed) | {(v, node.id) for v in killed}

        self._in, self._out = solve(cfg, Analysis(
            forward=True,
            bottom=frozenset,
            join=frozenset.union,
            transfer=transfer,
            boundary=lambda: params,
        ))

    def reaching(self, node: Node, name: str) -> list[Node]:
        return [self.cfg.nodes[nid] for v, nid in self._in[node.id] if v == name]

    def definition_lines(self, node: Node, name: str) -> list[int]:
        return [n.stmt.span.line if n.stmt is not None else 0 for n in self.reaching(node, name)]
