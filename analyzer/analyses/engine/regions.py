"""Region results: fills `If.results` and `Loop.carried` (the MLIR `scf` view).

Requires: a function's IR and its `Liveness`. Computes, in place:

    If.results   = (assigned(then) U assigned(else)) ∩ live-in(join after the if)
    Loop.carried = assigned(body) ∩ (live-in(loop header) U live-in(join after the loop))

    >>> from analyzer.frontend import parse_module
    >>> fn = parse_module("def f(x, c):\\n    if c:\\n        y = x\\n        t = 1\\n    else:\\n        y = 2\\n    return y\\n").functions()["f"]
    >>> _ = annotate_regions(fn)
    >>> fn.body[0].results
    ('y',)
"""

from __future__ import annotations

from analyzer.analyses.engine.cfg import Cfg
from analyzer.analyses.engine.liveness import Liveness
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names, target_names


def annotate_regions(fn: ir.FunctionDef) -> Liveness:
    cfg = Cfg(fn.body, fn.params)
    live = Liveness(cfg)
    for stmt in ir.walk_statements(fn.body):
        if isinstance(stmt, ir.If):
            after = live.live_in(cfg.join_of[id(stmt)])
            stmt.results = tuple(sorted((assigned_names(stmt.body) | assigned_names(stmt.orelse)) & after))
        elif isinstance(stmt, ir.Loop):
            header = live.live_in(cfg.header_of[id(stmt)])
            after = live.live_in(cfg.join_of[id(stmt)])
            assigned = assigned_names(stmt.body)
            if stmt.target is not None:
                assigned -= target_names(stmt.target) - header
            stmt.carried = tuple(sorted(assigned & (header | after)))
    return live
