"""Comparing shapes that hold dynamic sizes (`x.shape == y.shape`, `x.shape[1:] == (3,)`)
compares their items in the graph, as Python compares items; and an `if` on a graph
value whose one side only raises is an input check, dropped like an `assert` on
tensor values."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class BranchesOnEqualShapes(nn.Module):
    def forward(self, x, y):
        if x.shape == y.shape:
            out = x * y.sum()
        else:
            out = x - y.sum()
        if x.shape != (2, 3):
            out = out + 1
        return out


def test_shape_equality_with_dynamic_sizes_is_decided_by_the_graph():
    inputs = [(torch.randn(a, 3), torch.randn(b, 3)) for a, b in [(2, 2), (2, 4), (5, 5), (3, 1)]]
    export_and_compare(BranchesOnEqualShapes(), inputs[0], inputs, dynamic_shapes={"x": {0: "a"}, "y": {0: "b"}})


class StaticItemsDecide(nn.Module):
    def forward(self, x):
        assert x.shape[1:] == (3,)
        if x.shape == (x.shape[0], 4):  # the static item differs: known False
            return x * 0
        return x + 1


def test_a_static_item_that_differs_decides_the_comparison():
    inputs = [(torch.randn(b, 3),) for b in (2, 4)]
    export_and_compare(StaticItemsDecide(), inputs[0], inputs, dynamic_shapes={"x": {0: "b"}})
    graph = export(StaticItemsDecide(), inputs[0], dynamic_shapes={"x": {0: "b"}}).graph
    assert "If" not in {n.op_type for n in graph.node}


class ChecksItsInputs(nn.Module):
    def forward(self, x, y):
        if x.shape != y.shape:
            raise ValueError(f"{x.shape} != {y.shape}")
        return x + y


def test_an_if_whose_one_side_raises_is_an_input_check_the_graph_drops():
    inputs = [(torch.randn(b, 3), torch.randn(b, 3)) for b in (2, 1, 6)]
    export_and_compare(ChecksItsInputs(), inputs[0], inputs, dynamic_shapes={"x": {0: "b"}, "y": {0: "b"}})
    graph = export(ChecksItsInputs(), inputs[0], dynamic_shapes={"x": {0: "b"}, "y": {0: "b"}}).graph
    assert "If" not in {n.op_type for n in graph.node}


class OrdersShapes(nn.Module):
    def forward(self, x, y):
        return x if x.shape < y.shape else y


def test_ordering_shapes_with_dynamic_sizes_is_refused():
    with pytest.raises(LoweringError) as info:
        export(OrdersShapes(), (torch.randn(2, 3), torch.randn(2, 3)), dynamic_shapes={"x": {0: "a"}, "y": {0: "b"}})
    assert info.value.message == "`<` between sequences that hold sizes computed in the graph"
    assert info.value.hint == "compare the sizes one by one"


class ChecksSizesWithAnyAll(nn.Module):
    def forward(self, x):
        if any(s < 2 for s in x.shape[-2:]):  # RAFT's check of the feature map size
            raise ValueError("too small")
        even = all(s % 2 == 0 for s in x.shape[-2:])
        wide = any([x.shape[0] > 100, x.shape[-1] > 5])
        return (x * 2 if even else x - 1) + (1 if wide else 0)


def test_any_and_all_over_graph_sizes():
    inputs = [(torch.randn(2, h, w),) for h, w in [(4, 4), (4, 5), (3, 6), (2, 8), (6, 2)]]
    export_and_compare(ChecksSizesWithAnyAll(), inputs[0], inputs, dynamic_shapes={"x": {0: "b", 1: "h", 2: "w"}})


class KnownItemDecides(nn.Module):
    def forward(self, x):
        if any([x.shape[0] > 1, True]) and not all([x.shape[0] > 1, False]):
            return x + 1
        return x


def test_a_known_item_decides_any_and_all():
    inputs = [(torch.randn(b, 3),) for b in (1, 4)]
    export_and_compare(KnownItemDecides(), inputs[0], inputs, dynamic_shapes={"x": {0: "b"}})
    graph = export(KnownItemDecides(), inputs[0], dynamic_shapes={"x": {0: "b"}}).graph
    assert "If" not in {n.op_type for n in graph.node}
