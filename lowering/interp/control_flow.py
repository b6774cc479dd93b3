"""Control flow: a known predicate picks its branch, a known iterable unrolls; a graph
predicate emits an ONNX `If` (outputs: the region's results, assigned in either branch ∩
live after), a graph trip count or condition a `Loop` (carried: the region's carried
set; lists appended to become scan outputs). Also the expression-level Ifs (ternary,
torch.cond, a ModuleList indexed by data) and the coverage probes."""

from __future__ import annotations

import torch

from analyzer.frontend import ir
from analyzer.frontend.structure import RET, RETVAL
from lowering.errors import LoweringError, PythonException
from lowering.graph import GraphBuilder, Value
from lowering.interp.containers import _copy_containers, _mutated_containers, _rows_of
from lowering.interp.values import (MISSING, EarlierIterations, Frame, GraphChoice, GraphRange, Maybe, MoreOutputs,
                                    Stacked,
                                    _align_maybe, _chunks, _common_shape, _contains_graph, _describe, _flatten,
                                    _is_int_like, _Missing, _rank_only, _same, _ShapeChanges, _spec_without_maybe,
                                    _starts_with, _unflatten, _zero_tensor)


MAX_UNROLL = 10_000
_MAX_ATTEMPTS = 16  # a region is emitted again when a shape changes or a nonlocal name must be carried


