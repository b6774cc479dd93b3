"""Constructs a graph can express although a trace freezes them (issue 11): pad widths
computed from a dynamic axis, comprehensions filtered on tensor values, and `torch.split`
by sizes taken from tensor values. Each exports and matches eager on onnxruntime, or is
refused with a message that says what to write instead."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


# ---------------------------------------------------------------- F.pad with graph widths


class PadToMultiple(nn.Module):
    def __init__(self, mode="constant", k=4):
        super().__init__()
        self.mode, self.k = mode, k

    def forward(self, x):
        k = self.k
        h, w = x.shape[2], x.shape[3]
        pad_h = (k - h % k) % k
        pad_w = (k - w % k) % k
        return F.pad(x, (pad_w // 2, pad_w - pad_w // 2, 0, pad_h), mode=self.mode)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate"])
def test_pad_widths_from_a_dynamic_axis(mode):
    inputs = [(torch.randn(1, 2, h, w),) for h, w in [(5, 6), (8, 8), (7, 9), (4, 13)]]
    export_and_compare(PadToMultiple(mode), inputs[0], inputs, dynamic_shapes={"x": {2: "h", 3: "w"}})


class PadCropsByAGraphWidth(nn.Module):
    def forward(self, x):
        return F.pad(x, (2 - x.shape[1], 1), value=-1.0)  # negative for wide inputs: a crop, as in torch


def test_constant_pad_by_a_negative_graph_width_crops():
    inputs = [(torch.randn(2, n),) for n in (1, 2, 5)]
    export_and_compare(PadCropsByAGraphWidth(), inputs[0], inputs, dynamic_shapes={"x": {1: "n"}})


class CircularPadToMultiple(PadToMultiple):
    def __init__(self):
        super().__init__("circular")


class PadByAFloat(nn.Module):
    def forward(self, x):
        return F.pad(x, (0, x.shape[1] / 2))


@pytest.mark.parametrize("model, message", [
    (CircularPadToMultiple(), "pad\\(mode='circular'\\) with widths computed from a dynamic axis.*"
                              "use mode='constant', 'reflect' or 'replicate'"),
    (PadByAFloat(), "a pad width must be an int or an integer computed in the graph.*compute the widths as ints"),
])
def test_pad_widths_that_cannot_be_lowered_are_refused_with_the_way_out(model, message):
    x = torch.randn(1, 2, 5, 6)
    with pytest.raises(LoweringError, match=f"(?s){message}") as info:
        export(model, (x,), dynamic_shapes={"x": {1: "c", 2: "h", 3: "w"}})
    assert info.value.path.endswith("test_dynamic_constructs.py") and info.value.line


# ---------------------------------------------------------------- comprehensions filtered on tensor values


class FilterListOfTensors(nn.Module):
    def forward(self, x):
        items = [x[0], x[1] * 2, x[2] - 1, x[3]]
        kept = [t * 2 for t in items if t.norm() > 1.5]
        return torch.stack(kept, dim=1), len(kept), torch.cat(kept)


class FilterRows(nn.Module):
    def forward(self, x):
        kept = [r + 1 for r in x if r.norm() > 1.5 if r.sum() > -1]
        return torch.stack(kept), len(kept), torch.cat(kept, dim=0)


class FilterNested(nn.Module):
    def forward(self, x):
        pairs = [a * b for a in [x[0], x[1]] if a.sum() > 0 for b in [x[2], x[3]] if b.mean() > -0.5]
        return torch.stack(pairs).sum(0), len(pairs)


def _filter_inputs(n=4):
    g = torch.Generator().manual_seed(5)
    return [(torch.randn(n, 3, generator=g) * 2 + 1,) for _ in range(5)] + [(torch.ones(n, 3),)]


@pytest.mark.parametrize("model", [FilterListOfTensors(), FilterRows(), FilterNested()], ids=lambda m: type(m).__name__)
def test_comprehension_filtered_on_tensor_values(model):
    inputs = _filter_inputs()
    export_and_compare(model, inputs[0], inputs)


def test_comprehension_over_the_rows_of_a_dynamic_axis_filtered_on_their_values():
    g = torch.Generator().manual_seed(6)
    inputs = [(torch.randn(n, 3, generator=g) * 2 + 1,) for n in (4, 7, 2, 9)] + [(torch.ones(5, 3),)]
    export_and_compare(FilterRows(), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}})


class FilterInPlace(nn.Module):
    def forward(self, x):
        return torch.stack([t.add_(1) for t in [x[0].clone(), x[1].clone()] if t.sum() > 0])


class FilterChangesState(nn.Module):
    def forward(self, x):
        seen = []
        kept = [seen.append(t) or t for t in [x[0], x[1]] if t.sum() > 0]
        return torch.stack(kept), len(seen)


class FilterThenIndex(nn.Module):
    def forward(self, x):
        kept = [t for t in [x[0], x[1]] if t.sum() > 0]
        return kept[0]


class FilterSet(nn.Module):
    def forward(self, x):
        return len({i for i, t in enumerate([x[0], x[1]]) if t.sum() > 0})


@pytest.mark.parametrize("model, message", [
    (FilterInPlace(), "in-place update of .* in a comprehension filtered on tensor values.*update out of place"),
    (FilterChangesState(), "changed inside the data-dependent comprehension filter"),
    (FilterThenIndex(), "`\\[0\\]`"),
    (FilterSet(), "a set comprehension filtered on tensor values.*use a list comprehension and torch.stack"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_comprehension_filters_that_cannot_be_lowered_are_refused_with_the_way_out(model, message):
    with pytest.raises(LoweringError, match=f"(?s){message}") as info:
        export(model, (torch.randn(4, 3),))
    assert info.value.path.endswith("test_dynamic_constructs.py") and info.value.line


# ---------------------------------------------------------------- torch.split by sizes from tensor values


class SplitByLengths(nn.Module):
    def forward(self, h, lengths):
        pieces = torch.split(h, lengths.tolist())
        return torch.stack([p.mean(0) for p in pieces]), len(pieces), torch.cat([p * 2 for p in pieces])


def test_split_by_sizes_from_tensor_values_with_a_static_number_of_pieces():
    inputs = [(torch.randn(int(l.sum()), 3), l) for l in (torch.tensor([2, 3, 1]), torch.tensor([1, 1, 5]),
                                                             torch.tensor([4, 2, 2]))]
    export_and_compare(SplitByLengths(), inputs[0], inputs, dynamic_shapes={"h": {0: "n"}})


def test_split_by_sizes_over_a_dynamic_number_of_pieces_is_refused_with_a_segment_reduction():
    lengths = torch.tensor([2, 3, 1])
    with pytest.raises(LoweringError, match="(?s)`.tolist\\(\\)` of a tensor whose number of items is not known.*"
                                            "segment reduction.*index_add") as info:
        export(SplitByLengths(), (torch.randn(6, 3), lengths), dynamic_shapes={"h": {0: "n"}, "lengths": {0: "b"}})
    assert info.value.path.endswith("test_dynamic_constructs.py") and info.value.line


class SqueezesTheBatch(nn.Module):
    def forward(self, x):
        return x.squeeze(0) * 2


class SqueezesEveryAxis(nn.Module):
    def forward(self, x):
        return x.squeeze()  # every axis of size 1: the dynamic batch among them


def test_squeezing_a_dynamic_batch_axis_is_refused():
    # Batch 1 in the example: eager drops the axis there and keeps it for batch 2, so no
    # graph of one rank is right; the axis is not dropped on the example's say-so (issue 24).
    with pytest.raises(LoweringError, match="squeeze: whether dim 0 is removed depends on its size"):
        export(SqueezesTheBatch(), (torch.randn(1, 3),), dynamic_shapes={"x": {0: "batch"}})


def test_squeezing_every_axis_with_a_dynamic_batch_is_refused():
    with pytest.raises(LoweringError, match="whether dim 0 is removed"):
        export(SqueezesEveryAxis(), (torch.randn(2, 1, 3),), dynamic_shapes={"x": {0: "batch"}})


class SqueezesDimOne(nn.Module):
    def forward(self, x):
        return x.squeeze(1) * 2


def test_squeezing_a_static_size_one_axis_beside_a_dynamic_batch():
    inputs = [(torch.randn(n, 1, 3),) for n in (2, 1, 5)]
    export_and_compare(SqueezesDimOne(), inputs[0], inputs, dynamic_shapes={"x": {0: "batch"}})
