"""Python semantics of literals and displays, for the value-kind analysis: constants,
f-strings, tuples, lists, sets, dicts, slices, lambdas and comprehensions."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.call_values import as_index_level
from analyzer.analyses.kinds.facts import BranchFact, LoopFact
from analyzer.analyses.kinds.shapes import rows_level
from analyzer.analyses.kinds.values import DATA, NONE, STATIC, STATIC_PY, UNKNOWN, Value, default_value, join_all
from analyzer.analyses.ranges.keyed_ranges import dict_display
from analyzer.frontend import ir


class LiteralSemantics:
    """The literals and displays of `ExpressionEvaluator` (a mixin over its state)."""

    def _ev_Const(self, e, state):
        # `True` / `False` are known flags: a helper every call passes `validate=False`
        # runs with its test decided (`tracing_guards.traced_truth`), one run per value.
        return default_value(e) if e.value is None or type(e.value) is bool else STATIC_PY

    def _ev_FormattedString(self, e, state):
        for v in e.values:
            self.ev(v, state)
        return STATIC_PY

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
        keyed = dict_display(e, self.module.path, values[: len(e.items)], [k for k, v in e.items])
        if keyed is not None:  # `{"Color": (torch.linspace(0.0, 0.9, n), True), ...}`: a range per key
            return replace(Value.container(keyed[0], ref="dict"), interval=keyed[1])
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

    def _ev_Comprehension(self, e, state):
        self.in_comprehension += 1  # its names are not the function's (`value_ranges` keys)
        try:
            return self._comprehension(e, state)
        finally:
            self.in_comprehension -= 1

    def _comprehension(self, e, state):
        inner = dict(state)
        level = STATIC
        for g in e.generators:
            iterable = self.ev(g.iter, inner)
            elem, lvl = self.iterate(iterable, g.iter, "comprehension", g.iter.span)
            if lvl >= DATA and iterable.type == "tensor":
                # Over the rows of a tensor sized by data: as many items as the data says.
                self.emit(LoopFact(self.site(g.iter.span), "comprehension", DATA, STATIC, (), self.text(g.iter)))
            level = max(level, lvl, rows_level(iterable) if iterable.is_certain_tensor else STATIC)
            self.bind(g.target, elem, inner)
            for cond in g.ifs:
                before = len(self.sink) if self.sink is not None else None
                level = max(level, self.predicate(cond, inner, "filter", cond.span, report=True))
                if before is not None and len(self.sink) > before and isinstance(self.sink[-1], BranchFact) \
                        and self.sink[-1].construct == "filter":
                    # for the fix: a tensor iterated is read again as `.unbind(0)` (the same rows)
                    self.sink[-1] = replace(self.sink[-1], types=self.sink[-1].types + (
                        ("$iter", "tensor" if iterable.is_certain_tensor else iterable.type),))
        elt = self.ev(e.elt, inner)
        if e.key is not None:
            self.ev(e.key, inner)
        if e.kind == "generator":
            return Value.container(elt, level=level, ref="generator")
        return Value.container(elt, level=level, ref=e.kind)
