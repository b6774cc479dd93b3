"""Python state that a graph `Loop` body or `If` branch changes and that is read inside it
(the body, the condition, a later iteration) or after it: each case is either carried
through the graph (and matches eager PyTorch on onnxruntime on inputs that run each loop
0, 1 and several times and take both sides of each `if`), or refused with a
`LoweringError` that names the line and says what to write instead (issue 11).

`s = x.sum()` drives the loops below; each iteration ends with `s = s - 1`, so INPUTS run
a `while s > 0` loop 0, 1, 2 and 5 times. The line a refusal must name carries the
comment `# refused`.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

INPUTS = [(torch.tensor([-1.0, 0.0]),), (torch.tensor([0.25, 0.5]),), (torch.tensor([1.0, 0.5]),),
          (torch.tensor([3.0, 1.5]),)]
POSITIVE = INPUTS[1:]  # at least one iteration (a list that starts empty has an item to stack)


def carried(model: nn.Module, inputs=INPUTS):
    export_and_compare(model.eval(), inputs[0], inputs)


def refused(model: nn.Module, *words: str, example=INPUTS[2]) -> LoweringError:
    """Export raises LoweringError at the line marked `# refused`, with `words` in it."""
    with pytest.raises(LoweringError) as info:
        export(model.eval(), example)
    err = info.value
    lines, first = inspect.getsourcelines(type(model).forward)
    marked = [first + i for i, text in enumerate(lines) if "# refused" in text]
    assert err.path == inspect.getsourcefile(type(model)), err
    assert err.line in marked, (err.line, marked, str(err))
    for w in words:
        assert w in str(err), str(err)
    assert err.hint, "a refusal says what to write instead"
    return err


# ============================================================== list lengths


class LenInWhileCondition(nn.Module):  # the program of issue 11
    def forward(self, x):
        out = []
        s = x.sum()
        while len(out) < 3 and s > 0:
            out.append(s)
            s = s - 1
        return torch.stack(out)


def test_len_of_the_appended_list_in_the_while_condition_is_carried():
    carried(LenInWhileCondition(), POSITIVE + [(torch.tensor([10.0, 0.0]),)])


class LenInWhileConditionWithPrefix(nn.Module):
    def forward(self, x):
        out = [x[0] * 0, x[1]]
        s = x.sum()
        while s > 0 and len(out) < 4:
            out.append(s)
            s = s - 1
        return torch.stack(out), len(out) * x


def test_len_with_items_before_the_loop_is_carried():
    carried(LenInWhileConditionWithPrefix())


class LenInBody(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        y = x * 0
        while s > 0:
            y = y + len(out)  # before this iteration's append
            out.append(s)
            y = y * len(out)  # after it
            s = s - 1
        return y, len(out) + y


def test_len_inside_the_body_before_and_after_the_append_is_carried():
    carried(LenInBody())


class LenForRange(nn.Module):
    def forward(self, x):
        out = []
        y = x * 0
        for i in range(int(x.sum().clamp(0, 6))):
            out.append(x[0] * i)
            y = y + len(out)
        return y, x * len(out)


def test_len_in_a_for_range_loop_is_carried():
    carried(LenForRange())


class ConditionalAppendInLoop(nn.Module):
    def forward(self, x):
        out = [x[1]]
        s = x.sum()
        y = x * 0
        while s > 0:
            if s > 1:
                out.append(s)
            y = y + len(out)
            if len(out) % 2 == 0:  # the same state under an if nested in the loop
                y = y * 2
            s = s - 1
        return torch.stack(out), y, x * len(out)


def test_len_of_a_list_appended_under_an_if_in_the_loop_is_carried():
    carried(ConditionalAppendInLoop())


class LenAfterGraphIf(nn.Module):
    def forward(self, x):
        out = [x[0]]
        if x.sum() > 1:
            out.append(x[1])
        if out:
            x = x + 1
        return torch.stack(out), x * len(out)


def test_len_and_truth_of_a_list_appended_in_a_graph_if_are_carried():
    carried(LenAfterGraphIf())


class LoopOverBuiltList(nn.Module):
    def forward(self, x):
        out = []
        s = x.sum()
        while s > 0:
            out.append(s * 2)
            s = s - 1
        y = x * 0
        for v in out:
            y = y + v
        return y


def test_iterating_after_the_loop_over_what_it_appended_is_a_loop():
    carried(LoopOverBuiltList())


# ============================================================== items of the list being built


class LastItemAfterAppend(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        y = x * 0
        while s > 0:
            out.append(s * 3)
            y = y + out[-1] + out[0]  # this iteration's item; an item from before the loop
            s = s - 1
        return y


def test_this_iterations_item_and_items_before_the_loop_are_read_inside_it():
    carried(LastItemAfterAppend())


class LastItemBeforeAppend(nn.Module):  # greedy decoding: the next step reads the last token
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            prev = out[-1]
            if prev > 1:
                out.append(prev * 0.5 + s)
            else:
                out.append(prev + s)
            s = s - 1
        return torch.stack(out), out[0] + len(out)


def test_the_last_item_of_the_previous_iteration_is_carried():
    carried(LastItemBeforeAppend())


class LastItemBeforeConditionalAppend(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        y = x * 0
        while s > 0:
            y = y + out[-1]
            if s > 1:
                out.append(s * 2)
            s = s - 1
        return y


def test_the_last_item_when_some_iterations_append_nothing_is_carried():
    carried(LastItemBeforeConditionalAppend())


class LastItemOfEmptyList(nn.Module):
    def forward(self, x):
        out = []
        s = x.sum()
        while s > 0:
            prev = out[-1] if len(out) > 0 else s  # refused
            out.append(prev + s)
            s = s - 1
        return torch.stack(out)


def test_the_last_item_of_a_list_empty_before_the_loop_is_refused():
    refused(LastItemOfEmptyList(), "[-1]", "empty before the loop", "last = v")


class SecondToLastItem(nn.Module):
    def forward(self, x):
        out = [x[0], x[1]]
        s = x.sum()
        while s > 0:
            out.append(out[-2] + s)  # refused
            s = s - 1
        return torch.stack(out)


def test_older_items_of_earlier_iterations_are_refused():
    refused(SecondToLastItem(), "[-2]", "earlier iterations")


class IndexIntoListBeingBuilt(nn.Module):
    def forward(self, x):
        out = []
        s = x.sum()
        while s > 0:
            out.append(s)
            y = out[0]  # refused
            s = s - 1
        return torch.stack(out)


def test_index_into_the_items_of_earlier_iterations_is_refused():
    refused(IndexIntoListBeingBuilt(), "[0]", "out")


class StackInsideLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        y = x * 0
        while s > 0:
            out.append(s)
            y = torch.stack(out).sum()  # refused
            s = s - 1
        return y


def test_the_whole_list_inside_the_loop_is_refused():
    refused(StackInsideLoop(), "torch.stack", "torch.stack(out)")


class IterateInsideLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        y = x * 0
        while s > 0:
            out.append(s)
            for v in out:  # refused
                y = y + v
            s = s - 1
        return y


def test_iterating_the_list_inside_the_loop_is_refused():
    refused(IterateInsideLoop(), "iterating")


class IndexAfterLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            out.append(s)
            s = s - 1
        return out[1]  # refused


def test_indexing_after_the_loop_is_refused_with_the_stack_rewrite():
    refused(IndexAfterLoop(), "[1]", "torch.stack(out)")


class LastAfterConditionalAppend(nn.Module):
    def forward(self, x):
        out = [x[0]]
        if x.sum() > 1:
            out.append(x[1])
        return out[-1]


def test_the_last_item_after_an_append_under_a_graph_if_is_carried():
    carried(LastAfterConditionalAppend())


class IndexAfterConditionalAppend(nn.Module):
    def forward(self, x):
        out = [x[0]]
        if x.sum() > 1:
            out.append(x[1])
        out.append(x[0] * 2)
        return out[1]  # refused


def test_indexing_past_an_append_under_a_graph_if_is_refused():
    refused(IndexAfterConditionalAppend(), "[1]", "both sides")


class SetItemInLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            out[0] = s  # its length stays: the items are carried (tests/export/test_loop_lists.py)
            s = s - 1
        return torch.stack(out)


def test_setting_an_item_of_the_list_in_the_loop_is_carried():
    carried(SetItemInLoop())


class SetItemAndAppendInLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            out.append(s)
            out[0] = s  # refused
            s = s - 1
        return torch.stack(out)


def test_changing_the_list_other_than_by_append_in_the_loop_is_refused():
    refused(SetItemAndAppendInLoop(), "index assignment", "`out`")


class RebindListInLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:  # refused
            out = [s]
            s = s - 1
        return torch.stack(out)


def test_rebinding_the_list_in_the_loop_is_refused():
    refused(RebindListInLoop(), "other than by `out.append")


class Collector(nn.Module):
    def add(self, items, v):
        items.append(v)

    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:  # refused
            self.add(out, s)
            s = s - 1
        return torch.stack(out)


def test_a_helper_appending_inside_the_loop_is_refused():
    refused(Collector(), "`out` (a list) is changed inside the data-dependent loop", "torch.stack")


class HelperLoopAppendsForCaller(nn.Module):
    def fill(self, items, s):
        while s > 0:
            items.append(s)
            s = s - 1

    def forward(self, x):
        out = [x[0]]
        self.fill(out, x.sum())
        return torch.stack(out), x * len(out)


def test_a_list_a_helpers_loop_appends_to_is_seen_by_the_caller():
    carried(HelperLoopAppendsForCaller())


class AliasedListInLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        alias = out
        s = x.sum()
        while s > 0:  # refused
            alias.append(s)
            s = s - 1
        return torch.stack(out)


def test_a_list_appended_under_another_name_is_refused():
    refused(AliasedListInLoop(), "also reachable as `out`")


class NestedListInIf(nn.Module):
    def forward(self, x):
        groups = [[x[0]]]
        if x.sum() > 1:  # refused
            groups[0].append(x[1])
        return torch.stack(groups[0])


def test_a_list_inside_another_container_changed_in_a_graph_if_is_refused():
    refused(NestedListInIf(), "changed inside the data-dependent if")


# ============================================================== Python numbers


class CounterInCondition(nn.Module):
    def forward(self, x):
        n = 0
        s = x.sum()
        while n < 3 and s > 0:
            n += 1
            s = s - 1
        return x * n, s


def test_int_counter_in_the_while_condition_is_carried():
    carried(CounterInCondition(), INPUTS + [(torch.tensor([9.0, 0.0]),)])


class CounterFromTensors(nn.Module):
    def forward(self, x):
        n = 0
        f = 0.5
        s = x.sum()
        while s > 0:
            n = n + int(s > 1)
            f = f + float(x[0])
            if s > 2:  # under an if nested in the loop
                n += 2
            s = s - 1
        return x * n, x + f


def test_int_and_float_counters_updated_with_tensor_values_are_carried():
    carried(CounterFromTensors())


class CounterBecomesFloat(nn.Module):
    def forward(self, x):
        n = 0
        s = x.sum()
        while s > 0:  # refused
            n = n + 0.5
            s = s - 1
        return x * n


class CounterBecomesFloatInPlace(nn.Module):
    def forward(self, x):
        n = 0
        s = x.sum()
        while s > 0:  # refused
            n += 0.5
            s = s - 1
        return x * n


@pytest.mark.parametrize("model", [CounterBecomesFloat(), CounterBecomesFloatInPlace()],
                         ids=["n = n + 0.5", "n += 0.5"])
def test_int_counter_that_becomes_a_float_in_the_loop_is_refused(model):
    refused(model, "changes dtype", "n = 0.0")


class CounterInGraphIf(nn.Module):
    def forward(self, x):
        n = 1
        if x.sum() > 1:
            n = n + 2
        return x * n


def test_counter_changed_in_a_graph_if_and_read_after_it_is_carried():
    carried(CounterInGraphIf())


# ============================================================== dicts and sets


class DictValueInLoop(nn.Module):
    def forward(self, x):
        d = {"total": x[0] * 0, "count": 0}
        s = x.sum()
        while s > 0:
            d["total"] = d["total"] + s
            d["count"] += 1
            s = s - 1
        return d["total"], x * d["count"], x * len(d)


def test_dict_values_changed_in_the_loop_are_carried():
    carried(DictValueInLoop())


class DictKeyInLoop(nn.Module):
    def forward(self, x):
        d = {}
        s = x.sum()
        while s > 0:  # refused
            d[f"k{len(d)}"] = s
            s = s - 1
        return x * len(d)


def test_dict_keys_added_in_the_loop_are_refused():
    refused(DictKeyInLoop(), "changes structure")


class DictInGraphIf(nn.Module):
    def forward(self, x):
        d = {"a": x[0]}
        if x.sum() > 1:
            d["a"] = x[1] * 3
        return d["a"] + len(d)


def test_dict_entry_changed_in_a_graph_if_is_carried():
    carried(DictInGraphIf())


class DictKeyInGraphIf(nn.Module):
    def forward(self, x):
        d = {"a": x[0]}
        if x.sum() > 1:
            d["b"] = x[1]
        return x * len(d)


def test_dict_key_added_on_one_side_of_a_graph_if_lowers_the_code_after_it_once_per_side():
    assert {bool(x.sum() > 1) for (x,) in INPUTS} == {True, False}
    carried(DictKeyInGraphIf())


class DeleteEntries(nn.Module):
    def forward(self, x):
        d = {"a": x[0], "b": x[1]}
        items = [x[0], x[1], x[0] * 2]
        del d["a"]
        del items[0]
        return torch.stack(items), x * len(d), x * len(items)


def test_del_of_dict_and_list_entries_is_lowered():
    carried(DeleteEntries())


class SetInLoop(nn.Module):
    def forward(self, x):
        seen = set()
        s = x.sum()
        while s > 0:  # refused
            seen.add(1)
            s = s - 1
        return x * len(seen)


def test_set_changed_in_the_loop_is_refused():
    refused(SetInLoop(), "`seen` (a set) is changed inside the data-dependent loop")


class SetInGraphIf(nn.Module):
    def forward(self, x):
        seen = {0}
        if x.sum() > 1:  # refused
            seen.add(1)
        return x * len(seen)


def test_set_changed_in_a_graph_if_is_refused():
    refused(SetInGraphIf(), "`seen` (a set) is changed inside the data-dependent if")


# ============================================================== attributes of objects and of self


class Box:
    count = 0


class PlainObjectAttributeInLoop(nn.Module):
    def forward(self, x):
        box = Box()
        s = x.sum()
        while s > 0:
            box.count = box.count + 1  # refused
            s = s - 1
        return x * box.count


def test_attribute_of_a_plain_object_assigned_in_the_loop_is_refused():
    refused(PlainObjectAttributeInLoop(), "box.count", "local variables")


class SelfAttributeInIf(nn.Module):
    def forward(self, x):
        if x.sum() > 1:
            self.hits = 1  # refused
        return x


def test_attribute_of_self_assigned_in_a_graph_if_is_refused():
    refused(SelfAttributeInIf(), "self.hits", "module's state")


class ModuleListState(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = []

    def forward(self, x):
        s = x.sum()
        while s > 0:
            self.history.append(s)  # refused
            s = s - 1
        return x


def test_a_list_held_by_the_module_appended_in_the_loop_is_refused():
    err = refused(ModuleListState(), "self.history", "outlives the call")
    assert "local variable" in err.hint


class SetattrInForward(nn.Module):
    def forward(self, x):
        if x.sum() > 1:
            setattr(self, "hits", 1)  # refused
        return x


def test_setattr_is_refused():
    refused(SetattrInForward(), "setattr")


HISTORY: list = []


class GlobalListState(nn.Module):
    def forward(self, x):
        HISTORY.append(x)  # refused
        return x


def test_a_global_list_appended_in_forward_is_refused():
    refused(GlobalListState(), "HISTORY", "outlives the call")
    assert HISTORY == []


# ============================================================== closures and nonlocal


class NonlocalCounter(nn.Module):
    def forward(self, x):
        n = 0

        def bump():
            nonlocal n
            n += 1

        bump()
        bump()
        return x * n


def test_nonlocal_writes_reach_the_defining_frame():
    carried(NonlocalCounter())


class NonlocalInLoop(nn.Module):
    def forward(self, x):
        n = 0

        def bump():
            nonlocal n
            n += 1

        s = x.sum()
        while s > 0:
            bump()
            if s > 2:  # the same state under an if nested in the loop
                bump()
            s = s - 1
        return x * n


def test_nonlocal_writes_inside_a_graph_loop_are_carried():
    carried(NonlocalInLoop())


class NonlocalInGraphIf(nn.Module):
    def forward(self, x):
        n = 0

        def bump():
            nonlocal n
            n += 1

        if x.sum() > 1:
            bump()
        return x * n


def test_nonlocal_write_inside_a_graph_if_is_carried():
    carried(NonlocalInGraphIf())


class NonlocalInTheClosuresOwnLoop(nn.Module):
    def forward(self, x):
        n = 0

        def count(s):
            nonlocal n
            while s > 0:
                n += 1  # refused
                s = s - 1

        count(x.sum())
        return x * n


def test_nonlocal_write_inside_the_closures_own_graph_loop_is_refused():
    refused(NonlocalInTheClosuresOwnLoop(), "nonlocal", "n = count(n")


class ClosureReadsLoopVariable(nn.Module):
    def forward(self, x):
        h = x
        double = lambda: h * 2  # noqa: E731
        s = x.sum()
        while s > 0:
            h = double()
            s = s - 1
        return h


def test_a_closure_reads_the_current_value_of_a_variable_the_loop_rebinds():
    carried(ClosureReadsLoopVariable())


class ClosureReadsIfVariable(nn.Module):
    def forward(self, x):
        h = x

        def plus_one():
            return h + 1

        if x.sum() > 1:
            h = h * 3
            y = plus_one()
        else:
            y = plus_one() * 0
        return y


def test_a_closure_reads_the_value_a_graph_if_branch_gave_a_variable():
    carried(ClosureReadsIfVariable())


COUNT = 0


class GlobalStatement(nn.Module):
    def forward(self, x):
        global COUNT
        COUNT = COUNT + 1  # refused
        return x * COUNT


def test_assigning_a_global_is_refused():
    refused(GlobalStatement(), "global `COUNT`")


# ============================================================== more of the same class


class WalrusInWhileCondition(nn.Module):
    def forward(self, x):
        n = 0
        s = x.sum()
        while (n := n + 1) < 4 and s > 0:
            s = s - 1
        return x * n


def test_a_counter_the_while_condition_assigns_is_carried():
    carried(WalrusInWhileCondition())


class CounterReadThenIncremented(nn.Module):
    def forward(self, x):
        n = 0
        s = x.sum()
        y = x * 0
        while s > 0:
            y = y + x[0] + n
            n += 2
            s = s - 1
        return y, x * n


def test_an_int_counter_read_then_incremented_in_the_body_is_carried():
    carried(CounterReadThenIncremented())


class ListItemReplacedInGraphIf(nn.Module):
    def forward(self, x):
        out = [x[0], x[1]]
        if x.sum() > 1:
            out[0] = x[1] * 5
        else:
            out.append(x[0])
            out.pop()
        return torch.stack(out)


def test_a_list_item_replaced_in_a_graph_if_is_carried():
    carried(ListItemReplacedInGraphIf())


class ListPoppedInGraphIf(nn.Module):
    def forward(self, x):
        out = [x[0], x[1]]
        if x.sum() > 1:
            out.pop()
        return torch.stack(out)


def test_a_list_shortened_on_one_side_of_a_graph_if_lowers_the_code_after_it_once_per_side():
    carried(ListPoppedInGraphIf())


class CallerSeesAppendInGraphIf(nn.Module):
    def maybe_add(self, items, x):
        if x.sum() > 1:
            items.append(x[1])

    def forward(self, x):
        out = [x[0]]
        self.maybe_add(out, x)
        return torch.stack(out), x * len(out)


def test_a_list_a_helpers_graph_if_appends_to_is_seen_by_the_caller():
    carried(CallerSeesAppendInGraphIf())


class CompareListInLoop(nn.Module):
    def forward(self, x):
        out = []
        s = x.sum()
        y = x * 0
        while s > 0:
            if out == []:  # refused
                y = y + 1
            out.append(s)
            s = s - 1
        return y


def test_comparing_the_list_being_built_is_refused():
    refused(CompareListInLoop(), "`==`", "out")


class GetattrListState(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = []

    def forward(self, x):
        getattr(self, "history").append(x)  # refused
        return x


def test_a_module_list_reached_through_getattr_is_not_changed():
    module = GetattrListState()
    refused(module, "outlives the call")
    assert module.history == []


class WalrusRightOfAnd(nn.Module):
    def forward(self, x):
        m = 0
        s = x.sum()
        while s > 0 and (m := m + 1) < 9:
            s = s - 1
        return x * m


def test_a_walrus_on_the_right_of_a_data_dependent_and_runs_only_where_eager_runs_it():
    carried(WalrusRightOfAnd())


class AppendRightOfAnd(nn.Module):
    def forward(self, x):
        out = [x[0]]
        if x.sum() > 1 and out.append(x[1]) is None:  # refused
            x = x + 1
        return torch.stack(out), x


def test_a_change_of_state_on_the_right_of_a_data_dependent_and_is_refused():
    refused(AppendRightOfAnd(), "`out` (a list) is changed inside the data-dependent `and`")


class WalrusInTernary(nn.Module):
    def forward(self, x):
        m = 0
        y = (m := 2) * x if x.sum() > 1 else x  # refused
        return y * m


def test_a_walrus_inside_a_data_dependent_ternary_is_refused():
    refused(WalrusInTernary(), "ternary")


class AppendNotReachedInGraphIf(nn.Module):
    def forward(self, x):
        out = [x[0]]
        if x.sum() > 1:
            if len(out) < 0:  # static: never
                out.append(x[1])
        return torch.stack(out), x * len(out)


def test_a_list_neither_side_of_a_graph_if_changes_stays_as_it_was():
    carried(AppendNotReachedInGraphIf())


class SeveralAppendsPerIteration(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        y = x * 0
        while s > 0:
            out.append(s)
            if s > 1:
                out.append(s * 10)
            out.append(out[-1] + 1)
            y = y + len(out)
            s = s - 1
        return torch.stack(out), y, out[0] * len(out)


def test_several_appends_in_one_iteration_keep_their_order():
    carried(SeveralAppendsPerIteration())


class LastAfterLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            if s > 1:
                out.append(s)
            s = s - 1
        return out[-1] * 2


def test_the_last_item_after_a_loop_is_the_last_row_or_the_item_before_it():
    carried(LastAfterLoop())


class NestedLoopsReadLast(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            t = s
            acc = x[1]
            while t > 0:
                acc = acc + out[-1] * len(out) + t  # the outer loop's list, from an inner loop
                t = t - 2
            out.append(acc * 0.5)
            s = s - 1
        return out[-1], x * len(out)


def test_nested_loops_reading_the_last_item():
    carried(NestedLoopsReadLast())


class AppendNotReachedInLoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:
            if len(out) > 5:  # static: never
                out.append(s)
            s = s - 1
        return torch.stack(out), x * len(out)


def test_a_list_whose_append_a_loop_never_reaches_stays_as_it_was():
    carried(AppendNotReachedInLoop())


class InnerLoopAppendsToOuterList(nn.Module):
    def forward(self, x):
        out = [x[0]]
        s = x.sum()
        while s > 0:  # refused
            t = s
            while t > 0:
                out.append(t)
                t = t - 2
            s = s - 1
        return torch.stack(out)


def test_an_inner_loop_appending_to_the_outer_loops_list_is_refused():
    refused(InnerLoopAppendsToOuterList(), "inner loop")


class CounterAcrossTwoLoops(nn.Module):
    def forward(self, x):
        n = 0

        def bump():
            nonlocal n
            n += 1

        s = x.sum()
        while s > 1:
            bump()
            s = s - 1
        while s > 0:
            n += 1
            s = s - 1
        return x * n


def test_a_counter_stays_a_python_number_from_one_loop_to_the_next():
    carried(CounterAcrossTwoLoops())
