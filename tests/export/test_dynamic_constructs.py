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
