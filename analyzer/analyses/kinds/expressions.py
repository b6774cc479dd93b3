"""Python semantics of the value-kind analysis: the abstract value of every expression.
This module evaluates expressions by kind, predicates, bindings and iteration, and the
call expression itself; the rest, one concern a module:

- `expression_access`: names, attributes and subscripts;
- `expression_literals`: constants, displays, slices, lambdas and comprehensions;
- `expression_operators`: arithmetic, comparisons, `and` / `or`, conditional expressions;
- `calls`: what calls return and emit."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.arity import has_star
from analyzer.analyses.kinds.call_values import as_attribute, shape_valued, written_kind
from analyzer.analyses.kinds.calls import CallSemantics, find_function
from analyzer.analyses.kinds.driver import Driver
from analyzer.analyses.kinds.expression_access import AccessSemantics, has_tensor
from analyzer.analyses.kinds.expression_literals import LiteralSemantics
from analyzer.analyses.kinds.expression_operators import OperatorSemantics, key_level, member_level
from analyzer.analyses.kinds.facts import BranchFact, EscapeFact, Fact, InplaceFact, IterationFact, Site
from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.kinds import ranks
from analyzer.analyses.kinds.module_state import submodule_items
from analyzer.analyses.kinds.narrowing import narrowed
from analyzer.analyses.kinds.shapes import row_count_level, row_of, rows_fixed_by_model
from analyzer.analyses.kinds.summaries import Frame
from analyzer.analyses.kinds.values import (
    DATA,
    KNOWN_WHEN_TRACED,
    NDARRAY,
    NONE,
    PASSED_LOCAL,
    ROWS,
    SHAPE,
    STATIC,
    UNKNOWN,
    Value,
    join,
    type_tag,
)
from analyzer.analyses.project import init_writes
from analyzer.analyses.project.index import FunctionKey
from analyzer.analyses.ranges import axis_sizes, config_sizes, index_bounds, keyed_ranges, symbolic_sizes, value_ranges
from analyzer.analyses.reach.log_only import message_parameters
from analyzer.frontend import expr_text, ir


class ExpressionEvaluator(AccessSemantics, LiteralSemantics, OperatorSemantics, CallSemantics):
    """Evaluates IR expressions to abstract values; emits facts when `sink` is set."""

    def __init__(self, analyzer: Driver, frame: Frame | None, module: ir.Module, function=None):
        self.analyzer = analyzer
        self.frame = frame
        self.module = module
        self.function = function
        self.sink: list[Fact] | None = None
        self.ctl: Level = STATIC
        self.unexported = False  # evaluating a statement that an export does not run
        self.nested: dict[int, ir.FunctionDef] = {}
        self.check_conditions: set[int] = set()  # ids of `p.item()` calls that only feed torch._check
        self.message_arguments: set[int] = set()  # ids of the conditional expressions passed as a message
        self.fixed_arity: set[int] = set()  # ids of iterables unpacked into a fixed number of names (`arity`)
        self.in_comprehension = 0  # how many comprehensions the expression being evaluated is in

    @property
    def rank_facts(self):
        """What the function body being evaluated proves of its parameters' ranks."""
        return self.function.rank_facts if self.function is not None else None

    # ------------------------------------------------------------------ facts

    def emit(self, fact: Fact) -> None:
        if self.sink is not None:
            self.sink.append(fact)

    def site(self, span: ir.Span) -> Site:
        if self.function is not None:
            return self.function.site(span)
        return Site(self.module.path, span=span)

    def text(self, node) -> str:
        return self.module.text(node.span) or expr_text(node)

    def predicate(self, test, state, construct: str, span: ir.Span, report: bool, exits_loop: bool = False) -> Level:
        """Evaluate a branch / loop predicate. Escapes and `and`/`or` inside a predicate
        that is itself reported are folded into its finding."""
        outer = self.sink
        inner: list[Fact] | None = [] if outer is not None else None
        self.sink = inner
        try:
            value = self.ev(test, state)
        finally:
            self.sink = outer
        level = value.truth_level()
        if isinstance(test, (ir.BoolOp, ir.UnaryOp)) or value.type == "tensor":
            level = max(level, self._bool_level(test, state))
        if level < DATA and self._passed_tensor_truth(test, value):
            level = DATA
        if level >= SHAPE and (self._decided_by_bound(test, state) or self._decided_by_range(test, state)):
            level = STATIC  # `expert_idx == self.num_experts` of a row index; `factor < 0` of a factor >= 0.1
        if level >= SHAPE and self.function is not None and self.function.decided_by_iteration(test):
            level = STATIC  # `len(lst) > 0` at a loop head whose every pass appends: `i > 0`
        if outer is not None:
            folded = level >= SHAPE if report else level >= DATA
            for f in inner:
                # The truth test of a tensor is the branch's finding; an explicit escape
                # in the predicate (`if m.sum().item() < k`) is a finding of its own.
                if folded and isinstance(f, EscapeFact) and f.how == "bool":
                    continue
                if folded and isinstance(f, BranchFact) and f.construct in ("and", "or"):
                    continue
                outer.append(f)
            if report and level >= SHAPE:
                site = self.site(span)
                by_control = exits_loop and level >= DATA and self._by_control(test, state)
                types = (("$pred", type_tag(value)),)
                if isinstance(test, (ir.BoolOp, ir.UnaryOp)):
                    types += (("$leaves", self._leaf_tags(test, state)),)
                outer.append(BranchFact(site, construct, level, self.text(test), exits_loop, types=types,
                                        by_control=by_control))
        return level

    def _passed_tensor_truth(self, test, value: Value) -> bool:
        """`if guidance:` on a parameter the caller passes as a tensor (known one on entry),
        converted or set to None on some path (`guidance = guidance.to(dtype) if ... else
        None`): when it is a tensor its truth reads its values, as it does of the parameter
        left as passed. A local that is a tensor or None (`targets = x * m if m is not None
        else None`) stays a None test."""
        if not (isinstance(test, ir.Name) and value.type == "tensor" and value.nullable and value.certain):
            return False
        passed = getattr(self.function, "args", {}).get(test.id) if self.function is not None else None
        return passed is not None and passed.is_certain_tensor and not passed.nullable \
            and passed.truth_level() >= DATA

    def _by_control(self, test, state) -> bool:
        """Whether the Python predicate ``test`` is data only through the branches its
        values were bound under (`BranchFact.by_control`), every operand of `and`/`or`."""
        if isinstance(test, ir.BoolOp):
            return all(self._by_control(v, state) for v in test.values)
        if isinstance(test, ir.UnaryOp) and test.op == "not":
            return self._by_control(test.operand, state)
        sink, self.sink = self.sink, None
        try:
            value = self.ev(test, dict(state))
        finally:
            self.sink = sink
        return value.type == "python" and value.ctl >= value.level

    def _leaf_tags(self, test, state) -> str:
        """``tensor`` when every operand under the ``not`` / ``and`` / ``or`` of ``test``
        is a tensor (the fixes make them ``torch.logical_*``), else what one of them is."""
        sink, self.sink = self.sink, None
        try:
            stack, tags = [test], []
            while stack:
                node = stack.pop()
                if isinstance(node, ir.UnaryOp) and node.op == "not":
                    stack.append(node.operand)
                elif isinstance(node, ir.BoolOp):
                    stack.extend(node.values)
                else:
                    tags.append(type_tag(self.ev(node, dict(state))))
        finally:
            self.sink = sink
        other = [t for t in tags if not t.startswith("tensor")]
        return other[0] if other else "tensor" + ("/bool" if all("/bool" in t for t in tags) else "")

    def _decided_by_bound(self, test, state) -> bool:
        if not isinstance(test, ir.Compare):
            return False
        sink, self.sink = self.sink, None
        try:
            key = symbolic_sizes.instance_key(self.frame)
            return index_bounds.decided(test, self.ev(test.left, dict(state)).bound,
                                        lambda text, size: symbolic_sizes.same(self.analyzer, key, text, size))
        finally:
            self.sink = sink

    def _decided_by_range(self, test, state) -> bool:
        sink, self.sink = self.sink, None
        try:
            return value_ranges.decided(test, self, state)
        finally:
            self.sink = sink

    def _bool_level(self, test, state) -> Level:
        if isinstance(test, ir.BoolOp):
            levels = []
            for v in test.values:
                levels.append(self._bool_level(v, state))
                if test.op == "and":
                    state = narrowed(state, v)  # what follows `isinstance(h, tuple) and` sees a tuple
            return max(levels, default=STATIC)
        if isinstance(test, ir.UnaryOp) and test.op == "not":
            return self._bool_level(test.operand, state)
        sink, self.sink = self.sink, None
        try:
            return self.ev(test, dict(state)).truth_level()
        finally:
            self.sink = sink

    # ------------------------------------------------------------------ binding

    def bind(self, target, value: Value, state: dict, augmented: bool = False) -> None:
        if isinstance(target, ir.Name):
            state[target.id] = value
        elif isinstance(target, (ir.Tuple, ir.List)):
            elems = self.unpack(value, target, len(target.elts))
            for t, v in zip(target.elts, elems):
                self.bind(t, v, state)
        elif isinstance(target, ir.Starred):
            self.bind(target.value, Value.container(value), state)
        elif isinstance(target, ir.Subscript):
            base = self.ev(target.value, state)
            index = self.ev(target.index, state)
            if base.type == "tensor":
                # An assumed tensor may be a list (`feature_maps[i] = ...`); a tensor index or
                # a multi-axis index (`state[1][:, :, i] = ...`) says it is not.
                if ranks.lower_rank_mask(base, index, target.index, value, self.rank_facts):
                    self.emit(InplaceFact(self.site(target.span), "mask-lower-rank", self.text(target),
                                          written_kind(base)))
                elif base.certain or has_tensor(index) or multi_axis(target.index):
                    self.emit(InplaceFact(self.site(target.span), "index-assign", self.text(target), written_kind(base)))
                if base.ref in KNOWN_WHEN_TRACED and isinstance(target.value, ir.Name):
                    # Written with values known when traced too (`w[idx] = 0` at sizes or
                    # constants) it stays known; with other values it is not.
                    known = shape_valued([base, index, value], {})
                    if known != base.ref:
                        state[target.value.id] = replace(base, ref=known)
            elif base.type == "container" and isinstance(target.value, ir.Name):
                level = base.level
                if base.ref == "dict" and index.type in ("python", "container", "unknown"):
                    level = max(level, key_level(index))  # keys from data (`d[t.item()] = v`): which keys exist is data
                state[target.value.id] = replace(base, elem=join(base.elem, value), elems=None, level=level)
        elif isinstance(target, ir.Attribute):
            owner = self.ev(target.value, state)
            collect = self.frame.collect_attributes if self.frame is not None else None
            if collect is not None and owner.type == "module" and isinstance(target.value, ir.Name) and target.value.id == "self":
                prior = collect.get(target.attr)
                if prior is not None and init_writes.replaces(self.analyzer, self.frame, target):
                    prior = None  # an unconditional write of the instance's own `__init__`
                prior = self.analyzer.resolve(prior) if prior is not None else None
                collect[target.attr] = join(prior, as_attribute(value))

    def unpack(self, value: Value, target, n: int) -> list[Value]:
        if value.type == "container" and value.elems is not None and len(value.elems) == n and not has_star(target):
            return list(value.elems)
        if value.type == "tensor":
            if value.origin == "row":
                # A row of a tensor being iterated (`for t, h, w in grid_thw`): the
                # iteration is the finding; the row's length is the tensor's last sizes.
                return [Value.tensor(value.certain, value.shape_level)] * n
            if value.origin in ("input", PASSED_LOCAL):
                # An unpacked forward input is taken for the tuple it most likely is:
                # `cos, sin = position_embeddings` under a `torch.Tensor` annotation.
                return [Value.tensor(False, value.shape_level)] * n
            if value.certain and has_star(target):
                # `a, b = t` is no hazard: any input that runs in eager has exactly two rows,
                # and the trace's two selections are right for all of them. With a star the
                # rest has as many rows as the example's size less the names.
                self.emit(IterationFact(self.site(target.span), "unpack", self.text(target)))
            return [Value.tensor(value.certain, value.shape_level)] * n
        if value.type in ("container", "modules"):
            level = value.level
            return [(value.elem or UNKNOWN).tainted(level)] * n
        if value.type == "python":
            return [value] * n
        return [UNKNOWN.tainted(value.level)] * n

    def iterate(self, iterable: Value, node, how: str, span) -> tuple[Value, Level]:
        """(element value, level of the trip count) for `for x in iterable`."""
        if iterable.type == "tensor":
            row = row_of(iterable)
            if row_count_level(iterable) >= DATA:
                # `for e in t.nonzero()`: the trip count is data (a data loop, UT102).
                return row, DATA
            if iterable.certain and id(node) not in self.fixed_arity and not rows_fixed_by_model(iterable):
                self.emit(IterationFact(self.site(span), how, self.text(node)))
            return row, STATIC
        if iterable.type == "container" and iterable.ref == ROWS and id(node) not in self.fixed_arity:
            # `for s in x.unbind(1)`: unrolled over the example's size of that dimension.
            self.emit(IterationFact(self.site(span), how, self.text(node)))
        submodule = submodule_items(iterable, node)
        if submodule is not None:
            return submodule, iterable.ctl
        if iterable.type == "modules":
            return iterable.elem or UNKNOWN, iterable.ctl
        if iterable.type == "container":
            return iterable.elem or UNKNOWN, max(iterable.level, iterable.ctl)
        if iterable.type == "python":
            if iterable.ref == NDARRAY:
                # The rows of `t.numpy()`: as many as the tensor's size (the escape is the finding).
                return iterable, min(iterable.shape_level, iterable.level)
            return Value.python(iterable.level), iterable.level
        if iterable.type == "unknown":
            return UNKNOWN.tainted(iterable.level), STATIC
        return UNKNOWN, STATIC

    # ------------------------------------------------------------------ expressions

    def ev(self, e, state: dict) -> Value:
        method = getattr(self, "_ev_" + type(e).__name__, None)
        if method is None:
            return UNKNOWN
        return method(e, state)


    # ------------------------------------------------------------------ calls

    def _note_message_arguments(self, func: Value, e) -> None:
        """The conditional expressions in what ``e`` passes to a parameter of a project
        function that only a message reads (`log_only.message_parameters`): which text a
        failing check shows is no hazard, whatever picks it."""
        if func.type != "function" or not isinstance(func.ref, FunctionKey):
            return
        module = self.analyzer.module_ir(func.ref.path)
        fn = find_function(module, func.ref.qualname) if module is not None else None
        if fn is None:
            return
        names = message_parameters(fn)
        if not names:
            return
        positional = [p.name for p in fn.params if p.kind in ("posonly", "positional")][1 if func.elem is not None else 0:]
        for i, a in enumerate(e.args):
            if a.star:
                break
            name = a.keyword if a.keyword is not None else (positional[i] if i < len(positional) else None)
            if name in names:
                self.message_arguments.update(id(x) for x in ir.walk_expression(a.value) if isinstance(x, ir.IfExp))

    def _ev_Call(self, e, state):
        func = self.ev(e.func, state)
        if func.type == "ext" and func.ref in api.RUNTIME_CHECKS and e.args and _is_item_call(e.args[0].value):
            # `torch._check(p.item())`: the value only feeds a runtime check (torch.export
            # keeps it as an assertion; a trace drops it, as it drops an `assert`). It is
            # not used in the computation, so it is no escape. This is also what --fix
            # writes for `assert p`.
            self.check_conditions.add(id(e.args[0].value))
        self._note_message_arguments(func, e)
        args = []
        kwargs = {}
        for a in e.args:
            v = self.ev(a.value, state)
            if a.star == "*":
                args.append(Value("starred", elem=v))
            elif a.star == "**":
                kwargs["**"] = v
            elif a.keyword is not None:
                kwargs[a.keyword] = v
            else:
                args.append(v)
        # `lst.append(v)` grows a Python list: the list's length is as dynamic as the branch.
        if isinstance(e.func, ir.Attribute) and isinstance(e.func.value, ir.Name) and e.func.attr in ("append", "extend", "insert", "add", "update", "setdefault"):
            owner = state.get(e.func.value.id)
            if owner is not None and owner.type == "container":
                added = args[-1] if args else UNKNOWN
                level = owner.level
                if e.func.attr == "extend" and added.type == "container":
                    added = added.elem or UNKNOWN
                elif e.func.attr == "update" and owner.interval is not None:
                    added = keyed_ranges.update_items(owner, added) or added  # one dict display into another
                if e.func.attr in ("setdefault", "add") and args:
                    # A new key (a set's item) only when no equal one is there: how many there
                    # are is as dynamic as the keys' values (`d.setdefault(t.item(), [])`).
                    level = max(level, key_level(args[0]))
                elif e.func.attr == "update" and args:
                    level = max(level, member_level(args[0]))
                if e.func.attr == "setdefault":
                    added = args[1] if len(args) > 1 else NONE
                state[e.func.value.id] = replace(owner, elems=None, elem=join(owner.elem, added), level=level)
                # `setdefault` returns what the key holds: the default or an earlier item
                return join(owner.elem, added) if e.func.attr == "setdefault" else NONE
        result = value_ranges.after_call(func, args, e, self.call(func, args, kwargs, e, state))
        if result.type == "tensor" and result.rank is None and func.type in ("ext", "method", "module"):
            result = replace(result, rank=ranks.of_call(func, args, kwargs, e, self.rank_facts))
        elif result.type == "container" and result.ref == "shape" and func.type == "method" \
                and func.elem is not None and func.elem.type == "tensor":
            result = replace(result, rank=func.elem.rank)  # `x.size()`: as many sizes as x has dimensions
        if result.type == "tensor" and (result.bound is not None or func.type in ("ext", "method")):
            result = replace(result, bound=_bound_after(func, args, e))
        if result.type == "tensor" and result.bound is None and func.type in ("ext", "module"):
            result = replace(result, bound=config_sizes.call_bound(self.analyzer, self.frame, func, e))
        elif result.type == "container" and func.type in ("ext", "method"):
            result = _indices_bounded(func, args, e, result)
        if result.type == "tensor" and result.bound is not None:
            # a size written as text here (`self.n`) is named by where it came from
            result = replace(result, bound=symbolic_sizes.bound_named(self.analyzer, symbolic_sizes.instance_key(self.frame),
                                                                      result.bound))
        if (isinstance(e.func, ir.Attribute) and isinstance(e.func.value, ir.Name) and func.type == "method"
                and (api.is_inplace_method(e.func.attr) or e.func.attr in api.INDEX_PUT_METHODS)):
            owner = state.get(e.func.value.id)
            if owner is not None and owner.type == "tensor" and owner.ref in KNOWN_WHEN_TRACED and (
                    api.is_random(e.func.attr)
                    or not all(a.ref in KNOWN_WHEN_TRACED or a.type in ("python", "none") for a in args)):
                # `acc.add_(x)`, `noise.normal_()`: no longer shape-valued
                state[e.func.value.id] = replace(owner, ref=None, interval=None)
            if owner is not None and owner.type == "tensor" and owner.bound is not None:
                state[e.func.value.id] = replace(state[e.func.value.id], bound=None)  # written: no longer bounded
        return result


