"""Python semantics of operators, for the value-kind analysis: arithmetic, unary
operators, comparisons, `and` / `or` and conditional expressions."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds import ranks
from analyzer.analyses.kinds.facts import BranchFact, EscapeFact, OpFact
from analyzer.analyses.kinds.narrowing import narrowed
from analyzer.analyses.kinds.values import (
    DATA,
    FALSE_FLAG,
    KNOWN_WHEN_TRACED,
    SHAPE,
    STATIC,
    STATIC_PY,
    TRUE_FLAG,
    UNKNOWN,
    Value,
    as_setting,
    flag_truth,
    join,
    join_all,
    known_python_level,
    known_ref,
    type_tag,
    unknown_level,
)
from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.ranges.axis_sizes import broadcast
from analyzer.analyses.ranges.value_ranges import arithmetic, negated, with_literal
from analyzer.analyses.kinds.empty_guards import guards_an_escape
from analyzer.frontend import ir


class OperatorSemantics:
    """The operators of `ExpressionEvaluator` (a mixin over its state)."""

    def _ev_BinOp(self, e, state):
        left, right = self.ev(e.left, state), self.ev(e.right, state)
        left, right = with_literal(left, e.left, right), with_literal(right, e.right, left)
        if e.op == "//" and (left.is_certain_tensor or right.is_certain_tensor) and not self.unexported:
            self.emit(OpFact(self.site(e.span), "operator.floordiv", "//"))
        return self.binop(e.op, left, right)

    def binop(self, op: str, a: Value, b: Value) -> Value:
        out = self._binop_kind(op, a, b)
        if a.interval is not None and b.interval is not None and out.type == "python":
            out = replace(out, interval=arithmetic(op, a.interval, b.interval))
        return out

    def _binop_kind(self, op: str, a: Value, b: Value) -> Value:
        a, b = as_setting(a), as_setting(b)  # `orig_width / self.patch_width` is arithmetic
        if a.type == "tensor" or b.type == "tensor":
            tensors = [v for v in (a, b) if v.type == "tensor"]
            certain = any(v.certain for v in tensors)
            others = [v for v in (a, b) if v.type != "tensor"]
            if not certain and any(v.type in ("unknown",) for v in others):
                return UNKNOWN.tainted(max(a.ctl, b.ctl))
            ref = "bool" if op in ("&", "|", "^") and all(v.ref == "bool" for v in tensors) else None
            ref = all_shape_valued(tensors, others) or ref
            bound = broadcast([v.bound for v in tensors]) if op in ("+", "-", "*", "/") else None
            rank = ranks.matmul(a, b) if op == "@" else ranks.broadcast(
                [v.rank for v in tensors] + [None for v in others if not ranks.number_like(v)])
            return replace(Value.tensor(certain, max(v.shape_level for v in tensors), ref=ref), bound=bound, rank=rank)
        if a.type == "container" and b.type == "container" and op == "+":
            elems = a.elems + b.elems if a.elems is not None and b.elems is not None else None
            return Value.container(join(a.elem, b.elem), elems=elems, level=max(a.level, b.level), ref=a.ref)
        if a.type == "container" and op == "*":
            return Value.container(a.elem, level=max(a.level, b.level))
        if a.type in ("python", "none") and b.type in ("python", "none"):
            # bound under the branches its operands were (`steps + 1` of a counter of a data loop)
            return Value("python", max(a.level, b.level), ctl=max(a.ctl, b.ctl))
        if a.type == "unknown" or b.type == "unknown":
            return Value("unknown", max(a.level, b.level))
        return Value("unknown", max(a.level, b.level))

    def _ev_UnaryOp(self, e, state):
        v = self.ev(e.operand, state)
        if e.op == "not":
            if v.is_certain_tensor:
                self.emit(EscapeFact(self.site(e.span), "bool", "python", self.text(e)))
            truth = flag_truth(v)
            if truth is not None and v.level == STATIC:
                return Value("python", STATIC, ref=FALSE_FLAG if truth else TRUE_FLAG)  # `not exporting()`: a known flag
            return Value.python(v.truth_level())
        if v.type == "tensor" and v.bound is not None and v.bound[0] != "axis":
            v = replace(v, bound=None)  # same shape, other values: a size stays, a bound on values does not
        if v.interval is not None and e.op != "+":
            v = replace(v, interval=negated(v.interval) if e.op == "-" else None)
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
            # `x in c` looks at x's value and at c's items (a dict's keys: its level).
            return Value.python(max([compared_level(v) for v in values[:-1]] + [member_level(values[-1])]))
        tensors = [v for v in values if v.type == "tensor"]
        if tensors:
            certain = any(v.certain for v in tensors)
            if not certain and any(v.type == "unknown" for v in values):
                return UNKNOWN
            shape_valued = all_shape_valued(tensors, [v for v in values if v.type != "tensor"])
            return replace(Value.tensor(certain, max(v.shape_level for v in tensors), ref=shape_valued or "bool"),
                           rank=ranks.broadcast([v.rank for v in tensors] + [
                               None for v in values if v.type != "tensor" and not ranks.number_like(v)]))
        if any(v.type == "unknown" for v in values):
            known = [compared_level(v) for v in values if v.type != "unknown"]
            return Value("unknown", max([v.level for v in values] + known))
        return Value("python", max(compared_level(v) for v in values), ctl=max(v.ctl for v in values))

    def _ev_BoolOp(self, e, state):
        values = []
        level = STATIC
        seen = state
        for i, sub in enumerate(e.values):
            v = self.ev(sub, seen)
            if e.op == "and":
                seen = narrowed(seen, sub)  # `isinstance(h, tuple) and len(h) == 2`: a tuple's length
            values.append(v)
            if i < len(e.values) - 1:
                truth = v.truth_level()
                level = max(level, truth)
                if truth >= DATA and v.is_certain_tensor:
                    self.emit(BranchFact(self.site(e.span), e.op, DATA, self.text(e)))
        if self.sink and isinstance(self.sink[-1], BranchFact) and self.sink[-1].construct == e.op \
                and self.sink[-1].site == self.site(e.span):
            # for the fix: `torch.logical_and` of the operands is only their truth when all are tensors
            operands = "tensor" if all(v.is_certain_tensor and not v.nullable for v in values) else "mixed"
            self.sink[-1] = replace(self.sink[-1], types=(("$operands", operands),))
        result = join_all(values) or UNKNOWN
        return result.tainted(level) if result.type != "tensor" else result

    def _ev_IfExp(self, e, state):
        truth = self.function.traced_truth(e.test, state, training=False) if self.function is not None else None
        if truth is not None:
            return self.ev(e.body if truth else e.orelse, state)  # decided when traced: one side runs
        # a choice of message text (`log_only.message_choices`) is no hazard
        # nor is a test of emptiness that only keeps an escape from failing (`empty_guards`)
        report = id(e) not in self.message_arguments and not guards_an_escape(e) and (
            self.function is None or id(e) not in self.function.message_choices)
        level = self.predicate(e.test, state, "ifexp", e.span, report=report)
        emitted = len(self.sink) - 1 if self.sink and level >= SHAPE else None
        body = self.ev(e.body, state)
        orelse = self.ev(e.orelse, state)
        body, orelse = with_literal(body, e.body, orelse), with_literal(orelse, e.orelse, body)
        if emitted is not None and isinstance(self.sink[emitted], BranchFact):
            fact = self.sink[emitted]  # the sides' types, for the torch.where fix
            self.sink[emitted] = replace(fact, types=fact.types + (("$else", type_tag(orelse)), ("$then", type_tag(body))))
        return (join(body, orelse) or UNKNOWN).tainted(level)


def compared_level(v: Value) -> Level:
    """What comparing ``v`` (`==`, `<`, `in`) depends on: a Python value's level, and for a
    tuple or list its items' too (`(h, w) == self.size` of sizes is a shape test, `pair ==
    (1, 3)` of escaped values a data test). Tensor items are left out (quiet when unsure);
    an unresolved value counts up to shape (`unknown_level`), as it always did in a
    comparison, where it was bound included (an item of an unresolved result is taken
    for one bound under its level)."""
    if v.type == "unknown":
        return unknown_level(v)
    if v.type not in ("python", "none", "container"):
        return v.ctl
    level = max(v.level, v.ctl)
    if v.type == "container" and v.ref != "dict":
        items = v.elems if v.elems is not None else (v.elem,) if v.elem is not None else ()
        level = max([level] + [compared_level(i) for i in items if i.type != "tensor"])
    return level


def member_level(container: Value) -> Level:
    """What `x in container` depends on besides ``x``: the items of a list, tuple or set
    (`3 in ids.tolist()` is data), the keys of a dict (its level: `d[t.item()] = v`)."""
    if container.type == "container" and container.ref == "dict":
        return max(container.level, container.ctl)
    return compared_level(container)


def key_level(key: Value) -> Level:
    """What the keys of a dict (the items of a set) depend on once ``key`` is added: its
    value, a tuple's items included (`cache[(h, w)] = v` keys it by sizes)."""
    return key.level if key.type == "unknown" else max(key.level, compared_level(key))


def all_shape_valued(tensors, others) -> str | None:
    """The `ref` of an operation on tensors known when traced (shape- or param-valued) and
    Python values of at most shape level (an unresolved attribute such as
    `self.padding_right` counts as one: quiet when unsure); None for anything else."""
    if all(v.ref in KNOWN_WHEN_TRACED for v in tensors) and all(known_python_level(v) <= SHAPE for v in others):
        return known_ref({v.ref for v in tensors}, max((known_python_level(v) for v in others), default=STATIC))
    return None
