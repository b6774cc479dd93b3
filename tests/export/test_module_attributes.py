"""Module attributes forward assigns and reads back in the same call (RAFT's
`self.corr_pyramid`): call-local state, never set on the live module. Reading one
before forward assigns it, replacing a submodule, parameter or buffer, and assigning
under a data-dependent branch are refused; a buffer rebuilt from constants and
parameters, whose earlier value the graph never read, is a cache of the call."""

import copy

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import assert_session_matches, export_and_compare


class KeepsAPyramid(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def build(self, x):
        self.levels = [x]
        self.levels.append(x * 2)  # the list forward made: call-local too
        self.scale = x.shape[0]

    def lookup(self, i):
        return self.levels[i] * self.scale

    def forward(self, x):
        self.build(self.proj(x))
        out = self.lookup(0) + self.lookup(1)
        self.levels = [out]  # assigned again: later reads see the new value
        assert hasattr(self, "levels")
        return self.lookup(0) + getattr(self, "scale")  # noqa: B009 - the getattr path


def test_attribute_assigned_then_read_in_the_same_call():
    model = KeepsAPyramid().eval()
    inputs = [(torch.randn(b, 3),) for b in (2, 1, 4)]
    export_and_compare(model, inputs[0], inputs, dynamic_shapes={"x": {0: "b"}})
    assert not hasattr(KeepsAPyramid(), "levels")
    fresh = KeepsAPyramid().eval()
    export(fresh, inputs[0])
    assert not hasattr(fresh, "levels")  # the live module is left as it was


class SeesAnInPlaceUpdate(nn.Module):
    def forward(self, x):
        y = x * 1
        self.saved = y
        y.add_(1)
        return self.saved * 2


def test_attribute_sees_an_in_place_update_of_its_tensor():
    inputs = [(torch.randn(b, 3),) for b in (2, 5)]
    export_and_compare(SeesAnInPlaceUpdate(), inputs[0], inputs, dynamic_shapes={"x": {0: "b"}})


class Counts(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        return x * self.calls


class InitialisesLazily(nn.Module):
    def forward(self, x):
        if not hasattr(self, "table"):
            self.table = x * 2
        return self.table


class ReplacesItsWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.weight = x[0]
        return x


class AssignsUnderABranch(nn.Module):
    def forward(self, x):
        self.last = x
        if x.sum() > 0:
            self.last = x * 2
        return self.last


@pytest.mark.parametrize("model, message", [
    # A Python value is set on the module for real (journaled, `object_state`): the change outlives the call.
    (Counts(), ("Counts.forward changes self.calls and leaves it changed, and the next call lowers differently: "
               "eager PyTorch's next call sees the change, which an exported graph cannot")),
    (InitialisesLazily(), ("`self.table` is read before forward assigns it: eager PyTorch reads the value the "
                          "previous call left there, which an exported graph cannot keep")),
    (ReplacesItsWeight(), ("assigning `self.weight` in forward replaces a submodule, parameter or buffer: the "
                          "module's state changes for the next call")),
    (AssignsUnderABranch(), ("assigning `self.last` inside a data-dependent `if` or loop: the module's state would "
                            "depend on the data")),
])
def test_module_state_refusals(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, (torch.randn(2, 3),))
    assert info.value.message == message
    assert info.value.path == __file__ and info.value.line is not None


class UpdatesUnderABranch(nn.Module):
    def forward(self, x):
        y = x * 1
        self.saved = y
        if x.sum() > 0:
            y.add_(1)
        return self.saved


def test_in_place_update_of_an_assigned_tensor_under_a_branch_is_refused():
    with pytest.raises(LoweringError) as info:
        export(UpdatesUnderABranch(), (torch.randn(2, 3),))
    assert info.value.message == ("in-place update, inside a data-dependent `if` or loop, of a tensor assigned to "
                                  "`UpdatesUnderABranch.saved`")
    assert info.value.hint == "update out of place"


class RebuildsATableForItsSize(nn.Module):
    """A buffer rebuilt when the input's length changes, from constants and parameters."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rel", torch.zeros(1, 3, 1), persistent=False)
        self.proj = nn.Linear(4, 4)

    def table(self, n):
        return torch.arange(n, dtype=torch.float32)[None, :, None] * self.proj.weight[0, 0]

    def forward(self, x):
        if self.rel is None or self.rel.shape[1] != x.shape[1]:
            self.rel = self.table(x.shape[1])
        return self.proj(x) + self.rel


class ReadsTheBufferBeforeReplacingIt(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rel", torch.ones(1, 5, 1), persistent=False)

    def forward(self, x):
        y = x + self.rel  # the graph reads the old value; eager's next call would read the new one
        self.rel = torch.zeros(1, x.shape[1], 1)
        return y


class ReplacesItsBufferWithData(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rel", torch.ones(1, 5, 4), persistent=False)

    def forward(self, x):
        self.rel = x.mean(0, keepdim=True)
        return x + self.rel


def test_a_buffer_rebuilt_from_constants_is_a_cache_of_the_call():
    model = RebuildsATableForItsSize().eval()
    x, other = torch.randn(2, 5, 4), torch.randn(3, 5, 4)
    proto = export(model, (x,), dynamic_shapes={"x": {0: "b"}})
    assert model.rel.shape == (1, 3, 1)  # the live module is left as it was
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    graph_out = assert_session_matches(session, copy.deepcopy(model), (other,))
    with torch.no_grad():
        model(x)  # eager's first call fills the cache, the second reads it: the graph's values both times
        assert np.allclose(model(other).numpy(), graph_out[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("model", [ReadsTheBufferBeforeReplacingIt(), ReplacesItsBufferWithData()],
                         ids=lambda m: type(m).__name__)
def test_a_buffer_replaced_otherwise_is_still_state(model):
    with pytest.raises(LoweringError, match="assigning `self.rel` in forward replaces a submodule, parameter or buffer"):
        export(model.eval(), (torch.randn(2, 5, 4),))