def _bound_after(func: Value, args, node) -> tuple | None:
    """The static bound (`index_bounds`) of the tensor a torch function or a tensor method returns."""
    bounds = [a.bound if a.type == "tensor" else None for a in args]
    if func.type == "ext":
        return index_bounds.after_call(func.ref, bounds, node)
    recv = func.elem
    if func.type == "method" and recv is not None and recv.type == "tensor" and isinstance(func.ref, str):
        return index_bounds.after_call(func.ref, [recv.bound, *bounds], node)
    return None


def _indices_bounded(func: Value, args, node, result: Value) -> Value:
    """``result`` (the tuple `topk` / `sort` return) with its indices' bound (`axis_sizes`)."""
    if func.type == "ext":
        name, recv = func.ref, args[0] if args else None
    else:
        name, recv = func.ref, func.elem
    if not isinstance(name, str) or recv is None or recv.type != "tensor":
        return result
    piece = axis_sizes.index_piece(name, recv.bound, node)
    if piece is None or piece[0] < 0 or result.elem is None:
        return result
    elems = [result.elem, result.elem]
    elems[piece[0]] = replace(result.elem, bound=piece[1])
    return replace(result, elems=tuple(elems))


def multi_axis(index) -> bool:
    return isinstance(index, ir.Tuple) and any(
        isinstance(e, ir.Slice) or (isinstance(e, ir.Const) and e.value is Ellipsis) for e in index.elts)


def _is_item_call(node) -> bool:
    return (isinstance(node, ir.Call) and not node.args and isinstance(node.func, ir.Attribute)
            and node.func.attr == "item")
