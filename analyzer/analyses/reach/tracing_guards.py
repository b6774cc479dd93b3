"""What a trace of an eval-mode module never runs, for one function body of the
value-kind analysis: tests decided when traced (tracing guards such as
`torch.jit.is_tracing()`, and the training flags), and the statements they make dead
or training-only."""

from __future__ import annotations

from analyzer.analyses.engine.cfg import Node
from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.type_tests import type_test_truth
from analyzer.analyses.kinds.values import STATIC, flag_truth
from analyzer.analyses.project.constructor_flags import constant_flag
from analyzer.analyses.ranges.hit_rows import emptiness_tests
from analyzer.analyses.ranges.list_lengths import length_tests
from analyzer.analyses.ranges.loop_counters import counter_tests
from analyzer.analyses.ranges.nonempty_slices import never_empty_tests
from analyzer.analyses.reach.loss_targets import reads_only_for_loss
from analyzer.analyses.reach.training_flags import is_training_flag
from analyzer.frontend import expr_text, ir


class TracingGuards:
    """The tracing guards and training flags of `FunctionAnalysis` (a mixin over its state)."""

    def _in_training(self, node: Node) -> bool:
        s = node.stmt
        return s is not None and (id(s) in self.training_only or (node.kind == "if" and id(s) in self.training_tests))

    def _training_spans(self) -> set[int]:
        return {id(st.span) for st in ir.walk_statements(self.frame.fn.body)
                if isinstance(st, ir.Loop) and id(st) in self.training_only}

    def traced_truth(self, test, state: dict, training: bool) -> bool | None:
        """The value of ``test`` when an eval-mode module is traced, when it is known: a
        tracing guard (`torch.jit.is_tracing()`, `torch.jit.is_scripting()`, ... see
        `torch_api.TRUE_WHEN_TRACING`), and with ``training`` the training flags:
        `self.training` (or a parameter it was passed to) is False, and so is `labels is
        not None` for a training-target parameter defaulting to None. An emptiness test
        of a local list that every path before it grows is True (`list_lengths`), and one of the
nonzeros of a row visited because it has some is False (`hit_rows`)."""
        known = length_tests(self.frame.fn).decided.get(id(test))
        if known is None:
            known = emptiness_tests(self.frame.fn).get(id(test))
        if known is not None:
            return known
        if isinstance(test, ir.UnaryOp) and test.op == "not":
            inner = self.traced_truth(test.operand, state, training)
            return None if inner is None else not inner
        if isinstance(test, ir.BoolOp):
            values = [self.traced_truth(v, state, training) for v in test.values]
            decisive, neutral = (False, True) if test.op == "and" else (True, False)
            if decisive in values:
                return decisive
            return neutral if all(v is neutral for v in values) else None
        if isinstance(test, ir.Name) and test.id in api.TRUE_WITH_TORCH:
            return True
        if isinstance(test, ir.Call):
            name = expr_text(test.func).rsplit(".", 1)[-1]
            if name in api.TRUE_WHEN_TRACING or name in api.TRUE_WITH_TORCH:
                return True
            if name in api.FALSE_WHEN_TRACING:
                return False
            known = type_test_truth(test, name, state)
            return known if known is not None else self._returned_flag(test, state)
        if isinstance(test, ir.Attribute) and isinstance(test.value, ir.Name) and test.value.id == "self" \
                and test.attr != "training" and (flag := constant_flag(self.analyzer, self.frame.self_value, test.attr)) is not None:
            return flag
        if isinstance(test, ir.Name) and (flag := flag_truth(state.get(test.id))) is not None:
            return flag  # a parameter left at its default (`if inplace_safe:`)
        if isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0] in ("in", "not in") \
                and isinstance(test.comparators[0], ir.Name):
            # Membership in what is empty when traced (`checks = rounds(n) if can_stop(x) else ()`,
            # with `can_stop` False under a tracing guard): never a member.
            held = state.get(test.comparators[0].id)
            if held is not None and held.type == "container" and held.elems == () and held.level == STATIC \
                    and held.ctl == STATIC:
                return test.ops[0] == "not in"
        if not training:
            return None
        if isinstance(test, ir.Attribute) and isinstance(test.value, ir.Name) and test.value.id == "self" and (
                test.attr == "training" or is_training_flag(self.analyzer, self.frame.self_value, test.attr)):
            return False  # `self.training`, or a configuration flag that is the training mode (`training_flags`)
        if isinstance(test, ir.Name):
            value = state.get(test.id)
            return False if value is not None and value.ref == "training" else None
        if isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0] in ("is", "is not") \
                and isinstance(test.left, ir.Name) and isinstance(test.comparators[0], ir.Const) \
                and test.comparators[0].value is None and self._unset_training_target(test.left.id, state):
            return test.ops[0] == "is"
        return None

    def _returned_flag(self, call: ir.Call, state: dict) -> bool | None:
        """What a call of a function of the tree returns when traced, when its run returns
        a known flag: a helper deciding under a tracing guard (`if torch.jit.is_tracing():
        return True`) or returning a flag its caller passed decides its callers' tests too.
        The call's own facts are kept when it decides the test (the test is then not
        evaluated again)."""
        func = call.func
        if not (isinstance(func, ir.Name) or (isinstance(func, ir.Attribute) and isinstance(func.value, ir.Name)
                                              and func.value.id == "self")):
            return None
        ev = self.evaluator
        outer, ev.sink = ev.sink, ([] if ev.sink is not None else None)
        try:
            value = ev.ev(call, dict(state))
        finally:
            inner, ev.sink = ev.sink, outer
        truth = flag_truth(value) if value.level == STATIC and value.ctl == STATIC else None
        if truth is not None and outer is not None:
            outer.extend(inner)
        return truth

    def _unset_training_target(self, name: str, state: dict) -> bool:
        """A training target (by its name, or read only by a loss) still at its default None."""
        if name not in self.args or state.get(name) is not self.args[name]:
            return False
        if not any(p.name == name and isinstance(p.default, ir.Const) and p.default.value is None
                   for p in self.frame.fn.params):
            return False
        if name in api.TRAINING_TARGET_PARAMETERS:
            return True
        if name not in self._loss_targets:
            self._loss_targets[name] = reads_only_for_loss(self.frame.fn, name)
        return self._loss_targets[name]

    def decided_by_iteration(self, test) -> bool:
        """An emptiness test of a local list that only the loop iteration decides, a loop
        counter tested against the length of what its loop walks (`loop_counters`), or the
        emptiness of a slice its loop makes never empty (`nonempty_slices`)."""
        return (id(test) in length_tests(self.frame.fn).by_iteration or id(test) in counter_tests(self.frame.fn)
                or id(test) in never_empty_tests(self.frame.fn))

    def _decide(self, s, state: dict) -> bool:
        """Mark what a test known under tracing makes unreachable; True if it is known."""
        truth = self.traced_truth(s.test, state, training=True)
        if truth is None:
            return False
        by_training = self.traced_truth(s.test, state, training=False) is None
        if by_training:
            self.training_tests.add(id(s))
        into = self.training_only if by_training else self.dead
        skipped = s.body if not truth else s.orelse
        into.update(id(x) for x in ir.walk_statements(skipped))
        if truth and s.body and isinstance(s.body[-1], (ir.Return, ir.Raise)):
            # `if not self.training: return x` -- what follows runs in training only.
            into.update(id(x) for x in ir.walk_statements(self._after(s)))
        return not (by_training and self.training_run)  # training-only code is live in that run

    def _after(self, stmt) -> list:
        if self._followers is None:
            self._followers = {}
            body = self.frame.fn.body
            for block in [body] + [b for st in ir.walk_statements(body) for b in ir.child_blocks(st)]:
                for i, st in enumerate(block):
                    self._followers[id(st)] = block[i + 1:]
        return self._followers.get(id(stmt), [])
