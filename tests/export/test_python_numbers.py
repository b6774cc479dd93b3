"""Python numbers accumulated in graph loops (issue 24): a float, int or bool never shares
memory, so `total += v` on one rebinds it; once it is a tensor, eager updates it in place.
Each model exports and matches eager on onnxruntime with a dynamic first axis (the loop
runs 0, 1 and several times), or is refused with a message that names the way out."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "n"}}
INPUTS = [(torch.tensor([0.5, -1.0, 2.0]),), (torch.tensor([1.5, 0.25, -0.5, 3.0, 1.0]),),
          (torch.tensor([-2.0]),), (torch.zeros(0),)]


class RowSums(nn.Module):
    """The issue's example: a Python float that becomes a tensor after the first row."""

    def forward(self, x):
        total = 0.0
        for row in x:
            total += row.sum()
        return x * 0 + total


class FloatOfRows(nn.Module):
    def forward(self, x):
        total = 0.0
        for v in x:
            total += float(v)
        return x * 0 + total


class TernaryOfFloats(nn.Module):
    """A data-dependent ternary of two Python floats is a Python float (it was taken for a tensor)."""

    def forward(self, x):
        total = 0.0
        y = x.sum() * 0
        for v in x:
            f = float(v) if v > 0 else 0.5
            y = y + f
            f += 1.0
            total += f
        return y + total


class KeptUnlessChanged(nn.Module):
    def forward(self, x):
        t = 0.0
        y = x.sum() * 0
        for v in x:
            t = float(v) if v > 1 else t
            y = y + t
            t += 0.5
        return y + t


class RoundAndAbs(nn.Module):
    def forward(self, x):
        n = 0.0
        y = x.sum() * 0
        for v in x:
            k = round(float(v)) + abs(float(v))
            y = y + k
            k += 1
            n += k
        return y + n


class NumberAliasedUnderIf(nn.Module):
    """`u = t` of a number, then `t +=`: u keeps the old number."""

    def forward(self, x):
        s = x.sum()
        t, u = 0.0, 0.0
        while s > 0:
            if x[0] > 0:
                t = float(s)
            u = t
            t += float(s)
            s = s - 1
        return s * 0 + t + u


@pytest.mark.parametrize("model", [RowSums(), FloatOfRows(), TernaryOfFloats(), KeptUnlessChanged(), RoundAndAbs(),
                                   NumberAliasedUnderIf()], ids=lambda m: type(m).__name__)
def test_python_numbers_in_graph_loops_match_eager(model):
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class KeepsTheNumberThenTheTensor(nn.Module):
    def forward(self, x):
        total = 0.0
        y = x.sum() * 0
        for v in x:
            keep = total
            total += v
            y = y + keep
        return y


class AppendsTheUpdatedTensor(nn.Module):
    def forward(self, x):
        total = x.sum() * 0
        outs = [x.sum() * 0]
        for v in x:
            total += v
            outs.append(total)
        return torch.stack(outs)


class AppendsACopy(nn.Module):
    def forward(self, x):
        total = x.sum() * 0
        outs = [x.sum() * 0]
        for v in x:
            total += v
            outs.append(total.clone())
        return torch.stack(outs)


def test_a_copy_of_the_updated_tensor_matches_eager():
    export_and_compare(AppendsACopy(), INPUTS[0], INPUTS[:3], dynamic_shapes=DYNAMIC)


@pytest.mark.parametrize("model, message", [
    # Eager: `keep` is 0.0 in the first iteration, the updated tensor after: no one body does both.
    (KeepsTheNumberThenTheTensor(), "in-place update of `total` inside a graph loop while `keep` is bound to it"),
    # Eager: every item appended is the one tensor `total`, updated by every later iteration.
    (AppendsTheUpdatedTensor(), "`total` is updated in place inside the data-dependent loop at line 109, and the "
                                "tensor it holds at the end of an iteration is also `outs[-1]`"),
], ids=["number-then-tensor", "appended-then-updated"])
def test_aliases_across_iterations_are_refused(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, INPUTS[0], dynamic_shapes=DYNAMIC)
    assert message in str(info.value)
    assert "out of place" in str(info.value)
