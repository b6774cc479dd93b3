"""`module.weight.data = ...` in forward (issue 24): a reparameterisation every call redoes
(the weights of parallel branches folded into one conv, then that conv called). The new
value is computed from parameters and constants only, so each call stores the same value:
the graph uses it for the rest of the call (a leaf module's lowering and a direct read
alike) and matches eager on every call. Refused: a value from the inputs, an update of the
parameter from its own earlier value (no fixed point), a new shape, and an assignment
under a data-dependent `if`."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch", 2: "h", 3: "w"}}


def _x(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


INPUTS = [(_x(1, 3, 6, 6),), (_x(2, 3, 5, 7, seed=1),), (_x(3, 3, 4, 4, seed=2) - 1,)]


class Reparameterised(nn.Module):
    def __init__(self):
        super().__init__()
        self.wide = nn.Conv2d(3, 4, 3, padding=1)
        self.point = nn.Conv2d(3, 4, 1)
        self.fused = nn.Conv2d(3, 4, 3, padding=1)

    def update_params(self):
        w = self.wide.weight.data.clone().detach() + F.pad(self.point.weight.data, [1, 1, 1, 1])
        self.fused.weight.data = w.contiguous()
        self.fused.bias.data = self.wide.bias.data + self.point.bias.data

    def forward(self, x):
        if self.training:
            return self.wide(x) + self.point(x)
        self.update_params()
        return self.fused(x), F.conv2d(x, self.fused.weight, None, padding=1)


def test_a_folded_conv_matches_eager_on_every_call():
    export_and_compare(Reparameterised().eval(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


class FromTheInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.scale.data = x.mean((0, 2, 3))
        return x * self.scale[:, None, None]


class FromItself(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.scale.data = self.scale * 0.5
        return x * self.scale[:, None, None]


class NewShape(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.other = nn.Parameter(torch.ones(3, 1))

    def forward(self, x):
        self.scale.data = self.other * 2
        return x * self.scale


class UnderADataIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.other = nn.Parameter(torch.ones(3))

    def forward(self, x):
        if x.sum() > 0:
            self.scale.data = self.other * 2
        return x * 2


@pytest.mark.parametrize("model, message", [
    (FromTheInput(), "with a value computed from the inputs"),
    (FromItself(), "after the graph read its earlier value"),
    (NewShape(), "changes the shape"),
    (UnderADataIf(), "inside a data-dependent `if` or loop"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_state_changes_are_refused(model, message):
    with pytest.raises(LoweringError, match=message):
        export(model.eval(), INPUTS[0], dynamic_shapes=DYNAMIC)
