"""A data-dependent `if` one side of which raises (issue 24): eager runs the other side
for every input it accepts, so that side is lowered as the only path, as a data `assert`
is dropped, even where it could not be a branch: an in-place update of a view of a
tensor made before the `if`. Each model matches eager on onnxruntime on the inputs eager
accepts (several lengths of a dynamic axis); without a raising side the update is still
refused by name."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

INPUTS = [(torch.tensor([1.0, 2.0]),), (torch.tensor([3.0, -1.0, 0.5]),), (torch.tensor([0.25]),)]
DYNAMIC = {"x": {0: "n"}}


class ViewUpdatedThenElseRaises(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            v = x[0]
            v.add_(1)
        else:
            raise ValueError("the input must have a positive sum")
        return x * 2


class ThenRaisesViewUpdatedElse(nn.Module):
    def forward(self, x):
        if x.sum() <= 0:
            raise ValueError("the input must have a positive sum")
        else:
            v = x[0]
            v.add_(1)
        return x * 2, v


class ViewMadeBeforeTheIf(nn.Module):
    def forward(self, x):
        y = x.clone()
        tail = y[1:]
        if x.max() > 0:
            tail.mul_(3)
            if x.min() < 0:  # a nested data-dependent `if` on the path that continues
                y = y - 1
        else:
            raise ValueError("no positive item")
        return y, tail


@pytest.mark.parametrize("model", [ViewUpdatedThenElseRaises(), ThenRaisesViewUpdatedElse(), ViewMadeBeforeTheIf()],
                         ids=["else-raises", "then-raises", "view-before-if"])
def test_a_view_updated_on_the_side_that_continues_matches_eager(model):
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class ViewUpdatedOnOneSide(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            v = x[0]
            v.add_(1)  # refused: both sides continue
        else:
            x = x - 1
        return x * 2


def test_a_view_updated_in_a_branch_when_both_sides_continue_is_still_refused():
    with pytest.raises(LoweringError, match="in-place update through `v`, a view of `x`, inside a data-dependent "
                                            "branch") as info:
        export(ViewUpdatedOnOneSide(), INPUTS[0], dynamic_shapes=DYNAMIC)
    err = info.value
    assert err.path.endswith("test_raising_branches.py") and err.line and "update out of place" in err.hint
