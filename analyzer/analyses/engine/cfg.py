"""Control-flow graph of one function body, built from the structured IR.

Requires: an `ir.FunctionDef` (or a statement list). Computes: `Cfg` with one node per
simple statement, one *header* node per `if` / loop / `with` / `match` head (which is
where the head's expressions are evaluated), explicit *join* nodes after each region,
and `entry` / `exit`. Each node records `regions`: the enclosing `If` / `Loop` / `Match`
statements whose predicate decides whether the node runs (the structural control
dependences), which the value-kind analysis uses to taint values assigned under a
data-dependent branch.

Edges: `break` -> the loop's join, `continue` -> the loop's header, `return` / `raise`
-> exit, a `try` body's every node -> each handler (any statement may raise).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.frontend import ir


@dataclass(eq=False)
class Node:
    id: int
    kind: str  # "entry" | "exit" | "stmt" | "if" | "loop-init" | "loop" | "with" | "match" | "case" | "join" | "handler"
    stmt: object = None  # the IR statement (header nodes: the compound statement)
    regions: tuple = ()  # enclosing control statements, outermost first
    succ: list["Node"] = field(default_factory=list)
    pred: list["Node"] = field(default_factory=list)
    case: object = None  # MatchCase for "case" nodes, Handler for "handler" nodes

    def __repr__(self) -> str:
        line = getattr(self.stmt, "span", None)
        return f"<{self.kind}#{self.id} L{line.line if line else '-'}>"


class Cfg:
    def __init__(self, body: list[ir.Stmt], params: list[ir.Param] = ()):
        self.nodes: list[Node] = []
        self.params = list(params)
        self._loops: list[tuple[Node, Node]] = []  # (header, join) of enclosing loops
        self._handlers: list[list[Node]] = []
        self.entry = self._new("entry")
        self.exit = self._new("exit")
        self.join_of: dict[int, Node] = {}  # id(compound stmt) -> its join node
        self.header_of: dict[int, Node] = {}  # id(compound stmt) -> its header node
        self._order: list[Node] | None = None
        last = self._block(body, [self.entry], ())
        for n in last:
            self._edge(n, self.exit)

    # ----------------------------------------------------------------- construction

    def _new(self, kind, stmt=None, regions=(), case=None) -> Node:
        node = Node(len(self.nodes), kind, stmt, regions, case=case)
        self.nodes.append(node)
        if self._handlers and kind not in ("entry", "exit", "join"):
            for handler in self._handlers[-1]:
                self._edge(node, handler)
        return node

    @staticmethod
    def _edge(a: Node, b: Node) -> None:
        if b not in a.succ:
            a.succ.append(b)
            b.pred.append(a)

    def _link(self, preds: list[Node], node: Node) -> None:
        for p in preds:
            self._edge(p, node)

    def _block(self, body, preds: list[Node], regions: tuple) -> list[Node]:
        for stmt in body:
            preds = self._stmt(stmt, preds, regions)
        return preds

    def _stmt(self, s, preds, regions) -> list[Node]:
        if isinstance(s, ir.If):
            head = self._new("if", s, regions)
            self.header_of[id(s)] = head
            self._link(preds, head)
            inner = regions + (s,)
            out = self._block(s.body, [head], inner) + self._block(s.orelse, [head], inner)
            join = self._new("join", s, regions)
            self.join_of[id(s)] = join
            self._link(out, join)
            return [join]
        if isinstance(s, ir.Loop):
            init = self._new("loop-init", s, regions)
            self._link(preds, init)
            head = self._new("loop", s, regions)
            self.header_of[id(s)] = head
            self._edge(init, head)
            join = self._new("join", s, regions)
            self.join_of[id(s)] = join
            self._loops.append((head, join))
            body_end = self._block(s.body, [head], regions + (s,))
            self._loops.pop()
            self._link(body_end, head)
            # The else block runs when the loop ends without break.
            else_end = self._block(s.orelse, [head], regions + (s,))
            self._link(else_end, join)
            return [join]
        if isinstance(s, ir.With):
            head = self._new("with", s, regions)
            self._link(preds, head)
            return self._block(s.body, [head], regions)
        if isinstance(s, ir.Try):
            handlers = [self._new("handler", s, regions, case=h) for h in s.handlers]
            self._handlers.append(handlers)
            body_end = self._block(s.body, preds, regions)
            self._handlers.pop()
            if not s.handlers:
                body_end = body_end  # try/finally: the body falls through to finally
            else:
                # Entering the try may raise at once: handlers are reachable from preds.
                for h in handlers:
                    self._link(preds, h)
            else_end = self._block(s.orelse, body_end, regions)
            handler_ends = [n for h, hd in zip(s.handlers, handlers) for n in self._block(h.body, [hd], regions)]
            return self._block(s.finalbody, else_end + handler_ends, regions)
        if isinstance(s, ir.Match):
            head = self._new("match", s, regions)
            self.header_of[id(s)] = head
            self._link(preds, head)
            ends = []
            for case in s.cases:
                node = self._new("case", s, regions + (s,), case=case)
                self._edge(head, node)
                ends += self._block(case.body, [node], regions + (s,))
            join = self._new("join", s, regions)
            self.join_of[id(s)] = join
            self._link(ends + [head], join)  # no case may match
            return [join]
        node = self._new("stmt", s, regions)
        self._link(preds, node)
        if isinstance(s, ir.Break):
            if self._loops:
                self._edge(node, self._loops[-1][1])
            return []
        if isinstance(s, ir.Continue):
            if self._loops:
                self._edge(node, self._loops[-1][0])
            return []
        if isinstance(s, (ir.Return, ir.Raise)):
            self._edge(node, self.exit)
            return []
        return [node]

    # ----------------------------------------------------------------- queries

    def reverse_postorder(self) -> list[Node]:
        """Every node, entry first and each before its successors except along back
        edges; unreachable nodes last. Computed once (a graph is not changed once built)."""
        if self._order is None:
            self._order = self._reverse_postorder()
        return list(self._order)

    def _reverse_postorder(self) -> list[Node]:
        seen: set[int] = set()
        order: list[Node] = []
        stack = [(self.entry, iter(self.entry.succ))]
        seen.add(self.entry.id)
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                order.append(node)
            elif nxt.id not in seen:
                seen.add(nxt.id)
                stack.append((nxt, iter(nxt.succ)))
        order.reverse()
        rest = [n for n in self.nodes if n.id not in seen]  # unreachable code still gets facts
        return order + rest

    def to_networkx(self):
        import networkx as nx

        g = nx.DiGraph()
        for n in self.nodes:
            g.add_node(n.id, kind=n.kind, line=getattr(getattr(n.stmt, "span", None), "line", None))
        for n in self.nodes:
            for s in n.succ:
                g.add_edge(n.id, s.id)
        return g
