"""Python semantics of the value-kind analysis: the abstract value of every expression
(names, constants, containers, operators, comparisons, comprehensions, predicates and
bindings). Calls are `analyzer.analyses.calls`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from analyzer.analyses import torch_api as api
from analyzer.analyses.arity import has_star
from analyzer.analyses.call_values import as_attribute, as_index_level, index_shape_level, view_origin, written_kind
from analyzer.analyses.calls import CallSemantics
from analyzer.analyses.facts import BranchFact, EscapeFact, Fact, InplaceFact, IterationFact, LoopFact, OpFact, Site
from analyzer.analyses.levels import Level
from analyzer.analyses.module_state import parameter_of, state_of_unknown, submodule_items
from analyzer.analyses.picks import picked_item
from analyzer.analyses.project import ClassKey, FunctionKey
from analyzer.analyses.shapes import row_count_level, row_of, size_level
from analyzer.analyses.summaries import Frame
from analyzer.analyses.values import (
    DATA,
    KNOWN_WHEN_TRACED,
    NDARRAY,
    NONE,
    ROWS,
    SHAPE,
    STATIC,
    STATIC_PY,
    UNKNOWN,
    Value,
    as_setting,
    join,
    join_all,
    known_level,
    known_python_level,
    known_ref,
    type_tag,
)
from analyzer.frontend import expr_text, ir

TRAINING_FLAG = Value("python", STATIC, ref="training")

if TYPE_CHECKING:
    from analyzer.analyses.kinds import KindAnalyzer


class ExpressionEvaluator(CallSemantics):
    """Evaluates IR expressions to abstract values; emits facts when `sink` is set."""

    def __init__(self, analyzer: KindAnalyzer, frame: Frame | None, module: ir.Module, function=None):
        self.analyzer = analyzer
        self.frame = frame
        self.module = module
        self.function = function
        self.sink: list[Fact] | None = None
        self.ctl: Level = STATIC
        self.unexported = False  # evaluating a statement that an export does not run
        self.nested: dict[int, ir.FunctionDef] = {}
        self.check_conditions: set[int] = set()  # ids of `p.item()` calls that only feed torch._check
        self.fixed_arity: set[int] = set()  # ids of iterables unpacked into a fixed number of names (`arity`)

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
                outer.append(BranchFact(site, construct, level, self.text(test), exits_loop,
                                        types=(("$pred", type_tag(value)),)))
        return level

    def _bool_level(self, test, state) -> Level:
        if isinstance(test, ir.BoolOp):
            return max((self._bool_level(v, state) for v in test.values), default=STATIC)
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
                if base.certain or _has_tensor(index) or multi_axis(target.index):
                    self.emit(InplaceFact(self.site(target.span), "index-assign", self.text(target), written_kind(base)))
                if base.ref in KNOWN_WHEN_TRACED and isinstance(target.value, ir.Name) and value.ref not in KNOWN_WHEN_TRACED:
                    state[target.value.id] = replace(base, ref=None)  # written with other values
            elif base.type == "container" and isinstance(target.value, ir.Name):
                level = base.level
                if base.ref == "dict" and index.type in ("python", "container", "unknown"):
                    level = max(level, index.level)  # keys from data (`d[t.item()] = v`): which keys exist is data
                state[target.value.id] = replace(base, elem=join(base.elem, value), elems=None, level=level)
        elif isinstance(target, ir.Attribute):
            owner = self.ev(target.value, state)
            collect = self.frame.collect_attributes if self.frame is not None else None
            if collect is not None and owner.type == "module" and isinstance(target.value, ir.Name) and target.value.id == "self":
                prior = collect.get(target.attr)
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
            if value.origin == "input":
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
            if iterable.certain and id(node) not in self.fixed_arity:
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

    def _ev_Const(self, e, state):
        return NONE if e.value is None else STATIC_PY

    def _ev_FormattedString(self, e, state):
        for v in e.values:
            self.ev(v, state)
        return STATIC_PY

    def _ev_Name(self, e, state):
        if e.id in state:
            value = state[e.id]
        elif self.frame is not None and e.id in self.frame.closure:
            value = self.frame.closure[e.id]
        else:
            value = self.analyzer.global_value(self.module, e.id)
            if value is None:
                return Value.ext("builtins." + e.id)
        return self.analyzer.resolve(value)

    def _ev_Starred(self, e, state):
        return self.ev(e.value, state)

    def _ev_NamedExpr(self, e, state):
        value = self.ev(e.value, state)
        state[e.target.id] = value
        return value

    def _ev_Tuple(self, e, state):
        return self._sequence(e, state)

    def _ev_List(self, e, state):
        return self._sequence(e, state)

    def _ev_Set(self, e, state):
        return self._sequence(e, state)

    def _sequence(self, e, state):
        values = [self.ev(x, state) for x in e.elts]
        if any(isinstance(x, ir.Starred) for x in e.elts):
            return Value.container(join_all(v.elem if v.type == "container" else v for v in values) or UNKNOWN,
                                   level=max((v.level for v in values if v.type == "container"), default=STATIC))
        return Value.container(elems=tuple(values))

    def _ev_Dict(self, e, state):
        values = [self.ev(v, state) for k, v in e.items] + [self.ev(k, state) for k, v in e.items if k is not None]
        return Value.container(join_all(values[: len(e.items)]) or UNKNOWN, ref="dict")

    def _ev_Slice(self, e, state):
        parts = [self.ev(x, state) for x in (e.lower, e.upper, e.step) if x is not None]
        return Value("python", max((as_index_level(p) for p in parts), default=STATIC), ref="slice")

    def _ev_Lambda(self, e, state):
        return Value("function", ref=("lambda", id(e)))

    def _ev_OpaqueExpr(self, e, state):
        for c in e.children:
            self.ev(c, state)
        return UNKNOWN

    def _ev_Attribute(self, e, state):
        base = self.ev(e.value, state)
        return self.attribute(base, e.attr, e)

    def attribute(self, base: Value, attr: str, node) -> Value:
        t = base.type
        if t == "ext":
            return Value.ext(f"{base.ref}.{attr}")
        if t == "pymodule":
            module = self.analyzer.module_ir(base.ref) if base.ref else None
            if module is None:
                return UNKNOWN
            return self.analyzer.resolve(self.analyzer.global_value(module, attr) or UNKNOWN)
        if t == "tensor":
            if attr in api.SHAPE_ATTRIBUTES:
                lvl = base.shape_level
                return Value.container(Value.python(lvl), level=lvl, ref="shape")
            if attr in api.STATIC_ATTRIBUTES:
                return STATIC_PY
            if attr in api.TENSOR_ATTRIBUTES:
                return replace(base, origin=view_origin(base) if attr in api.VIEW_ATTRIBUTES else None)
            return Value("method", ref=attr, elem=base)
        if t == "module":
            return self.module_attribute(base, attr, node)
        if t in ("modules", "super"):  # `super().forward`: the base class's method (`call_method`)
            return Value("method", ref=attr, elem=base)
        if t == "class":
            info = self.analyzer.class_info(base.ref) if isinstance(base.ref, ClassKey) else None
            if info is not None:
                owner, method = self.analyzer.find_method(base.ref, attr)
                if method is not None:
                    return Value("function", ref=FunctionKey(owner.key.path, method.qualname))
            return STATIC_PY
        if t in ("container", "python", "none"):
            if t == "container" and attr in ("shape",):
                return Value.container(Value.python(base.level), level=base.level, ref="shape")
            return Value("method", ref=attr, elem=base)
        if t == "unknown":
            if attr in api.STATIC_ATTRIBUTES:
                return STATIC_PY
            if attr in api.SHAPE_ATTRIBUTES:
                return Value.container(Value.python(SHAPE), level=SHAPE, ref="shape")
            return Value("method", ref=attr, elem=base) if base.level >= DATA else UNKNOWN
        return UNKNOWN

    def module_attribute(self, base: Value, attr: str, node) -> Value:
        if attr == "training":
            return TRAINING_FLAG  # False in an export: what it guards is training-only code
        key = base.ref
        if isinstance(key, ClassKey):
            attrs = self.analyzer.attributes(key)
            if attr in attrs:
                return self.analyzer.resolve(attrs[attr])
            owner, method = self.analyzer.find_method(key, attr)
            if method is not None:
                decorators = {expr_text(d) for d in method.decorators}
                bound = Value("function", ref=FunctionKey(owner.key.path, method.qualname),
                              elem=None if "staticmethod" in decorators else base)
                if "property" in decorators or any(d.endswith(".getter") for d in decorators):
                    return self.call(bound, [], {}, node, {})
                return bound
            if attr in ("weight", "bias"):
                return parameter_of(base)
            if attr in ("register_buffer", "register_parameter"):
                return Value("method", ref=attr, elem=base)  # records the buffer (`call_method`)
            return UNKNOWN
        if isinstance(key, str):
            if attr in ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias",
                        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "pe", "num_batches_tracked"):
                return parameter_of(base)
            if attr in ("forward", "__call__"):
                return base
            return STATIC_PY
        return base if attr in ("forward", "__call__") else state_of_unknown(base)

    def _ev_Subscript(self, e, state):
        base = self.ev(e.value, state)
        index = self.ev(e.index, state)
        return self.subscript(base, index, e.index)

    def subscript(self, base: Value, index: Value, index_node) -> Value:
        t = base.type
        if t == "tensor":
            shape_level = max(base.shape_level, index_shape_level(index))
            # Basic indexing (ints, slices, None, ...) gives a view; a tensor index a copy (origin "copy").
            # Items of a tensor known when traced (and not picked by data), picked by what is
            # known too, are known.
            parts = index.elems if index.type == "container" and index.elems is not None else (index,)
            known = base.ref in KNOWN_WHEN_TRACED and base.ctl <= known_level(base.ref)
            ref = _all_shape_valued([base, *(p for p in parts if p.type == "tensor")],
                                    [p for p in parts if p.type != "tensor"]) if known else None
            return Value.tensor(base.certain, shape_level, ref=ref, origin="copy" if _has_tensor(index) else view_origin(base))
        if t == "container":
            if base.ref == "shape" and base.level >= DATA and size_level(base.level, index_node) < DATA:
                return Value.python(SHAPE)
            if base.elems is not None and isinstance(index_node, ir.Const) and isinstance(index_node.value, int):
                try:
                    return base.elems[index_node.value]
                except IndexError:
                    return UNKNOWN
            if isinstance(index_node, ir.Slice) or (index.type == "python" and index.ref == "slice"):
                return replace(base, elems=None, level=max(base.level, index.level))
            return picked_item(base.elem or UNKNOWN, max(index.level, base.ctl))
        if t == "modules":
            return base.elem or UNKNOWN
        if t == "python":
            return Value.python(max(base.level, index.level))
        if t == "unknown":
            return UNKNOWN.tainted(base.level)
        if t == "ext":
            return base  # typing subscripts: Optional[Tensor]
        return UNKNOWN

    def _ev_BinOp(self, e, state):
        left, right = self.ev(e.left, state), self.ev(e.right, state)
        if e.op == "//" and (left.is_certain_tensor or right.is_certain_tensor) and not self.unexported:
            self.emit(OpFact(self.site(e.span), "operator.floordiv", "//"))
        return self.binop(e.op, left, right)

    def binop(self, op: str, a: Value, b: Value) -> Value:
        a, b = as_setting(a), as_setting(b)  # `orig_width / self.patch_width` is arithmetic
        if a.type == "tensor" or b.type == "tensor":
            tensors = [v for v in (a, b) if v.type == "tensor"]
            certain = any(v.certain for v in tensors)
            others = [v for v in (a, b) if v.type != "tensor"]
            if not certain and any(v.type in ("unknown",) for v in others):
                return UNKNOWN.tainted(max(a.ctl, b.ctl))
            ref = "bool" if op in ("&", "|", "^") and all(v.ref == "bool" for v in tensors) else None
            ref = _all_shape_valued(tensors, others) or ref
            return Value.tensor(certain, max(v.shape_level for v in tensors), ref=ref)
        if a.type == "container" and b.type == "container" and op == "+":
            elems = a.elems + b.elems if a.elems is not None and b.elems is not None else None
            return Value.container(join(a.elem, b.elem), elems=elems, level=max(a.level, b.level), ref=a.ref)
        if a.type == "container" and op == "*":
            return Value.container(a.elem, level=max(a.level, b.level))
        if a.type in ("python", "none") and b.type in ("python", "none"):
            return Value.python(max(a.level, b.level))
        if a.type == "unknown" or b.type == "unknown":
            return Value("unknown", max(a.level, b.level))
        return Value("unknown", max(a.level, b.level))

    def _ev_UnaryOp(self, e, state):
        v = self.ev(e.operand, state)
        if e.op == "not":
            if v.is_certain_tensor:
                self.emit(EscapeFact(self.site(e.span), "bool", "python", self.text(e)))
            return Value.python(v.truth_level())
        if v.type == "tensor" and e.op == "~":
            return v
        return v if v.type in ("tensor", "python", "unknown") else UNKNOWN

    def _ev_Compare(self, e, state):
        values = [self.ev(e.left, state)] + [self.ev(c, state) for c in e.comparators]
        if all(op in ("is", "is not") for op in e.ops):
            if any(isinstance(x, ir.Const) and x.value is None for x in [e.left, *e.comparators]):
                # Never data: where None-ness was decided by data, that decision (the
                # branch that bound the value) is the hazard, reported where it is.
                return STATIC_PY
            return Value.python(max(v.identity_level() for v in values))
        if any(op in ("in", "not in") for op in e.ops):
            if any(v.type == "tensor" for v in values):
                return UNKNOWN
            return Value.python(max((v.level for v in values if v.type in ("python", "container")), default=STATIC))
        tensors = [v for v in values if v.type == "tensor"]
        if tensors:
            certain = any(v.certain for v in tensors)
            if not certain and any(v.type == "unknown" for v in values):
                return UNKNOWN
            shape_valued = _all_shape_valued(tensors, [v for v in values if v.type != "tensor"])
            return Value.tensor(certain, max(v.shape_level for v in tensors), ref=shape_valued or "bool")
        if any(v.type == "unknown" for v in values):
            return Value("unknown", max(v.level for v in values))
        return Value.python(max(max(v.level for v in values), max(v.ctl for v in values)))

    def _ev_BoolOp(self, e, state):
        values = []
        level = STATIC
        for i, sub in enumerate(e.values):
            v = self.ev(sub, state)
            values.append(v)
            if i < len(e.values) - 1:
                truth = v.truth_level()
                level = max(level, truth)
                if truth >= DATA and v.is_certain_tensor:
                    self.emit(BranchFact(self.site(e.span), e.op, DATA, self.text(e)))
        result = join_all(values) or UNKNOWN
        return result.tainted(level) if result.type != "tensor" else result

    def _ev_IfExp(self, e, state):
        truth = self.function.traced_truth(e.test, state, training=False) if self.function is not None else None
        if truth is not None:
            return self.ev(e.body if truth else e.orelse, state)  # decided when traced: one side runs
        level = self.predicate(e.test, state, "ifexp", e.span, report=True)
        emitted = len(self.sink) - 1 if self.sink and level >= SHAPE else None
        body = self.ev(e.body, state)
        orelse = self.ev(e.orelse, state)
        if emitted is not None and isinstance(self.sink[emitted], BranchFact):
            fact = self.sink[emitted]  # the sides' types, for the torch.where fix
            self.sink[emitted] = replace(fact, types=fact.types + (("$else", type_tag(orelse)), ("$then", type_tag(body))))
        return (join(body, orelse) or UNKNOWN).tainted(level)

    def _ev_Comprehension(self, e, state):
        inner = dict(state)
        level = STATIC
        for g in e.generators:
            iterable = self.ev(g.iter, inner)
            elem, lvl = self.iterate(iterable, g.iter, "comprehension", g.iter.span)
            if lvl >= DATA and iterable.type == "tensor":
                # Over the rows of a tensor sized by data: as many items as the data says.
                self.emit(LoopFact(self.site(g.iter.span), "comprehension", DATA, STATIC, (), self.text(g.iter)))
            level = max(level, lvl)
            self.bind(g.target, elem, inner)
            for cond in g.ifs:
                level = max(level, self.predicate(cond, inner, "filter", cond.span, report=True))
        elt = self.ev(e.elt, inner)
        if e.key is not None:
            self.ev(e.key, inner)
        if e.kind == "generator":
            return Value.container(elt, level=level, ref="generator")
        return Value.container(elt, level=level, ref=e.kind)

    # ------------------------------------------------------------------ calls

    def _ev_Call(self, e, state):
        func = self.ev(e.func, state)
        if func.type == "ext" and func.ref in api.RUNTIME_CHECKS and e.args and _is_item_call(e.args[0].value):
            # `torch._check(p.item())`: the value only feeds a runtime check (torch.export
            # keeps it as an assertion; a trace drops it, as it drops an `assert`). It is
            # not used in the computation, so it is no escape. This is also what --fix
            # writes for `assert p`.
            self.check_conditions.add(id(e.args[0].value))
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
                if e.func.attr == "extend" and added.type == "container":
                    added = added.elem or UNKNOWN
                state[e.func.value.id] = replace(owner, elems=None, elem=join(owner.elem, added))
                return NONE
        result = self.call(func, args, kwargs, e, state)
        if (isinstance(e.func, ir.Attribute) and isinstance(e.func.value, ir.Name) and func.type == "method"
                and (api.is_inplace_method(e.func.attr) or e.func.attr in api.INDEX_PUT_METHODS)):
            owner = state.get(e.func.value.id)
            if owner is not None and owner.type == "tensor" and owner.ref in KNOWN_WHEN_TRACED \
                    and not all(a.ref in KNOWN_WHEN_TRACED or a.type in ("python", "none") for a in args):
                state[e.func.value.id] = replace(owner, ref=None)  # `acc.add_(x)`: no longer shape-valued
        return result


def _all_shape_valued(tensors, others) -> str | None:
    """The `ref` of an operation on tensors known when traced (shape- or param-valued) and
    Python values of at most shape level (an unresolved attribute such as
    `self.padding_right` counts as one: quiet when unsure); None for anything else."""
    if all(v.ref in KNOWN_WHEN_TRACED for v in tensors) and all(known_python_level(v) <= SHAPE for v in others):
        return known_ref({v.ref for v in tensors}, max((known_python_level(v) for v in others), default=STATIC))
    return None


def view_base(expr) -> str | None:
    """The name whose storage ``expr`` views, for `y[0]`, `y.view(-1)`, `y.T[1:]`; None
    for anything else (a copy, a temporary's view)."""
    if isinstance(expr, ir.Subscript):
        inner = expr.value
    elif isinstance(expr, ir.Attribute) and expr.attr in api.VIEW_ATTRIBUTES:
        inner = expr.value
    elif (isinstance(expr, ir.Call) and isinstance(expr.func, ir.Attribute) and expr.func.attr in api.VIEW_METHODS
          and expr.func.attr not in api.TUPLE_METHODS):
        inner = expr.func.value
    else:
        return None
    return inner.id if isinstance(inner, ir.Name) else view_base(inner)


def multi_axis(index) -> bool:
    return isinstance(index, ir.Tuple) and any(
        isinstance(e, ir.Slice) or (isinstance(e, ir.Const) and e.value is Ellipsis) for e in index.elts)


def _has_tensor(index: Value) -> bool:
    if index.type == "tensor":
        return True
    return index.type == "container" and index.elems is not None and any(_has_tensor(e) for e in index.elems)


def _is_item_call(node) -> bool:
    return (isinstance(node, ir.Call) and not node.args and isinstance(node.func, ir.Attribute)
            and node.func.attr == "item")
