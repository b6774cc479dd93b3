"""The value-kind analysis of one function body: a forward dataflow problem on the generic
engine (see `analyzer.analyses.kinds.analysis` for the equations), its control dependence, and
the final pass that emits the facts of branches, loops and escapes. What a trace never
runs is `tracing_guards` (decided tests) and `unexported` (what an export skips); what
a region writes is `region_writes`."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from analyzer.analyses.engine.cfg import Node
from analyzer.analyses.engine.dataflow import Analysis, node_uses_defs, solve
from analyzer.analyses.kinds import ranks
from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.arity import fixed_arity_iterables
from analyzer.analyses.kinds.driver import Driver
from analyzer.analyses.kinds.expressions import ExpressionEvaluator, multi_axis
from analyzer.analyses.kinds.facts import BranchFact, Fact, LoopFact, OpFact, Site, TrainingOnlyFact
from analyzer.analyses.kinds.foreign_runtimes import entered
from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.kinds.narrowing import TypeNarrowing
from analyzer.analyses.kinds.region_writes import written_names
from analyzer.analyses.kinds.shapes import rows_level
from analyzer.analyses.kinds.summaries import RETURN, Frame, Summary
from analyzer.analyses.kinds.values import DATA, MAYBE_SHARED, NONE, SHAPE, STATIC, UNKNOWN, Value, join, type_tag
from analyzer.analyses.kinds.view_bases import UnreadBases, view_base
from analyzer.analyses.ranges.keyed_ranges import KeyedCases, leaving
from analyzer.analyses.ranges.value_ranges import with_literal
from analyzer.analyses.reach.log_only import error_choices, message_choices, only_logs
from analyzer.analyses.reach.tracing_guards import TracingGuards
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names


class FunctionAnalysis(TracingGuards):
    """One function body. Statements the legacy tracer never runs for an eval-mode module
    are not evaluated at all (`dead`: what a tracing guard skips, `training_only`: what
    runs only in training); so they neither report nor bind (a flag set only under
    LayerDrop stays static). The hazards of training-only code are found by a second run
    with it live (``training_run``), which keeps only the facts found there, wrapped as
    `TrainingOnlyFact` (UT106)."""

    def __init__(self, analyzer: Driver, frame: Frame, args: dict[str, Value], training_run: bool = False):
        self.analyzer = analyzer
        self.training_run = training_run
        self.dead: set[int] = set()  # ids of statements a trace never runs
        self.training_only: set[int] = set()  # ids of statements only training runs
        self.training_tests: set[int] = set()  # ids of `if`s whose test is decided by training alone
        self._followers: dict[int, list] | None = None
        self._loss_targets: dict[str, bool] = {}  # parameter -> read only by a loss
        self.frame = frame
        # A tensor parameter's rank is a token of its own (`ranks`); what the body proves of
        # it is `rank_facts`.
        self.args = {name: replace(v, rank=ranks.absent_or(v.rank, ranks.param_token(frame.path, frame.qualname, name)))
                     if v.type == "tensor" else v for name, v in args.items()}
        self.rank_facts = ranks.RankFacts()
        self.cfg, self.unexported = analyzer.function_graph(frame.fn)
        self.region_level: dict[int, Level] = {}
        self.loop_bound: dict[int, Level] = {}
        self.loop_exit: dict[int, Level] = {}
        self.loop_exit_lines: dict[int, list[int]] = {}
        self.folded_ifs: set[int] = set()
        self._written: dict[int, set[str]] = {}
        self._solved: dict | None = None  # the solved IN states, once solved (for `_record_types`)
        self.evaluator = ExpressionEvaluator(analyzer, frame, frame.module, self)
        self.unread_bases = UnreadBases(frame.fn)
        self.narrowing = TypeNarrowing()
        self.key_cases = KeyedCases(frame.path, frame.qualname, args)  # `value_ranges` keyed on a name

    @cached_property
    def message_choices(self) -> frozenset[int]:
        """The conditional expressions that only pick a message's text (`log_only`)."""
        return message_choices(self.frame.fn)

    # ------------------------------------------------------------------ solving

    def run(self) -> Summary:
        analysis = Analysis(
            forward=True,
            bottom=dict,
            join=_join_states,
            transfer=self.transfer,
            boundary=lambda: dict(self.args),
            accumulate=True,
        )
        for _ in range(8):
            before, after = solve(self.cfg, analysis)
            if not self._update_exit_levels():
                break
        facts: list[Fact] = []
        self.evaluator.sink = facts
        self._solved = before
        for node in self.cfg.reverse_postorder():
            state = before[node.id]
            if node.kind != "entry" and not node.pred:
                state = dict(self.args)  # unreachable code: still reported, from the inputs
            if self.training_run:
                self.evaluator.sink = facts if self._in_training(node) else None
            self.transfer(node, state)
        self.evaluator.sink = None
        facts.extend(f for f in self._loop_facts() if not self.training_run or id(f.site.span) in self._training_spans())
        returns = before[self.cfg.exit.id].get(RETURN, NONE if not _has_return_value(self.frame.fn) else UNKNOWN)
        returns = ranks.resolved(returns, self.rank_facts)
        if self.training_run:
            return Summary(returns or NONE, [f if isinstance(f, TrainingOnlyFact) else TrainingOnlyFact(f.site, f)
                                             for f in facts if not isinstance(f, OpFact)])
        if self.training_only or self.training_tests:
            facts.extend(FunctionAnalysis(self.analyzer, self.frame, self.args, training_run=True).run().facts)
        return Summary(returns or NONE, facts)


    def _update_exit_levels(self) -> bool:
        """Loop exit levels from the regions around each break / return; True if any rose."""
        changed = False
        for node in self.cfg.nodes:
            if node.kind != "stmt" or not isinstance(node.stmt, (ir.Break, ir.Return)):
                continue
            loops = [i for i, r in enumerate(node.regions) if isinstance(r, ir.Loop)]
            if not loops:
                continue
            targets = loops[-1:] if isinstance(node.stmt, ir.Break) else loops
            for li in targets:
                loop = node.regions[li]
                inner = [r for r in node.regions[li + 1:] if isinstance(r, (ir.If, ir.Match))]
                level = max((self.region_level.get(id(r), STATIC) for r in inner), default=STATIC)
                if level >= SHAPE:
                    for r in inner:
                        if self.region_level.get(id(r), STATIC) >= SHAPE:
                            self.folded_ifs.add(id(r))
                    lines = self.loop_exit_lines.setdefault(id(loop), [])
                    if node.stmt.span.line not in lines:
                        lines.append(node.stmt.span.line)
                if level > self.loop_exit.get(id(loop), STATIC):
                    self.loop_exit[id(loop)] = level
                    new = max(level, self.loop_bound.get(id(loop), STATIC))
                    if new > self.region_level.get(id(loop), STATIC):
                        self.region_level[id(loop)] = new
                        changed = True
        return changed

    def _loop_facts(self) -> list[Fact]:
        facts = []
        for stmt in ir.walk_statements(self.frame.fn.body):
            if not isinstance(stmt, ir.Loop):
                continue
            bound = self.loop_bound.get(id(stmt), STATIC)
            exit_ = self.loop_exit.get(id(stmt), STATIC)
            if bound >= SHAPE or exit_ >= SHAPE:
                facts.append(LoopFact(self.site(stmt.span), stmt.kind, bound, exit_,
                                      tuple(self.loop_exit_lines.get(id(stmt), ())), self.frame.module.text(stmt.span),
                                      types=self._loop_types(stmt) if DATA in (bound, exit_) else ()))
        return facts

    def _loop_types(self, loop: ir.Loop) -> tuple[tuple[str, str], ...]:
        """The types the loop fixes need: every name and ``self.attr`` read in the loop
        and after it, as they are at the loop head (``name``) and before the loop
        (``<name``); the names it assigns as they are after it (``=name``); ``$pred`` (a `while` test, at the loop head) and ``$break`` (the test
        of an `if` in the body that breaks out)."""
        if not self._solved:
            return ()
        init = next((n for n in self.cfg.nodes if n.kind == "loop-init" and n.stmt is loop), None)
        head = self.cfg.header_of.get(id(loop))
        join_node = self.cfg.join_of.get(id(loop))
        if init is None or head is None or join_node is None:
            return ()
        ev = self.evaluator
        outer, ev.sink = ev.sink, None
        try:
            before = self._solved[init.id]
            at_head = self._solved[head.id]  # joined over the back edges: what the body's own names hold
            types: dict[str, str] = {}
            blocks = [[loop]]
            body = self.frame.fn.body
            if any(s is loop for s in body):
                blocks.append(body[[i for i, s in enumerate(body) if s is loop][0] + 1:])
            for block in blocks:
                for s in ir.walk_statements(block):
                    for e in ir.child_expressions(s):
                        for sub in ir.walk_expression(e):
                            if isinstance(sub, ir.Name) and sub.id not in types:
                                types[sub.id] = type_tag(ev.ev(sub, dict(at_head)))
                                types[f"<{sub.id}"] = type_tag(ev.ev(sub, dict(before)))
                            elif (isinstance(sub, ir.Attribute) and isinstance(sub.value, ir.Name)
                                  and sub.value.id == "self"):
                                types.setdefault(f"self.{sub.attr}", type_tag(ev.ev(sub, dict(before))))
            for name in assigned_names(loop.body):
                types.setdefault(f"<{name}", type_tag(before.get(name)))
            after = self._solved[join_node.id]
            for name in assigned_names(loop.body):
                types[f"={name}"] = type_tag(after.get(name))
            if loop.kind == "while" and loop.test is not None:
                types["$pred"] = type_tag(ev.ev(loop.test, dict(self._solved[head.id])))
            for s in loop.body:
                if isinstance(s, ir.If) and any(isinstance(b, ir.Break) for b in s.body):
                    node = self.cfg.header_of.get(id(s))
                    if node is not None:
                        types["$break"] = type_tag(ev.ev(s.test, dict(self._solved[node.id])))
                if isinstance(s, ir.If) and len(s.body) == 1 and isinstance(s.body[0], ir.Return) \
                        and s.body[0].value is not None:
                    node = self.cfg.header_of.get(id(s))
                    if node is not None:  # `if p: return e` leaving the loop: what p and e are
                        types["$exit"] = type_tag(ev.ev(s.test, dict(self._solved[node.id])))
                        types["$exit.value"] = type_tag(ev.ev(s.body[0].value, dict(self._solved[node.id])))
            following = self.frame.fn.body[[i for i, s in enumerate(body) if s is loop][0] + 1:] \
                if any(s is loop for s in body) else []
            if following and isinstance(following[0], ir.Return) and following[0].value is not None:
                types["$after.value"] = type_tag(ev.ev(following[0].value, dict(after)))
        finally:
            ev.sink = outer
        return tuple(sorted(types.items()))

    def site(self, span: ir.Span) -> Site:
        return Site(self.frame.path, function=self.frame.qualname, call_path=(self.frame.qualname,), span=span)

    def _taint_written(self, stmt, state: dict, level: Level) -> None:
        if level == STATIC:
            return
        names = self._written.get(id(stmt))
        if names is None:
            names = self._written[id(stmt)] = written_names(stmt)
        for name in names:
            if name in state:
                state[name] = state[name].tainted(level)

    def _record_types(self, stmt, state: dict, sink: list) -> None:
        """Attach to the branch fact just emitted for ``stmt`` the types the fixes need:
        every name and ``self.attr`` read in its branches and in the statements after
        it (a tail ``return`` makes them the other branch), the names it assigns as they
        are after it, and the function's result."""
        fact = sink[-1] if sink else None
        if not isinstance(fact, BranchFact) or fact.site.line != stmt.span.line:
            return
        ev = self.evaluator
        outer, ev.sink = ev.sink, None
        try:
            types: dict[str, str] = dict(fact.types)
            blocks = [stmt.body, stmt.orelse]
            body = self.frame.fn.body
            if any(s is stmt for s in body):
                blocks.append(body[[i for i, s in enumerate(body) if s is stmt][0] + 1:])
            for loop in ir.walk_statements(body):  # the iterable of a loop the `if` is the body of
                if isinstance(loop, ir.Loop) and loop.iter is not None and any(s is stmt for s in loop.body):
                    for sub in ir.walk_expression(loop.iter):
                        if isinstance(sub, ir.Name) and sub.id not in types:
                            types[sub.id] = type_tag(ev.ev(sub, dict(state)))
            for block in blocks:
                for s in ir.walk_statements(block, into_defs=True):  # nested defs: a fix made inside the branch
                    for e in ir.child_expressions(s):
                        for sub in ir.walk_expression(e):
                            if isinstance(sub, ir.Name) and sub.id not in types:
                                types[sub.id] = type_tag(ev.ev(sub, dict(state)))
                            elif (isinstance(sub, ir.Attribute) and isinstance(sub.value, ir.Name)
                                  and sub.value.id == "self"):
                                types.setdefault(f"self.{sub.attr}", type_tag(ev.ev(sub, dict(state))))
            after = self._solved[self.cfg.join_of[id(stmt)].id] if self._solved else {}
            for name in assigned_names(stmt.body) | assigned_names(stmt.orelse):
                types[f"={name}"] = type_tag(after.get(name))
            if self._solved:
                returned = self._solved[self.cfg.exit.id].get(RETURN)
                types["$return"] = type_tag(returned)
                if returned is not None and returned.type == "container" and returned.elems is not None:
                    for i, elem in enumerate(returned.elems):  # a tuple: what each of its items is
                        types[f"$return.{i}"] = type_tag(elem)
        finally:
            ev.sink = outer
        sink[-1] = replace(fact, types=tuple(sorted(types.items())))

    def _iterates_a_tensor(self, loop) -> bool:
        """`for row in x` over an assumed tensor (an un-annotated argument) is taken for a
        tensor iteration only when both are used as tensors: `row` in the body (`row.sum()`)
        and `x` in the function (`x.shape`, `x.mean(1)`, `x[:, 0]`), which a list of
        tensors (feature maps) is not."""
        if not (isinstance(loop.target, ir.Name) and isinstance(loop.iter, ir.Name)):
            return False
        return used_as_tensor(loop.target.id, loop.body) and used_as_tensor(loop.iter.id, self.frame.fn.body)

    def ctl_level(self, node: Node) -> Level:
        return max((self.region_level.get(id(r), STATIC) for r in node.regions), default=STATIC)

    def raise_region(self, stmt, level: Level) -> None:
        if level > self.region_level.get(id(stmt), STATIC):
            self.region_level[id(stmt)] = level

    # ------------------------------------------------------------------ transfer

    def transfer(self, node: Node, state: dict) -> dict:
        out = self._transfer(node, state)
        if self.key_cases.names and node.kind not in ("entry", "exit", "join"):
            self.key_cases.rebound(node, out, node_uses_defs(node)[1])  # a name bound again keys no range
        return out

    def _transfer(self, node: Node, state: dict) -> dict:
        kind = node.kind
        if kind in ("entry", "exit"):
            return state
        state = dict(state)
        if kind == "join":
            # Control dependence: after a region, what it wrote depends on its predicate.
            self._taint_written(node.stmt, state, self.region_level.get(id(node.stmt), STATIC))
            return state
        s = node.stmt
        if id(s) in self.dead or (id(s) in self.training_only and not self.training_run):
            return state  # never run by the tracer: neither reported nor bound
        self.narrowing.narrow(node, state)  # `x` inside `if isinstance(x, dict):` is a dict
        if self.key_cases.names:
            self.key_cases.narrow(node, state)  # a range keyed on `name` inside `if name == "key":`
        ev = self.evaluator
        ev.ctl = self.ctl_level(node)
        ev.unexported = id(s) in self.unexported or id(s) in self.training_only
        if kind == "if":
            if self._decide(s, state):
                return state  # decided when traced: no hazard, and one side is never run
            level = ev.predicate(s.test, state, "elif" if s.is_elif else "if", s.span,
                                 report=not only_logs(s) and id(s) not in error_choices(self.frame.fn), exits_loop=id(s) in self.folded_ifs)
            self.raise_region(s, level)
            if ev.sink and level >= DATA:
                self._record_types(s, state, ev.sink)
            return state
        if kind == "loop-init":
            if s.kind == "for":
                # An escape in a data-dependent loop head (`range(int(t))`, `groupby(t.tolist())`)
                # is a finding of its own besides the loop's, as one in a predicate is: a
                # user who ignores UT102 still sees the UT201.
                state[f"$iter{id(s)}"] = ev.ev(s.iter, state)
            return state
        if kind == "loop":
            # Values carried around the loop depend on how often it ran.
            self._taint_written(s, state, self.region_level.get(id(s), STATIC))
            self.key_cases.loop_head(s, state)
            if s.kind == "for":
                iterable = state.get(f"$iter{id(s)}", UNKNOWN)
                if iterable.type == "tensor" and not iterable.certain and self._iterates_a_tensor(s):
                    iterable = replace(iterable, certain=True)
                elem, level = ev.iterate(iterable, s.iter, "for", s.span)
                ev.bind(s.target, elem.tainted(level), state)
            else:
                level = ev.predicate(s.test, state, "while", s.span, report=False)
            if level > self.loop_bound.get(id(s), STATIC):
                self.loop_bound[id(s)] = level
            # Over a tensor's rows the passes are as many as its size: what the loop grows
            # (`out.append(row * 2)`) is as long (the iteration itself is UT105, no UT104).
            rows = rows_level(iterable) if s.kind == "for" and iterable.is_certain_tensor else STATIC
            self.raise_region(s, max(level, rows, self.loop_exit.get(id(s), STATIC)))
            return state
        if kind == "match":
            subject = ev.ev(s.subject, state)
            self.raise_region(s, max(subject.truth_level(), subject.level if subject.type != "tensor" else STATIC))
            return state
        if kind == "case":
            if node.case.guard is not None:
                self.raise_region(s, ev.predicate(node.case.guard, state, "if", node.case.guard.span, report=True))
            for name in node.case.bindings:
                state[name] = UNKNOWN
            return state
        if kind == "handler":
            if node.case.name:
                state[node.case.name] = UNKNOWN
            return state
        if kind == "with":
            for ctx, target in s.items:
                value = ev.ev(ctx, state)
                if target is not None:
                    ev.bind(target, value if value.type == "tensor" else entered(value) or UNKNOWN, state)
            return state
        self.statement(s, state)
        return state

    def _learn_rank(self, s: ir.Assign, state: dict) -> None:
        """`b, n, c = x.shape` (or `x.size()`) proves that `x` has three dimensions."""
        target = s.targets[0] if len(s.targets) == 1 else None
        if not isinstance(target, (ir.Tuple, ir.List)) or any(isinstance(e, ir.Starred) for e in target.elts):
            return
        of = s.value
        if isinstance(of, ir.Call) and not of.args and isinstance(of.func, ir.Attribute) and of.func.attr == "size":
            of = of.func.value
        elif isinstance(of, ir.Attribute) and of.attr == "shape":
            of = of.value
        else:
            return
        if isinstance(of, ir.Name):
            tensor = state.get(of.id)
            if tensor is not None and tensor.type == "tensor":
                n = len(target.elts)
                self.rank_facts.learn(tensor.rank, n)
                if tensor.rank is None:
                    state[of.id] = replace(tensor, rank=ranks.absolute(n))

    def statement(self, s, state: dict) -> None:
        ev = self.evaluator
        if isinstance(s, ir.Assign):
            ev.fixed_arity |= fixed_arity_iterables(s)
            value = ev.ev(s.value, state)
            if value.type == "tensor" and value.origin in (None, MAYBE_SHARED) and len(s.targets) == 1 and isinstance(s.targets[0], ir.Name):
                base = view_base(s.value)
                if base is not None and base != s.targets[0].id and getattr(state.get(base), "type", None) == "tensor" \
                        and s not in self.unread_bases:
                    # `v = y[0]` while `y` lives on: a write into `v` changes `y` too (UT301)
                    value = replace(value, origin="view")
            for t in s.targets:
                ev.bind(t, value, state)
            self._learn_rank(s, state)
        elif isinstance(s, ir.AugAssign):
            current = ev.ev(s.target, state)
            value = ev.binop(s.op, current, with_literal(ev.ev(s.value, state), s.value, current))
            ev.bind(s.target, value, state, augmented=True)
        elif isinstance(s, ir.ExprStmt):
            ev.ev(s.value, state)
        elif isinstance(s, ir.Return):
            value = leaving(ev.ev(s.value, state)) if s.value is not None else NONE
            state[RETURN] = join(state.get(RETURN), value.tainted(ev.ctl))
        elif isinstance(s, ir.Assert):
            ev.predicate(s.test, state, "assert", s.span, report=True)
            if s.msg is not None:
                ev.ev(s.msg, state)
        elif isinstance(s, ir.Raise):
            if s.exc is not None:
                ev.ev(s.exc, state)
        elif isinstance(s, ir.Import):
            for name, value in self.analyzer.import_bindings(s, self.frame.path):
                state[name] = value
        elif isinstance(s, ir.FunctionDef):
            state[s.name] = Value("function", ref=("nested", id(s)), elems=None)
            self.evaluator.nested[id(s)] = s
        elif isinstance(s, ir.ClassDef):
            state[s.name] = UNKNOWN
        elif isinstance(s, ir.Delete):
            for t in s.targets:
                if isinstance(t, ir.Name):
                    state.pop(t.id, None)
                else:
                    ev.ev(t, state)
        elif isinstance(s, ir.Opaque):
            for e in s.reads:
                ev.ev(e, state)