def _is_python_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class ControlFlow:
    def _stmt_If(self, s, frame):
        test = self.test_value(self.eval(s.test, frame))
        if isinstance(test, Value):
            self.emit_if(s, test, frame)
        elif self.truth(test):
            self.exec_block(s.body, frame)
        else:
            self.exec_block(s.orelse, frame)

    def _stmt_Loop(self, s, frame):
        if s.kind == "for":
            iterable = self.eval(s.iter, frame)
            if isinstance(iterable, GraphRange):
                self.emit_loop(s, frame, trip=iterable)
                return
            if isinstance(iterable, Value) and iterable.rank and isinstance(self.g.size(iterable, 0), Value):
                # Rows of a dynamic first axis: a Loop that gathers row i.
                self.emit_loop(s, frame, trip=GraphRange(0, self.g.size(iterable, 0), 1), rows=iterable)
                return
            rows = _rows_of(iterable, self)
            if rows is not None:
                # The items a graph loop appended (the rows of its scan output), or zip / enumerate of rows.
                self.emit_loop(s, frame, trip=GraphRange(0, self.row_count(rows), 1), rows=rows)
                return
            try:
                items = list(self.iterate(iterable))
            except TypeError:
                raise self.error(f"cannot iterate over {type(iterable).__name__}", construct="for",
                                 hint="iterate over a list, tuple, range, dict or the rows of a tensor") from None
            for item in items:
                self.assign(s.target, item, frame)
                self.exec_block(s.body, frame)
            self.exec_block(s.orelse, frame)
            return
        for _ in range(MAX_UNROLL):
            test = self.test_value(self.eval(s.test, frame))
            if isinstance(test, Value):
                self.emit_loop(s, frame, cond=test)
                return
            if not self.truth(test):
                self.exec_block(s.orelse, frame)
                return
            self.exec_block(s.body, frame)
        raise self.error(f"`while` loop ran {MAX_UNROLL} times at export time", construct="while",
                         hint="make the loop's condition depend on a tensor (it becomes an ONNX Loop), or bound it")

    def _ev_IfExp(self, e, frame):
        test = self.test_value(self.eval(e.test, frame))
        if isinstance(test, Value):
            # Lazy, like Python: each side is evaluated only in its own If branch.
            def side(expr):
                def run():
                    before = dict(frame.env)
                    value = self.eval(expr, frame)
                    if any(frame.env.get(k, MISSING) is not before.get(k, MISSING) for k in {*frame.env, *before}):
                        raise self.error("a name is assigned (`:=`) inside one side of a data-dependent ternary",
                                         "assign it before the ternary, or use an `if` statement", construct="ifexp")
                    return value
                return run

            return self.graph_choice(test, side(e.body), side(e.orelse), "ifexp", e.span.line)
        return self.eval(e.body, frame) if self.truth(test) else self.eval(e.orelse, frame)

    def graph_choice(self, test: Value, then_fn, else_fn, construct: str, line: int):
        """An expression-level If (ternary, torch.cond): each side built in its branch."""
        cond = self.to_bool(test)
        results, graphs = [], []
        snapshot = self.state_snapshot()
        for fn in (then_fn, else_fn):
            sub = self.g.subgraph()
            saved, self.g = self.g, sub
            try:
                results.append(fn())
            finally:
                self.g = saved
            self.check_state_kept(snapshot, "if" if construct == "ifexp" else construct, line)
            graphs.append(sub)
        flat_t, spec = _flatten(results[0])
        flat_f, spec_f = _flatten(results[1])
        self.check_region_result(construct, flat_t, graphs[0])
        self.check_region_result(construct, flat_f, graphs[1])
        if spec != spec_f:
            raise self.error(f"the two sides of this {construct} return different structures", construct=construct,
                             hint="return the same structure (same tuple length, same None-ness) on both sides")
        if not _contains_graph(results[0]) and not _contains_graph(results[1]) and _same(results[0], results[1]):
            return results[0]
        for sub, flat, other in ((graphs[0], flat_t, flat_f), (graphs[1], flat_f, flat_t)):
            saved, self.g = self.g, sub
            try:
                for v, o in zip(flat, other):
                    bv = self._branch_value(v, o)
                    sub.add_output(bv, shape=_rank_only(bv))
            finally:
                self.g = saved
        probe_keys = self._branch_probes(graphs) if self.probes_enabled else []
        self.add_probe(f"probe|{self.location[0]}|{line}|{construct}|branch", cond)
        outs = self.g.op("If", cond, outputs=len(flat_t) + len(probe_keys),
                         then_branch=graphs[0].build_graph(), else_branch=graphs[1].build_graph())
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        for key, v in zip(probe_keys, outs[len(flat_t):]):
            self.add_probe(key, v)
        return _unflatten(spec, outs[:len(flat_t)])

    def torch_cond(self, args, kwargs):
        pred, true_fn, false_fn, operands = (list(args) + [kwargs.get(k) for k in ("pred", "true_fn", "false_fn", "operands")][len(args):])[:4]
        operands = list(operands or ())
        if not isinstance(pred, Value):
            return self.call(true_fn if self.truth(pred) else false_fn, operands, {})
        return self.graph_choice(pred, lambda: self.call(true_fn, operands, {}), lambda: self.call(false_fn, operands, {}),
                                 "cond", self.location[1])

    def call_choice(self, choice: GraphChoice, start: int, args, kwargs):
        """`modules[i](x)` with a graph index: an If chain over the candidates."""
        if start == len(choice.options) - 1:
            return self.call(choice.options[start], args, kwargs)
        is_this = self.call_op("operator.eq", [choice.index, start], {})
        return self.graph_choice(is_this, lambda: self.call(choice.options[start], args, kwargs),
                                 lambda: self.call_choice(choice, start + 1, args, kwargs), "if", self.location[1])

    def emit_if(self, s: ir.If, test: Value, frame: Frame):
        """Emitted again, with more outputs, when a nested function's `nonlocal` write changes
        a name of the frame that the branches do not assign themselves. Where the sides
        cannot be merged, the code after it is lowered once per side (`fork_points`)."""
        test = self.to_bool(test)
        site = self.fork_site(s, test, frame)  # where the code after it can be lowered once per side
        if self.follow_decision(site, s, frame):
            return
        extra: list[str] = []
        for _ in range(_MAX_ATTEMPTS):
            token = object()
            try:
                return self._emit_if(s, test, frame, extra, token, site)
            except MoreOutputs as more:
                if more.frame.token is not token or more.name in extra:
                    raise
                extra.append(more.name)
        raise self.error("too many names changed by nested functions inside this data-dependent `if`", construct="if",
                         hint="assign those names in the `if` itself, not in nested functions")

    def _emit_if(self, s: ir.If, test: Value, frame: Frame, extra: list, token, site=None):
        cond = self.to_bool(test)
        line = s.span.line
        mutated = _mutated_containers(s, frame)
        names = list(dict.fromkeys(list(s.results) + mutated + extra))
        # Containers changed in place (not rebound): written back into the same object.
        in_place = {n for n in mutated if n not in s.results and isinstance(frame.env.get(n), (list, dict))}
        self.check_unshared(sorted(in_place), frame, "if", line)
        snapshot = self.state_snapshot(frame)
        envs = []
        graphs = []
        raised: list[PythonException] = []
        for block in (s.body, s.orelse):
            sub = self.g.subgraph()
            branch = frame.region_copy(_copy_containers(frame.env), id(sub), "if", line, names, token)
            saved, self.g = self.g, sub
            self.frames.append(branch)
            try:
                self.exec_block(block, branch)
            except PythonException as exc:
                if exc.region != id(sub) or self._catching:
                    raise
                raised.append(exc)  # this side raises in eager: a check on the input (see below)
            finally:
                self.frames.pop()
                self.g = saved
            self.location = (frame.path, line)
            self.check_state_kept(snapshot, "if", line)
            envs.append(branch.env)
            graphs.append(sub)
        if raised:
            # Eager raises on one side: for the inputs it accepts it runs the other, so the
            # graph does, as a data `assert` is dropped. No `try` around may catch it.
            if len(raised) == 2:
                raise raised[0]
            self.exec_block(s.orelse if raised[0].region == id(graphs[0]) else s.body, frame)
            return
        self.location = (frame.path, s.span.line)
        try:
            outputs = self._merge_branches(s, names, envs, graphs, frame, in_place)
        except LoweringError as exc:
            raise self.unmerged(exc, site) from None
        probe_keys = self._branch_probes(graphs) if self.probes_enabled else []
        if not s.synthetic:
            self.add_probe(self._probe_key(frame, s, "if", "branch"), cond)
        n_results = sum(len(o[1][1]) for o in outputs)
        if not n_results and not probe_keys:
            # Nothing for the graph to choose (a list both sides left as it was).
            for name, spec, prefix in outputs:
                merged = _unflatten(spec[0], [])
                self._bind_result(frame, name, merged if prefix is None else prefix + merged, in_place)
            self.hand_on(frame, extra)
            return
        then_graph, else_graph = graphs
        values = self.g.op("If", cond, outputs=n_results + len(probe_keys), then_branch=then_graph.build_graph(),
                           else_branch=else_graph.build_graph())
        values = values if isinstance(values, tuple) else (values,)
        for key, v in zip(probe_keys, values[n_results:]):
            self.add_probe(key, v)
        values = values[:n_results]
        for (name, spec, prefix), value in zip(outputs, _chunks(values, [len(o[1][1]) for o in outputs])):
            for leaf, out in zip(spec[1], value):
                if _is_python_number(leaf) or isinstance(leaf, Value) and leaf in self.python_numbers:
                    self.python_number(out)
            merged = _unflatten(spec[0], list(value))
            self._bind_result(frame, name, merged if prefix is None else prefix + merged, in_place)
        self.hand_on(frame, extra)

    def _bind_result(self, frame: Frame, name: str, value, in_place) -> None:
        if name in in_place:
            self.write_back(frame, name, value)
        else:
            frame.env[name] = value

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

    def _merge_branches(self, s, names, envs, graphs, frame, in_place=frozenset()):
        """Decide each result: equal known values stay known; the rest become If outputs."""
        outputs = []
        for name in names:
            a = envs[0].get(name, MISSING)
            b = envs[1].get(name, MISSING)
            if a is MISSING or b is MISSING:
                present = a if b is MISSING else b
                if name.startswith("$") or name == RETVAL:
                    pass
                elif a is MISSING and b is MISSING:
                    continue
                else:
                    side = "else" if a is not MISSING else "then"
                    raise self.error(
                        f"`{name}` is assigned on one side of this data-dependent `if` only, and used after it",
                        f"assign `{name}` on the {side} side too, before the `if`, or use torch.where",
                        construct="if")
            if not _contains_graph(a) and not _contains_graph(b) and _same(a, b):
                self._bind_result(frame, name, a, in_place)
                continue
            before = frame.env.get(name, MISSING)
            prefix = None
            if type(a) is list and type(b) is list and type(before) is list and _starts_with(a, before) and _starts_with(b, before):
                # Only what each branch appended differs; a side that appended nothing
                # yields placeholders marked absent.
                prefix, a, b = list(before), a[len(before):], b[len(before):]
                if len(a) != len(b) and min(len(a), len(b)) == 0:
                    appended = a or b
                    present = [x if isinstance(x, Maybe) else Maybe(x, True) for x in appended]  # nested ifs: one flag
                    absent = [Maybe(MISSING, False) for _ in appended]
                    a, b = (present, absent) if a else (absent, present)
            if name == RETVAL:
                self._check_returned_none(envs, a, b)
            flat_a, spec_a = _flatten(a)
            flat_b, spec_b = _flatten(b)
            if a is MISSING or a is None and name.startswith("$"):
                flat_a, spec_a = [MISSING] * len(flat_b), spec_b
            if b is MISSING or b is None and name.startswith("$"):
                flat_b, spec_b = [MISSING] * len(flat_a), spec_a
            if _spec_without_maybe(spec_a) == _spec_without_maybe(spec_b) and spec_a != spec_b:
                flat_a, spec_a, flat_b, spec_b = _align_maybe(a, b)
            if spec_a != spec_b:
                raise self.error(f"`{name}` has a different structure on the two sides of a data-dependent `if`"
                                 f" ({_describe(a)} vs {_describe(b)})", construct="if",
                                 hint="give it the same structure (type, length, None-ness) on both sides, e.g. a zero tensor for None")
            for va, vb in zip(flat_a, flat_b):
                if isinstance(va, (Stacked, EarlierIterations)) or isinstance(vb, (Stacked, EarlierIterations)):
                    if va is not vb:
                        raise self.error(
                            f"`{name}` is appended to by a data-dependent loop inside this data-dependent `if`: "
                            "untrace does not merge the items a loop appended on one side",
                            f"stack the loop's items into a tensor inside the `if` (`t = torch.stack({name})`), "
                            "or move the loop out of the `if`", construct="if")
            for graph, flat in ((graphs[0], flat_a), (graphs[1], flat_b)):
                self.check_region_result(name, flat, graph)
            per_branch = []
            for graph, flat, other in ((graphs[0], flat_a, flat_b), (graphs[1], flat_b, flat_a)):
                saved, self.g = self.g, graph
                try:
                    per_branch.append([self._branch_value(self._placeholder(o) if v is MISSING else v, o)
                                       for v, o in zip(flat, other)])
                finally:
                    self.g = saved
            for graph, values, others in ((graphs[0], *per_branch), (graphs[1], per_branch[1], per_branch[0])):
                for bv, ov in zip(values, others):
                    # Declared shape: the dims both branches agree on (the If output's shape).
                    graph.add_output(bv, shape=_common_shape(bv, ov))
            outputs.append((name, (spec_a, flat_a), prefix))
        return outputs

    def _check_returned_none(self, envs, a, b):
        """`$retval` is None on a side that has not returned yet (then the other side's value
        stands for it) or on one that returned None. After a data-dependent `return`, `$ret`
        is a graph bool and a None `$retval` there is a returned None, which no graph value
        can stand for."""
        for value, other, env in ((a, b, envs[0]), (b, a, envs[1])):
            if value is None and _contains_graph(other) and env.get(RET, False) is not False:
                raise self.error(
                    "the function returns None or a value depending on a data-dependent `if` (an early `return None` "
                    "under it): ONNX has no value that is None for some inputs only",
                    "return a tensor on every path (an empty or all-False one where None is returned), or decide "
                    "the early return by a Python value", construct="return")

    def _branch_value(self, v, other):
        """A branch output, cast to the dtype both branches agree on."""
        gv = self.as_graph(v)
        if not isinstance(other, Value) and not isinstance(other, _Missing) and isinstance(other, (bool, int, float)):
            target = self.g.result_type(gv, other) if isinstance(v, Value) else self.as_graph(other).dtype
            if isinstance(v, Value):
                target = v.dtype
            else:
                target = torch.result_type(torch.tensor(v), torch.tensor(other))
            return self.g.cast(gv, target)
        if isinstance(other, Value) and not isinstance(v, Value):
            return self.g.cast(gv, other.dtype)
        if isinstance(other, Value) and other.dtype != gv.dtype:
            raise self.error(f"a value is {gv.dtype} on one side of a data-dependent `if` and {other.dtype} on the other",
                             "cast both sides to one dtype", construct="if")
        if isinstance(other, Value) and None not in (gv.rank, other.rank) and gv.rank != other.rank:
            # Every op after the `if` is lowered for one rank; the graph could not follow the other side.
            raise self.error(f"a tensor has rank {gv.rank} on one side of a data-dependent `if` and rank {other.rank} "
                             "on the other: the code after it is lowered for one rank",
                             "give the tensor one rank on both sides (reshape it on the side that differs)",
                             construct="if")
        return gv

    def _placeholder(self, other):
        """A value for a slot the branch never reaches (a `$retval` not yet set)."""
        ref = self.as_graph(other) if not isinstance(other, _Missing) else None
        if ref is None:
            return self.g.const(False)
        if ref.static_shape is not None and ref.static_shape:
            return self.g.op("ConstantOfShape", self.g.const(list(ref.static_shape), dtype=torch.int64),
                             value=_zero_tensor(ref.dtype), out_dtype=ref.dtype, out_shape=ref.static_shape)
        rank = ref.rank or 0
        return self.g.op("ConstantOfShape", self.g.const([0] * rank, dtype=torch.int64) if rank else self.g.shape_tensor([]),
                         value=_zero_tensor(ref.dtype), out_dtype=ref.dtype, out_shape=(0,) * rank if rank else ())

    def emit_loop(self, s: ir.Loop, frame: Frame, trip: GraphRange | None = None, cond: Value | None = None,
                  rows: Value | None = None):
        """First with carried values keeping their shapes before the loop; when an iteration
        changes a shape, again with every carried dim free."""
        snapshot = self.state_snapshot(frame)  # before any attempt: a first one may change state too
        relaxed, extra = False, []
        for _ in range(_MAX_ATTEMPTS):
            token = object()
            try:
                self._emit_loop(s, frame, trip, cond, rows, snapshot, relaxed, extra, token)
                return
            except _ShapeChanges:
                relaxed = True
            except MoreOutputs as more:  # a nested function's `nonlocal` write: carry the name too
                if more.frame.token is not token or more.name in extra:
                    raise
                extra.append(more.name)
        raise self.error("too many attempts at this data-dependent loop", construct="loop",
                         hint="assign the names the loop changes in its body, not in nested functions")

    def _emit_loop(self, s, frame, trip, cond, rows, snapshot, relaxed: bool, extra=(), token=None):
        line = s.span.line
        mutated = _mutated_containers(s, frame)
        # `while (n := n + 1) < k`: the condition runs once per iteration too.
        walrus = [e.target.id for e in ir.walk_expression(s.test) if isinstance(e, ir.NamedExpr)] if s.test else []
        carried = list(dict.fromkeys([n for n in [*s.carried, *walrus, *extra] if n in frame.env or n.startswith("$")]
                                     + [n for n in mutated if isinstance(frame.env[n], Value)]))
        # Python lists that the body appends to become scan outputs.
        scans = [n for n in dict.fromkeys(carried + mutated) if isinstance(frame.env.get(n), list)]
        carried = [n for n in carried if n not in scans]
        # A dict changed in place is carried: its keys stay, its values are graph values.
        for n in mutated:
            if n not in scans and isinstance(frame.env.get(n), dict):
                if not all(isinstance(v, (Value, bool, int, float)) for v in frame.env[n].values()):
                    raise self.error(f"`{n}` (a dict) is changed inside the data-dependent loop at line {line}, and "
                                     "holds values other than tensors and numbers",
                                     "carry the values the loop changes in local variables", construct="loop")
                carried.append(n)
        in_place = {n for n in mutated if n not in s.carried and isinstance(frame.env.get(n), (list, dict))}
        self.check_unshared(sorted(in_place), frame, "loop", line)
        for n in carried:
            if n not in frame.env:
                raise self.error(f"`{n}` is assigned in this loop and used after it, but is not set before it",
                                 f"initialise `{n}` before the loop", construct="loop")
        init = {n: frame.env[n] for n in carried}
        for n in carried:
            self.check_region_result(n, init[n], self.g)  # the loop reads them
        body = self.g.subgraph()
        self.aliases.enter_loop_body(body)
        self.aliases.active_loops += 1
        iter_num = body.add_input(body.fresh("iter"), torch.int64, ())
        cond_in = body.add_input(body.fresh("cond"), torch.bool, ())
        self.python_number(iter_num)
        inner = frame.region_copy(dict(frame.env), id(body), "loop", line, carried + scans, token)
        flat_init = {}
        for n in carried:
            flat, spec = _flatten(init[n])
            values = []
            if any(isinstance(v, (Stacked, Maybe, EarlierIterations)) for v in flat):
                raise self.error(f"`{n}` holds the items a data-dependent loop or `if` appended, and changes in this "
                                 f"data-dependent loop", "stack the items into a tensor before the loop",
                                 construct="loop")
            for v in flat:
                gv = self.as_graph(v)
                shape = gv.shape if not relaxed else _rank_only(gv)
                carried_in = body.add_input(body.fresh(n.strip("$") or "v"), gv.dtype, shape)
                if isinstance(v, Value):
                    # The same tensor as before the loop: an in-place update in the body
                    # reaches the other names for it.
                    self.aliases.add_view(carried_in, v, None)
                    if v in self.python_numbers:
                        self.python_number(carried_in)
                elif _is_python_number(v):
                    self.python_number(carried_in)  # `n += 0.5` rebinds a Python number, as in eager
                self.aliases.made(carried_in, body)
                values.append(carried_in)
            flat_init[n] = (flat, spec)
            inner.env[n] = _unflatten(spec, values)
        # A list the body appends to: what came before the loop, then what the earlier
        # iterations appended (their number carried), then this iteration's items.
        scan_start = {n: len(frame.env[n]) for n in scans}
        scan_counts = {}
        for n in scans:
            scan_counts[n] = self.python_number(body.add_input(body.fresh(f"len_{n}"), torch.int64, ()))
            before = frame.env[n][-1] if frame.env[n] else MISSING
            if isinstance(before, (Maybe, Stacked, EarlierIterations)):
                try:  # what `n[-1]` is before the loop, in case the body reads it before appending
                    before = self.list_item(frame.env[n], -1)
                except LoweringError as exc:
                    before = exc
            inner.env[n] = list(frame.env[n]) + [EarlierIterations(scan_counts[n], n, line, body, before)]
        trips_in = body.add_input(body.fresh("trips"), torch.int64, ()) if self.probes_enabled else None
        saved, self.g = self.g, body
        self.frames.append(inner)
        try:
            if rows is not None:
                self.assign(s.target, self.row_item(rows, iter_num), inner)
            elif trip is not None:
                index = iter_num
                if not (isinstance(trip.start, int) and trip.start == 0 and isinstance(trip.step, int) and trip.step == 1):
                    index = self.call_op("operator.add", [self.call_op("operator.mul", [iter_num, trip.step], {}), trip.start], {})
                self.assign(s.target, index, inner)
            self.exec_block(s.body, inner)
            if s.kind == "while":
                next_cond = self.eval(s.test, inner)
                next_cond = self.to_bool(next_cond) if isinstance(next_cond, Value) else self.as_graph(bool(self.truth(next_cond)))
            else:
                next_cond = cond_in
            body.add_output(next_cond)
            self.location = (frame.path, line)  # what the body hands on is checked at the loop's line
            for n in carried:
                flat, spec = _flatten(inner.env.get(n, MISSING))
                self.check_region_result(n, flat, body)
                if spec != flat_init[n][1]:
                    raise self.error(f"`{n}` changes structure inside the data-dependent loop at line {line} "
                                     f"({_describe(init[n])} before it; keys or items added or removed)",
                                     f"give `{n}` all its keys / items before the loop and only change their values "
                                     "in it, or build a list with `append` and `torch.stack` it after the loop",
                                     construct="loop")
                for v, v0 in zip(flat, flat_init[n][0]):
                    gv = self.as_graph(v)
                    g0 = self.as_graph(v0)
                    if gv.dtype != g0.dtype:
                        gv = self.g.cast(gv, g0.dtype) if not isinstance(v, Value) or _is_int_like(gv.dtype, g0.dtype) else gv
                    if gv.dtype != g0.dtype:
                        raise self.error(f"`{n}` changes dtype inside the data-dependent loop at line {line} "
                                         f"({g0.dtype} -> {gv.dtype})",
                                         f"give `{n}` its final type before the loop (`{n} = 0.0`, `.float()`)",
                                         construct="loop")
                    if not relaxed and gv.shape != g0.shape:
                        raise _ShapeChanges()
                    body.add_output(gv, shape=_rank_only(gv))
            appended_items = {}
            for n in scans:
                items, k = inner.env.get(n), scan_start[n]
                if not (type(items) is list and len(items) > k and isinstance(items[k], EarlierIterations)
                        and items[k].count is scan_counts[n] and all(a is b for a, b in zip(items[:k], frame.env[n]))):
                    raise self.error(f"`{n}` is changed inside the data-dependent loop at line {line} other than by "
                                     f"`{n}.append(...)`",
                                     f"only append to `{n}` inside the loop; build other lists after it",
                                     construct="loop")
                appended = items[k + 1:]
                if not all(isinstance(i, (Value, Maybe, int, float)) for i in appended):
                    raise self.error(f"a graph loop must append tensors to `{n}` in each iteration (under an `if` if "
                                     "need be); this one appends something else (the items of an inner loop?)",
                                     f"append one tensor per `{n}.append(...)`, or build `{n}` after the loop",
                                     construct="loop")
                appended_items[n] = appended
                count = scan_counts[n]
                for item in appended:
                    step = self.g.cast(self.to_bool(item.valid), torch.int64) if isinstance(item, Maybe) else 1
                    count = self.call_op("operator.add", [count, step], {})
                body.add_output(count, shape=())
            if trips_in is not None:
                body.add_output(self.call_op("operator.add", [trips_in, 1], {}), shape=())
            # `out[-1]` before this iteration's append, where the body read it: carried.
            lasts = [(n, inner.env[n][scan_start[n]]) for n in scans if inner.env[n][scan_start[n]].last is not None]
            for n, marker in lasts:
                new = marker.last
                for item in appended_items[n]:
                    v = self.as_graph(item.value if isinstance(item, Maybe) else item)
                    if v.dtype != marker.last.dtype or v.rank != marker.last.rank:
                        raise self.error(f"`{n}[-1]` is a {marker.last.dtype} of rank {marker.last.rank} before the "
                                         f"loop and a {v.dtype} of rank {v.rank} inside it",
                                         f"append items of one dtype and rank to `{n}`", construct="loop")
                    new = self.call_op("torch.where", [self.to_bool(item.valid), v, new], {}) if isinstance(
                        item, Maybe) else v
                body.add_output(new, shape=_rank_only(new))
            scan_values = []
            scan_masks: dict[str, bool] = {}
            scan_blocks: dict[str, int] = {}  # lists appended to several times an iteration
            for n in scans:
                if not appended_items[n]:
                    continue  # the append is not reached (a Python condition): the list stays as it was
                item = appended_items[n][0]
                if len(appended_items[n]) > 1:
                    item = self._append_block(n, appended_items[n])
                    scan_blocks[n] = len(appended_items[n])
                if isinstance(item, Maybe):
                    sv = self.as_graph(item.value)
                    valid = item.valid if n in scan_blocks else self.to_bool(item.valid)
                    body.add_output(sv, shape=_rank_only(sv))
                    body.add_output(valid, shape=_rank_only(valid))
                    scan_masks[n] = True
                else:
                    sv = self.as_graph(item)
                    body.add_output(sv, shape=_rank_only(sv))
                scan_values.append(sv)
            body_probes = self.take_probes(body)
            for _, pv in body_probes:
                body.add_output(pv, shape=(None,))
        finally:
            self.frames.pop()
            self.g = saved
            self.aliases.active_loops -= 1
        self.location = (frame.path, line)
        self.check_state_kept(snapshot, "loop", line)
        if trip is not None:
            count = self._trip_count(trip)
            cond0 = self.g.const(True)
        else:
            count = None
            cond0 = self.to_bool(cond)
        init_values = [self.as_graph(v) for n in carried for v in flat_init[n][0]]
        init_values += [self.g.const(0, dtype=torch.int64) for _ in scans]
        if trips_in is not None:
            init_values.append(self.g.const(0, dtype=torch.int64))
        init_values += [self.as_graph(marker.before) for _, marker in lasts]
        n_out = len(init_values) + len(scan_values) + len(scan_masks) + len(body_probes)
        if n_out == 0:
            body.add_output(self.as_graph(0), shape=())  # ONNX wants at least one output
            n_out = 1
        outs = self.g.op("Loop", count, cond0, *init_values, outputs=n_out, body=body.build_graph())
        outs = outs if isinstance(outs, tuple) else (outs,)
        pos = 0
        for n in carried:
            k = len(flat_init[n][0])
            for v0, out in zip(flat_init[n][0], outs[pos:pos + k]):
                if _is_python_number(v0) or isinstance(v0, Value) and v0 in self.python_numbers:
                    self.python_number(out)  # still a Python number after the loop
            self._bind_result(frame, n, _unflatten(flat_init[n][1], list(outs[pos:pos + k])), in_place)
            pos += k
        pos += len(scans)  # the lengths of the lists appended to: len() after the loop reads the Stacked
        if trips_in is not None:
            self.add_probe(self._probe_key(frame, s, s.kind, "trips"), outs[pos])
            pos += 1
        pos += len(lasts)
        for n in scans:
            if not appended_items[n]:
                self._bind_result(frame, n, frame.env[n][:scan_start[n]], in_place)
                continue
            if scan_masks.get(n):
                value, valid = outs[pos], outs[pos + 1]
                pos += 2
            else:
                value, valid = outs[pos], None
                pos += 1
            if n in scan_blocks:
                # (iterations, items per iteration, ...) -> one item per row, in append order.
                value = self.call_op("torch.flatten", [value, 0, 1], {})
                valid = None if valid is None else self.call_op("torch.flatten", [valid], {})
            stacked = Stacked(value, valid)
            self._bind_result(frame, n, frame.env[n][:scan_start[n]] + [stacked], in_place)
        for key, _ in body_probes:
            self.add_probe(key, outs[pos])  # one entry per iteration, flattened
            pos += 1
        self.hand_on(frame, extra)

    def _append_block(self, name: str, items: list):
        """The items one iteration appended to `name`, as one scan row: the values stacked
        (and where some are conditional, a Maybe whose flags are a vector)."""
        values = [self.as_graph(i.value if isinstance(i, Maybe) else i) for i in items]
        if len({(v.dtype, v.rank) for v in values}) != 1:
            raise self.error(f"the items a graph loop appends to `{name}` in one iteration differ in dtype or rank",
                             f"append items of one dtype and rank to `{name}`", construct="loop")
        block = self.call_op("torch.stack", [values], {"dim": 0})
        if not any(isinstance(i, Maybe) for i in items):
            return block
        flags = [self.g.unsqueeze(self.to_bool(i.valid if isinstance(i, Maybe) else True), [0]) for i in items]
        return Maybe(block, self.g.op("Concat", *flags, axis=0))

    def _trip_count(self, r: GraphRange) -> Value:
        # ceil((stop - start) / step), at least 0.
        span = self.call_op("operator.sub", [r.stop, r.start], {}) if not (isinstance(r.start, int) and r.start == 0) else r.stop
        if not (isinstance(r.step, int) and r.step == 1):
            span = self.call_op("operator.floordiv", [self.call_op("operator.add", [span, self.call_op("operator.sub", [r.step, 1], {})], {}), r.step], {})
        span = self.g.cast(self.as_graph(span), torch.int64)
        return self.call_op("torch.clamp", [span], {"min": 0})

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
