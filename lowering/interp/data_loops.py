"""Data-dependent loops: a graph trip count or condition emits an ONNX `Loop` (carried:
the region's carried set, with their shapes kept, or freed when an iteration changes
one; lists appended to become scan outputs). A carried value may be a view of what an
earlier iteration left under its name: the body is emitted again until each carried
input may share memory with everything the body hands on (`lowering.aliasing`). A name
None before the loop that the body leaves None is not carried; a tensor first bound in
the body and read after it is carried from a placeholder (eager raises after zero trips)."""

from __future__ import annotations

import torch

from analyzer.frontend import ir
from analyzer.frontend.structure import RETVAL
from lowering.errors import LoweringError
from lowering.graph import Value
from lowering.interp.chosen_identity import note_choice
from lowering.interp.containers import _mutated_containers
from lowering.interp.control_flow import _MAX_ATTEMPTS
from lowering.interp.python_numbers import NumberBecomesTensor, is_python_number
from lowering.interp.values import (MISSING, EarlierIterations, Frame, GraphRange, Maybe, MoreOutputs, Stacked,
                                    _describe, _flatten, _is_int_like, _rank_only, _ShapeChanges, _unflatten)


class DataLoops:
    def emit_loop(self, s: ir.Loop, frame: Frame, trip: GraphRange | None = None, cond: Value | None = None,
                  rows: Value | None = None):
        """First with carried values keeping their shapes before the loop; when an iteration
        changes a shape, again with every carried dim free."""
        snapshot = self.state_snapshot(frame)  # before any attempt: a first one may change state too
        relaxed, extra, tensors = False, [], {}  # tensors: name -> what the body made of a Python number
        first_bound: dict[str, Value] = {}  # name first bound in the body, live after: its placeholder
        shared: dict[tuple[str, int], tuple[Value, ...]] = {}  # what a carried input may also share memory with
        aliases = self.aliases.snapshot()
        for _ in range(_MAX_ATTEMPTS):
            token = object()
            self.aliases.restore(aliases)  # nothing a discarded attempt marked stays marked
            try:
                self._emit_loop(s, frame, trip, cond, rows, snapshot, relaxed, extra, token, tensors, shared,
                                first_bound)
                return
            except _FirstBound as late:
                first_bound[late.name] = late.placeholder
            except _ShapeChanges:
                relaxed = True
            except _CarriedViews as more:
                shared[more.slot] = (*shared.get(more.slot, ()), *more.storages)
            except NumberBecomesTensor as change:
                tensors[change.name] = change.value
            except MoreOutputs as more:  # a nested function's `nonlocal` write: carry the name too
                if more.frame.token is not token or more.name in extra:
                    raise
                extra.append(more.name)
        raise self.error("too many attempts at this data-dependent loop", construct="loop",
                         hint="assign the names the loop changes in its body, not in nested functions")

    def _refuse_none_carried(self, name: str, line: int):
        """A loop-carried value that is None before the loop: ONNX `Loop` carries tensors of
        one type, so its first value needs one."""
        if name == RETVAL:
            raise self.error(f"an early `return` inside the data-dependent loop at line {line}: an ONNX `Loop` cannot "
                             "leave forward from its body", "set the result and a flag, `break`, and return after the "
                             "loop (give the result a tensor before the loop)", construct="return")
        raise self.error(f"`{name}` is None before the data-dependent loop at line {line}, which carries it as a tensor",
                         f"give `{name}` a tensor before the loop (`torch.zeros(...)`) and a flag if None meant "
                         "'not yet'", construct="loop")

    def _emit_loop(self, s, frame, trip, cond, rows, snapshot, relaxed: bool, extra=(), token=None,
                   tensors=frozenset(), shared=None, first_bound=None):
        line = s.span.line
        shared, first_bound = shared or {}, first_bound or {}
        region = f"the data-dependent loop at line {line}"
        mutated = _mutated_containers(s, frame)
        # `while (n := n + 1) < k`: the condition runs once per iteration too.
        walrus = [e.target.id for e in ir.walk_expression(s.test) if isinstance(e, ir.NamedExpr)] if s.test else []
        carried = list(dict.fromkeys([n for n in [*s.carried, *walrus, *extra] if n in frame.env or n.startswith("$")]
                                     + [n for n in mutated if isinstance(frame.env[n], Value)]))
        # A nested function's `nonlocal` write to a name the body binds itself, unbound before
        # the loop: each iteration binds it afresh, so the body keeps it and nothing carries it.
        body_local = [n for n in extra if n not in carried]
        # A list the body changes only by `lst[i] = v` keeps its length (a per-layer cache):
        # its items are carried. The other lists the body changes are appended to: scan outputs.
        item_lists = [n for n in mutated if type(frame.env.get(n)) is list and n not in s.carried
                      and _items_set_only(s, n)]
        scans = [n for n in dict.fromkeys(carried + mutated) if isinstance(frame.env.get(n), list)
                 and n not in item_lists]
        carried = [n for n in carried if n not in scans]
        # A dict changed in place is carried: its keys stay, its values are graph values.
        for n in mutated:
            if n not in scans and isinstance(frame.env.get(n), dict):
                if not all(isinstance(v, (Value, bool, int, float)) for v in frame.env[n].values()):
                    raise self.error(f"`{n}` (a dict) is changed inside the data-dependent loop at line {line}, and "
                                     "holds values other than tensors and numbers",
                                     "carry the values the loop changes in local variables", construct="loop")
                carried.append(n)
        for n in item_lists:
            if not all(isinstance(v, (Value, bool, int, float)) for v in _flatten(frame.env[n])[0]):
                raise self.error(f"`{n}` (a list) has its items set inside the data-dependent loop at line {line}, "
                                 "and holds values other than tensors and numbers (None before the first iteration?)",
                                 f"give every item of `{n}` a tensor before the loop (`torch.zeros(...)`, or an empty "
                                 "tensor to concatenate to), or carry the items in local variables", construct="loop")
            carried.append(n)
        in_place = {n for n in mutated if n not in s.carried and isinstance(frame.env.get(n), (list, dict))}
        self.check_unshared(sorted(in_place), frame, "loop", line)
        for n in carried:
            if n not in frame.env and n not in first_bound:
                raise self.error(f"`{n}` is assigned in this loop and used after it, but is not set before it",
                                 f"initialise `{n}` before the loop", construct="loop")
        # `for t in range(n): out, h = cell(x, h)`, then `fc(out)`: `out` is first bound in the
        # body. After zero iterations eager raises NameError, after more it reads the last
        # iteration's value: carried from a placeholder of the body's dtype and rank, which the
        # body never reads (it stays unbound there until assigned).
        late = [n for n in s.carried if n not in frame.env and not n.startswith("$") and n not in extra]
        carried += [n for n in late if n in first_bound]
        init = {n: first_bound[n] if n in first_bound else frame.env[n] for n in carried}
        # None before the loop, assigned in the body only under an `if` the interpreter folds
        # (a module's flag): the body runs with it and must leave it as it was, else refused
        # after the body. Nothing to carry then.
        none_kept = [n for n in carried if n != RETVAL and any(v is None for v in _flatten(init[n])[0])]
        carried = [n for n in carried if n not in none_kept]
        for n in carried:
            self.check_region_result(n, init[n], self.g)  # the loop reads them
        outer, body = self.g, self.g.subgraph()
        self.aliases.enter_loop_body(body)
        self.aliases.active_loops += 1
        iter_num = body.add_input(body.fresh("iter"), torch.int64, ())
        cond_in = body.add_input(body.fresh("cond"), torch.bool, ())
        self.python_number(iter_num)
        inner = frame.region_copy(dict(frame.env), id(body), "loop", line, carried + none_kept + scans + body_local,
                                  token)
        flat_init, inner_init = {}, {}
        for n in carried:
            flat, spec = _flatten(init[n])
            values = []
            if any(isinstance(v, (Stacked, Maybe, EarlierIterations)) for v in flat):
                raise self.error(f"`{n}` holds the items a data-dependent loop or `if` appended, and changes in this "
                                 f"data-dependent loop", "stack the items into a tensor before the loop",
                                 construct="loop")
            if any(v is None for v in flat):
                self._refuse_none_carried(n, line)
            for i, v in enumerate(flat):
                gv = self.as_graph(v)
                shape = gv.shape if not relaxed and n not in first_bound else _rank_only(gv)
                made = tensors.get(n) if len(flat) == 1 else None
                if made is not None and is_python_number(self, v) and made.dtype != gv.dtype:
                    # `attns = 0; for ...: attns += w`: eager's first iteration makes `0 + w`, a tensor of
                    # w's dtype, which later ones update in place; the number carried in that dtype, of any shape.
                    gv, shape = self.g.cast(gv, made.dtype), None
                    flat[i] = gv
                elif made is not None and is_python_number(self, v) and made.rank != gv.rank:
                    shape = None
                carried_in = body.add_input(body.fresh(n.strip("$") or "v"), gv.dtype, shape)
                tensor = isinstance(v, Value) and v not in self.python_numbers
                if (n, i) in shared:
                    # From the second iteration on, what an earlier one left: maybe a view of these.
                    self.aliases.merge(carried_in, [v] * tensor + [*shared[n, i]], region)
                elif tensor:
                    # The same tensor as before the loop: an in-place update in the body
                    # reaches the other names for it.
                    self.aliases.add_view(carried_in, v, None)
                if not tensor and n in tensors:
                    self.first_iteration_numbers.add(carried_in)  # a tensor from the second iteration on
                elif not tensor and is_python_number(self, v) and not isinstance(v, bool):
                    self.python_number(carried_in)  # `n += 0.5` rebinds a Python number, as in eager
                self.aliases.made(carried_in, body)
                values.append(carried_in)
            flat_init[n] = (flat, spec)
            inner_init[n] = _unflatten(spec, values)
            if n in first_bound:
                continue  # unbound in the body until assigned: a read before raises, as eager's first iteration
            inner.env[n] = inner_init[n]
            note_choice(self, inner_init[n], [init[n]], region)  # the value before the loop, in the first iteration
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
            for n in none_kept:
                if inner.env.get(n, MISSING) is not init[n]:
                    self.location = (frame.path, line)
                    self._refuse_none_carried(n, line)
            for n in late:
                v = inner.env.get(n, MISSING)
                if n not in first_bound and isinstance(v, Value) and not is_python_number(self, v) and v.rank is not None:
                    shape = (0,) * v.rank  # never read: the value after zero iterations, where eager raises
                    raise _FirstBound(n, outer.const(torch.zeros(shape, dtype=v.dtype)))
            if s.kind == "while":
                next_cond = self.eval_test(s.test, inner)
                next_cond = self.to_bool(next_cond) if isinstance(next_cond, Value) else self.as_graph(bool(self.truth(next_cond)))
            else:
                next_cond = cond_in
            body.add_output(next_cond)
            self.location = (frame.path, line)  # what the body hands on is checked at the loop's line
            finals, final_values = {}, {}
            for n in carried:
                flat, spec = _flatten(inner.env.get(n, MISSING))
                finals[n] = flat
                final_values[n] = inner.env.get(n, MISSING)
                self.check_region_result(n, flat, body)
                if spec != flat_init[n][1]:
                    raise self.error(f"`{n}` changes structure inside the data-dependent loop at line {line} "
                                     f"({_describe(init[n])} before it; keys or items added or removed)",
                                     f"give `{n}` all its keys / items before the loop and only change their values "
                                     "in it, or build a list with `append` and `torch.stack` it after the loop",
                                     construct="loop")
                for i, (v, v0, v_in) in enumerate(zip(flat, flat_init[n][0], _flatten(inner_init[n])[0])):
                    if v_in in self.python_numbers and not is_python_number(self, v):
                        raise NumberBecomesTensor(n, v if isinstance(v, Value) else None)
                    if isinstance(v, Value) and v not in self.python_numbers:
                        known = self.aliases.storages(v_in)
                        more = [r for r in self.aliases.storages(v) if r not in known and outer.sees(r)]
                        if more:
                            raise _CarriedViews((n, i), more)
                    gv = self.as_graph(v)
                    g0 = self.as_graph(v0)
                    want = v_in.dtype if isinstance(v_in, Value) else g0.dtype  # a number carried as a tensor: its dtype
                    if gv.dtype != want:
                        gv = self.g.cast(gv, want) if not isinstance(v, Value) or _is_int_like(gv.dtype, want) else gv
                    if gv.dtype != want:
                        raise self.error(f"`{n}` changes dtype inside the data-dependent loop at line {line} "
                                         f"({want} -> {gv.dtype})",
                                         f"give `{n}` its final type before the loop (`{n} = 0.0`, `.float()`)",
                                         construct="loop")
                    if not relaxed and gv.shape != g0.shape and n not in first_bound:
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
            self._refuse_shared_across_iterations(carried, inner, inner_init, appended_items, line)
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
        # A Python number that the body makes a tensor: of the tensor's rank after the loop (eager's
        # value after an iteration; after none, a number, which broadcasts as a 0-d tensor does).
        ranks = []
        for n in carried:
            made = tensors.get(n)
            for v in flat_init[n][0]:
                differs = isinstance(made, Value) and made.rank is not None and len(flat_init[n][0]) == 1 and \
                    self.as_graph(v).rank != made.rank
                ranks.append((None,) * made.rank if differs else None)
        out_shape = ranks + [None] * (n_out - len(ranks)) if any(r is not None for r in ranks) else None
        outs = self.g.op("Loop", count, cond0, *init_values, outputs=n_out, body=body.build_graph(),
                         out_shape=out_shape)
        outs = outs if isinstance(outs, tuple) else (outs,)
        pos = 0
        for n in carried:
            k = len(flat_init[n][0])
            for v0, final, out in zip(flat_init[n][0], finals[n], outs[pos:pos + k]):
                if n not in tensors and is_python_number(self, v0) and not isinstance(v0, bool):
                    self.python_number(out)  # still a Python number after the loop
                self.merge_aliases(out, (v0, final), region)  # the value before the loop, or the last iteration's
            after = _unflatten(flat_init[n][1], list(outs[pos:pos + k]))
            note_choice(self, after, [init[n], final_values[n]], region)
            self._bind_result(frame, n, after, in_place)
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

    def _refuse_shared_across_iterations(self, carried, inner, inner_init, appended_items, line) -> None:
        """A carried tensor updated in place in the body is the same tensor, in eager, as what
        the previous iteration left under its name; if that iteration also left it under
        another carried name or in a list it appended to, the update shows through those
        too, which separate Loop values cannot."""
        held: list[tuple[str, Value]] = []
        for n in carried:
            held += [(n, v) for v in _flatten(inner.env.get(n, MISSING))[0] if isinstance(v, Value)]
        for n, items in appended_items.items():
            held += [(f"{n}[-1]", item.value if isinstance(item, Maybe) else item) for item in items
                     if isinstance(item.value if isinstance(item, Maybe) else item, Value)]
        for n in carried:
            if not any(isinstance(v, Value) and v in self.aliases.stale for v in _flatten(inner_init[n])[0]):
                continue  # not updated in place in the body
            for v in _flatten(inner.env.get(n, MISSING))[0]:
                if not isinstance(v, Value) or v in self.python_numbers:
                    continue
                other = next((name for name, w in held if name != n and self.aliases.may_share(w, v)), None)
                if other is not None:
                    raise self.error(
                        f"`{n}` is updated in place inside the data-dependent loop at line {line}, and the tensor it "
                        f"holds at the end of an iteration is also `{other}`: eager PyTorch shows the next "
                        f"iteration's update through `{other}` too, which separate loop values cannot",
                        f"update `{n}` out of place (`{n} = {n} + ...`), or store a copy (`{n}.clone()`)",
                        construct="inplace")

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
        if isinstance(r.step, Value):
            # Python's len(range): ceil toward the step's sign; a step of 0 raises in eager.
            up = self.call_op("operator.floordiv", [self.call_op("operator.add", [span, self.call_op(
                "operator.sub", [r.step, 1], {})], {}), r.step], {})
            down = self.call_op("operator.floordiv", [self.call_op("operator.add", [span, self.call_op(
                "operator.add", [r.step, 1], {})], {}), r.step], {})
            span = self.call_op("torch.where", [self.call_op("operator.gt", [r.step, 0], {}), up, down], {})
        elif r.step < 0:
            span = self.call_op("operator.floordiv", [self.call_op("operator.add", [span, r.step + 1], {}), r.step], {})
        elif r.step != 1:
            span = self.call_op("operator.floordiv", [self.call_op("operator.add", [span, r.step - 1], {}), r.step], {})
        span = self.g.cast(self.as_graph(span), torch.int64)
        return self.call_op("torch.clamp", [span], {"min": 0})