def used_as_tensor(name: str, body) -> bool:
    """Whether ``body`` uses ``name`` as only a tensor is used: a tensor attribute or
    method that Python sequences lack (`.shape`, `.sum()`), or a multi-axis index."""
    for s in ir.walk_statements(body):
        for e in ir.child_expressions(s):
            for sub in ir.walk_expression(e):
                if isinstance(sub, ir.Attribute) and isinstance(sub.value, ir.Name) and sub.value.id == name \
                        and (sub.attr in api.TENSOR_METHODS or sub.attr in api.SHAPE_ATTRIBUTES) \
                        and sub.attr not in _SEQUENCE_METHODS:
                    return True
                if isinstance(sub, ir.Subscript) and isinstance(sub.value, ir.Name) and sub.value.id == name \
                        and multi_axis(sub.index):
                    return True
    return False


_SEQUENCE_METHODS = frozenset({"index", "count", "copy"})


def _join_states(a: dict, b: dict) -> dict:
    if not a:
        return dict(b)
    if not b:
        return a
    out = dict(a)
    for k, v in b.items():
        mine = out.get(k)
        if mine is not v:
            out[k] = join(mine, v)
    return out


def _has_return_value(fn: ir.FunctionDef) -> bool:
    return any(isinstance(s, ir.Return) and s.value is not None for s in ir.walk_statements(fn.body))


