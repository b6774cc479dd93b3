"""`x in t` / `x not in t` on a tensor (issue 24) is `Tensor.__contains__`: `(t == x).any()`,
a graph bool, for a Python number or a tensor `x`; used as the condition of a
data-dependent `if` it becomes an `If`. Compared with eager on onnxruntime, with dynamic
axes, on inputs that take both sides."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "b", 1: "n"}, "labels": {0: "k"}}
INPUTS = [(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([0, 3, 1])),
          (torch.tensor([[-1.0, 2.5], [3.0, 0.0]]), torch.tensor([1, 2, 1, 5])),
          (torch.tensor([[float("nan"), 2.0]]), torch.tensor([2]))]


class Contains(nn.Module):
    def forward(self, x, labels):
        has_three = 3 in labels
        top_missing = labels.max() not in x  # a tensor element, int against float
        if 0 in labels:  # the condition of a data-dependent `if`
            y = x * 2
        else:
            y = x - 1
        if labels[0] not in labels[1:] and 2.5 not in x:
            y = y + 10
        return y, has_three, top_missing, float("nan") in x  # nan == nan is False, as in eager


def test_in_and_not_in_on_tensors_match_eager():
    export_and_compare(Contains(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class StringInTensor(nn.Module):
    def forward(self, x, labels):
        return x * ("a" in labels)


def test_what_eager_raises_on_is_refused():
    with pytest.raises(LoweringError, match=r"`str in tensor`: Tensor.__contains__ only supports a tensor or a number"):
        export(StringInTensor(), INPUTS[0])
