"""Data-dependent Ifs: a graph predicate emits an ONNX `If` whose outputs are the
region's results (assigned in either branch ∩ live after), re-emitted with more outputs
when a nested function's `nonlocal` write changes a name; and the expression-level Ifs
(ternary, torch.cond, a ModuleList indexed by data), each side built in its branch.
An If's result may share memory with what either side's value does (`merge_aliases`).
What a discarded attempt (re-emitted, or a side that raises) marked stale is undone."""

from __future__ import annotations

from analyzer.frontend import ir
from lowering.errors import LoweringError, PythonException
from lowering.graph import Value
from lowering.interp.containers import _copy_containers, _mutated_containers
from lowering.interp.control_flow import _MAX_ATTEMPTS
from lowering.interp.chosen_identity import note_choice
from lowering.interp.python_numbers import mark_merged
from lowering.interp.values import (Frame, GraphChoice, MoreOutputs, _chunks, _contains_graph, _flatten, _rank_only,
                                    _same, _unflatten, keep_known_leaves)


class DataIfs:
    def graph_choice(self, test: Value, then_fn, else_fn, construct: str, line: int):
        """An expression-level If (ternary, torch.cond): each side built in its branch."""
        cond = self.to_bool(test)
        results, graphs = [], []
        snapshot = self.state_snapshot()
        for fn in (then_fn, else_fn):
            sub = self.g.subgraph()
            graphs.append(sub)
            self.aliases.alternatives(*graphs)  # before the else side runs
            saved, self.g = self.g, sub
            try:
                results.append(fn())
            finally:
                self.g = saved
            self.check_state_kept(snapshot, "if" if construct == "ifexp" else construct, line)
        flat_t, spec = _flatten(results[0])
        flat_f, spec_f = _flatten(results[1])
        self.check_region_result(construct, flat_t, graphs[0])
        self.check_region_result(construct, flat_f, graphs[1])
        if spec != spec_f:
            raise self.error(f"the two sides of this {construct} return different structures", construct=construct,
                             hint="return the same structure (same tuple length, same None-ness) on both sides")
        if not _contains_graph(results[0]) and not _contains_graph(results[1]) and _same(results[0], results[1]):
            return results[0]
        spec, flat_t, flat_f = keep_known_leaves(spec, flat_t, flat_f)
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
        region = f"the data-dependent {dict(ifexp='ternary', cond='`torch.cond`').get(construct, '`if`')} at line {line}"
        for out, t, f in zip(outs, flat_t, flat_f):
            mark_merged(self, out, (t, f))
            self.merge_aliases(out, (t, f), region, cond)
        merged = _unflatten(spec, outs[:len(flat_t)])
        note_choice(self, merged, results, region)
        return merged

    def value_choice(self, test: Value, then_value, else_value, construct: str, line: int):
        """`then_value if test else else_value` of two values computed already (the value of
        a data-dependent `a or b`): a `Where` when they have one dtype and one static shape,
        else an If that hands on either, as the ternary does."""
        if all(isinstance(v, (Value, bool, int, float)) for v in (then_value, else_value)):
            a, b = self.as_graph(then_value), self.as_graph(else_value)
            if a.dtype == b.dtype and a.static_shape is not None and a.static_shape == b.static_shape:
                cond = self.to_bool(test)
                out = self.call_op("torch.where", [cond, a, b], {})
                mark_merged(self, out, (then_value, else_value))
                self.merge_aliases(out, (then_value, else_value), f"the `{construct}` at line {line}", cond)
                note_choice(self, out, [then_value, else_value], f"the `{construct}` at line {line}")
                return out
        try:
            return self.graph_choice(test, lambda: then_value, lambda: else_value, construct, line)
        except LoweringError as exc:
            raise self.error(f"the value of this data-dependent `{construct}` is one of its operands, chosen by the "
                             f"data, and untrace cannot merge them ({exc.message})",
                             "give both operands one dtype and rank, or test it with `bool(...)` / `torch.where` "
                             f"where only the truth of the `{construct}` is needed", construct=construct) from None

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
        aliases = self.aliases.snapshot()
        for _ in range(_MAX_ATTEMPTS):
            token = object()
            self.aliases.restore(aliases)  # nothing a discarded attempt marked stays marked
            try:
                return self._emit_if(s, test, frame, extra, token, site, aliases)
            except MoreOutputs as more:
                if more.frame.token is not token or more.name in extra:
                    raise
                extra.append(more.name)
        raise self.error("too many names changed by nested functions inside this data-dependent `if`", construct="if",
                         hint="assign those names in the `if` itself, not in nested functions")

    def _emit_if(self, s: ir.If, test: Value, frame: Frame, extra: list, token, site=None, aliases=None):
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
        refused: list[LoweringError] = []  # a side untrace cannot lower as a branch (see below)
        for block in (s.body, s.orelse):
            sub = self.g.subgraph()
            graphs.append(sub)
            self.aliases.alternatives(*graphs)  # before the else side runs
            branch = frame.region_copy(_copy_containers(frame.env), id(sub), "if", line, names, token)
            saved, self.g = self.g, sub
            self.frames.append(branch)
            try:
                self.exec_block(block, branch)
            except PythonException as exc:
                if exc.region != id(sub) or self._catching:
                    raise
                raised.append(exc)  # this side raises in eager: a check on the input (see below)
            except LoweringError as exc:
                if refused:
                    raise
                refused.append(exc)  # lowered as the only path if the other side raises
            finally:
                self.frames.pop()
                self.g = saved
            self.location = (frame.path, line)
            self.check_state_kept(snapshot, "if", line)
            self.check_copies_kept(frame.env, branch.env, names, "if", line)
            envs.append(branch.env)
        if refused and not raised:
            raise refused[0]
        if raised:
            # Eager raises on one side: for the inputs it accepts it runs the other, so the
            # graph does, as a data `assert` is dropped. No `try` around may catch it. What
            # the other side could not do as a branch (update a view of a tensor made before
            # the `if`), it does as the one path.
            if len(raised) == 2:
                raise raised[0]
            # What the raising side updated in place eager never updates for those inputs.
            self.aliases.restore(aliases)
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
            for name, spec, prefix, sides in outputs:
                merged = _unflatten(spec[0], [])
                if prefix is None:
                    note_choice(self, merged, sides, f"the data-dependent `if` at line {line}")
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
        for (name, spec, prefix, sides), value in zip(outputs, _chunks(values, [len(o[1][1]) for o in outputs])):
            for then_leaf, else_leaf, out in zip(spec[1], spec[2], value):
                mark_merged(self, out, (then_leaf, else_leaf))
                self.merge_aliases(out, (then_leaf, else_leaf), f"the data-dependent `if` at line {line}", cond)
            merged = _unflatten(spec[0], list(value))
            if prefix is None:
                note_choice(self, merged, sides, f"the data-dependent `if` at line {line}")
            self._bind_result(frame, name, merged if prefix is None else prefix + merged, in_place)
        self.hand_on(frame, extra)

    def _bind_result(self, frame: Frame, name: str, value, in_place) -> None:
        if name in in_place:
            self.write_back(frame, name, value)
        else:
            frame.env[name] = value
