"""One generic dataflow engine over `Cfg`, and the def/use facts every analysis shares.

An analysis is its equations: a direction, a lattice (`bottom`, `join`), the boundary
value and a transfer function `node, in_state -> out_state`. `solve` iterates a worklist
in (reverse) postorder until nothing changes:

    forward:   IN[n]  = join(OUT[p] for p in pred(n));   OUT[n] = transfer(n, IN[n])
    backward:  OUT[n] = join(IN[s]  for s in succ(n));   IN[n]  = transfer(n, OUT[n])

States must be comparable with `==`, and neither `join` nor `transfer` may change the
states they are given (they return new ones). Termination is the analysis' job (finite-height
lattices or a widening in `join`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from analyzer.analyses.engine.cfg import Cfg, Node
from analyzer.frontend import ir
from analyzer.frontend.verify import target_names


@dataclass
class Analysis:
    forward: bool
    bottom: Callable[[], Any]
    join: Callable[[Any, Any], Any]
    transfer: Callable[[Node, Any], Any]
    boundary: Callable[[], Any] | None = None  # state at entry (forward) / exit (backward)
    # Join each node's new output into its previous one. For transfers that are not
    # monotone (a callee's summary can come back *lower* for higher arguments when a
    # recursion or depth cut answers first), this is what makes the iteration stop.
    accumulate: bool = False


def solve(cfg: Cfg, analysis: Analysis, max_visits: int = 200_000) -> tuple[dict[int, Any], dict[int, Any]]:
    """Returns (before, after): the state before and after each node *in execution order*
    (for a backward analysis `before[n]` is IN[n], the state at the node's start)."""
    order = cfg.reverse_postorder()
    if not analysis.forward:
        order.reverse()
    before: dict[int, Any] = {n.id: analysis.bottom() for n in cfg.nodes}
    after: dict[int, Any] = {n.id: analysis.bottom() for n in cfg.nodes}
    start = cfg.entry if analysis.forward else cfg.exit
    rank = {n.id: i for i, n in enumerate(order)}
    work = deque(order)
    queued = {n.id for n in order}
    visited: set[int] = set()
    visits = 0
    while work:
        node = work.popleft()
        queued.discard(node.id)
        visits += 1
        if visits > max_visits:
            break  # a pathological input; the states so far are a sound under-iteration
        sources = node.pred if analysis.forward else node.succ
        outs = after if analysis.forward else before
        # States are never mutated in place (transfers copy), so a node with one source
        # starts from that source's state itself: no join with bottom, no copy.
        state = analysis.boundary() if node is start and analysis.boundary is not None else None
        for src in sources:
            state = outs[src.id] if state is None else analysis.join(state, outs[src.id])
        if state is None:
            state = analysis.bottom()
        out = analysis.transfer(node, state)
        if analysis.accumulate and node.id in visited:
            out = analysis.join((after if analysis.forward else before)[node.id], out)
        visited.add(node.id)
        if analysis.forward:
            before[node.id] = state
            changed = out != after[node.id]
            after[node.id] = out
        else:
            after[node.id] = state
            changed = out != before[node.id]
            before[node.id] = out
        if changed:
            for nxt in sorted(node.succ if analysis.forward else node.pred, key=lambda n: rank.get(n.id, 0)):
                if nxt.id not in queued:
                    queued.add(nxt.id)
                    work.append(nxt)
    return before, after


# --------------------------------------------------------------------------- defs and uses


def expression_uses(expr) -> set[str]:
    """Names an expression reads, honouring the scopes of comprehensions and lambdas."""
    if expr is None:
        return set()
    if isinstance(expr, ir.Name):
        return {expr.id}
    if isinstance(expr, ir.Lambda):
        inner = expression_uses(expr.body) - {p.name for p in expr.params}
        return inner | set().union(*(expression_uses(p.default) for p in expr.params if p.default is not None)) if expr.params else inner
    if isinstance(expr, ir.Comprehension):
        bound: set[str] = set()
        used: set[str] = set()
        for i, g in enumerate(expr.generators):
            # The first iterable is evaluated in the enclosing scope.
            used |= expression_uses(g.iter) - (bound if i else set())
            bound |= target_names(g.target)
            for cond in g.ifs:
                used |= expression_uses(cond) - bound
        used |= expression_uses(expr.elt) - bound
        used |= expression_uses(expr.key) - bound
        return used
    if isinstance(expr, ir.NamedExpr):
        return expression_uses(expr.value)
    used: set[str] = set()
    for child in ir.child_expressions(expr):
        used |= expression_uses(child)
    return used


def target_uses(t) -> set[str]:
    """Names read by an assignment target (`a.b = ...` reads a; `a[i] = ...` reads a, i)."""
    if isinstance(t, ir.Name):
        return set()
    if isinstance(t, (ir.Tuple, ir.List)):
        return set().union(*(target_uses(e) for e in t.elts)) if t.elts else set()
    if isinstance(t, ir.Starred):
        return target_uses(t.value)
    return expression_uses(t)


def walrus_defs(expr) -> set[str]:
    out: set[str] = set()
    if expr is None:
        return out
    for sub in ir.walk_expression(expr):
        if isinstance(sub, ir.NamedExpr):
            out.add(sub.target.id)
    return out


def node_uses_defs(node: Node) -> tuple[set[str], set[str]]:
    """(uses, defs) of the names a CFG node reads and binds."""
    s = node.stmt
    k = node.kind
    if k in ("entry", "exit", "join") or s is None:
        return set(), set()
    if k == "if":
        return expression_uses(s.test), walrus_defs(s.test)
    if k == "loop-init":
        return (expression_uses(s.iter), walrus_defs(s.iter)) if s.kind == "for" else (set(), set())
    if k == "loop":
        if s.kind == "for":
            return target_uses(s.target), target_names(s.target)
        return expression_uses(s.test), walrus_defs(s.test)
    if k == "with":
        uses = set().union(*(expression_uses(c) | (target_uses(t) if t is not None else set()) for c, t in s.items))
        defs = set().union(*(target_names(t) for _, t in s.items if t is not None)) if s.items else set()
        return uses, defs
    if k == "match":
        return expression_uses(s.subject), set()
    if k == "case":
        return expression_uses(node.case.guard), set(node.case.bindings)
    if k == "handler":
        h = node.case
        return expression_uses(h.type), ({h.name} if h.name else set())
    if isinstance(s, ir.Assign):
        uses = expression_uses(s.value) | set().union(*(target_uses(t) for t in s.targets))
        defs = set().union(*(target_names(t) for t in s.targets)) | walrus_defs(s.value)
        return uses, defs
    if isinstance(s, ir.AugAssign):
        names = target_names(s.target)
        return expression_uses(s.value) | target_uses(s.target) | names, names
    if isinstance(s, (ir.FunctionDef, ir.ClassDef)):
        uses = set()
        for e in ir.child_expressions(s):
            uses |= expression_uses(e)
        return uses, {s.name}
    if isinstance(s, ir.Import):
        return set(), {asname or name.split(".")[0] for name, asname in s.names if name != "*"}
    if isinstance(s, ir.Delete):
        return set().union(*(target_uses(t) for t in s.targets)), set()
    uses: set[str] = set()
    defs: set[str] = set()
    for e in ir.child_expressions(s):
        uses |= expression_uses(e)
        defs |= walrus_defs(e)
    return uses, defs
