"""Each refusal names what it refuses and a way out that fits it (issue 13, item 7): an
in-place update names the tensor it updates, a pybind11 function its public name, and
no refusal falls back on a hint meant for data-dependent branches."""

import re

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from lowering.ops import registry


class ReluInPlaceOfASlice(nn.Module):
    def forward(self, x):
        x = x.clone()
        v = x[0]
        torch.relu_(x[0:1])
        return v


class AddInPlaceOfASlice(nn.Module):
    def forward(self, x):
        x = x.clone()
        v = x[0]
        x[0:1].add_(1)
        return v


class InPlaceModuleOnASlice(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        x = x.clone()
        v = x[0]
        self.act(x[0:1])
        return v


@pytest.mark.parametrize("model", [ReluInPlaceOfASlice(), AddInPlaceOfASlice(), InPlaceModuleOnASlice()],
                         ids=lambda m: type(m).__name__)
def test_an_in_place_update_names_the_tensor_it_updates(model):
    # The update through the basic-index view `x[0:1]` is written back into its base `x`
    # (lowering/aliasing.py), so `x` is the tensor updated while its view `v` is live.
    with pytest.raises(LoweringError, match=re.escape(
            "in-place update of `x` at line ") + r"\d+" + re.escape(" while `v` is live (`v` is a view of it")):
        export(model, (torch.randn(2, 3),))


def test_a_pybind11_function_has_its_public_name():
    assert registry.canonical_name(torch._C._get_tracing_state) == "torch._C._get_tracing_state"


class WithAContext(nn.Module):
    def forward(self, x):
        with x:
            return x


class UnpackTooMany(nn.Module):
    def forward(self, x):
        a, b = (1, 2, 3)
        return x


@pytest.mark.parametrize("model, message", [
    (WithAContext(), "`with x`: a tensor is not a context manager (eager raises TypeError)\nuse a context "
                     "manager object"),
    (UnpackTooMany(), "cannot unpack 3 values into 2\nunpack into as many names as there are values"),
])
def test_refusals_carry_their_own_way_out(model, message):
    with pytest.raises(LoweringError, match=re.escape(message)) as info:
        export(model, (torch.randn(2, 3),))
    assert "torch.where" not in str(info.value)


class BestSoFar(nn.Module):
    def forward(self, x):
        best = None
        n = x.sum()
        while n > 0:
            best = x * n
            n = n - 1
        return best


def test_a_value_none_before_a_data_loop_is_named_with_its_way_out():
    # ONNX `Loop` carries tensors of one type: None has no first value to carry.
    with pytest.raises(LoweringError) as info:
        export(BestSoFar(), (torch.randn(3),))
    assert "`best` is None before the data-dependent loop at line" in info.value.message
    assert "give `best` a tensor before the loop" in info.value.hint