def _items_set_only(loop: ir.Loop, name: str) -> bool:
    """Whether the loop's body changes the list `name` only by `name[i] = v` (no method
    call on it that could change its length): then its length is the same every iteration."""
    for stmt in ir.walk_statements(loop.body):
        for e in ir.child_expressions(stmt):
            for sub in ir.walk_expression(e):
                if (isinstance(sub, ir.Call) and isinstance(sub.func, ir.Attribute)
                        and isinstance(sub.func.value, ir.Name) and sub.func.value.id == name):
                    return False
        if isinstance(stmt, ir.Delete) and any(isinstance(t, ir.Subscript) and isinstance(t.value, ir.Name)
                                               and t.value.id == name for t in stmt.targets):
            return False
    return True


class _CarriedViews(Exception):
    """The body hands on, under a carried name, a value that may share memory with
    `storages` (values made before the loop), which the carried input did not: the next
    iteration would see an update of it there. Emit the loop again with them."""

    def __init__(self, slot: tuple[str, int], storages: list[Value]):
        super().__init__(slot[0])
        self.slot = slot
        self.storages = storages


class _FirstBound(Exception):
    """A name first bound in the body, read after the loop, is a tensor: emit the loop
    again carrying it from `placeholder` (its dtype and rank)."""

    def __init__(self, name: str, placeholder: Value):
        super().__init__(name)
        self.name = name
        self.placeholder = placeholder
