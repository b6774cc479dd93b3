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


class ConvertsItsMean(nn.Module):
    """SwinIR's `self.mean = self.mean.type_as(x)`: a float64 attribute converted to the
    input's dtype on every call, a fixed point after the first."""

    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.4488, 0.4371, 0.4040], dtype=torch.float64).view(1, 3, 1)

    def forward(self, x):
        self.mean = self.mean.type_as(x)
        return (x - self.mean) * 2.0


class ConvertsItsBufferByAChain(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.arange(3, dtype=torch.float64).view(3, 1) + 0.1)

    def forward(self, x):
        self.scale = self.scale.to(x.device).to(x.dtype).contiguous()
        y = x * self.scale  # later reads see the converted value
        self.scale = self.scale.detach().float()  # converted again: still its own fixed point
        return y + self.scale


@pytest.mark.parametrize("make", [ConvertsItsMean, ConvertsItsBufferByAChain], ids=lambda m: m.__name__)
def test_an_idempotent_conversion_of_an_attribute_is_a_fixed_point(make):
    model = make().eval()
    inputs = [(torch.randn(b, 3, 4),) for b in (2, 1, 5)]
    export_and_compare(make().eval(), inputs[0], inputs, dynamic_shapes={"x": {0: "b"}})  # eager's calls in order
    export(model, inputs[0], dynamic_shapes={"x": {0: "b"}})
    held = model.mean if make is ConvertsItsMean else model.scale
    assert held.dtype == torch.float64  # the live module is left as it was


class CountsInATensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = torch.zeros(())

    def forward(self, x):
        self.count = self.count + 1  # no fixed point: every call sees another value
        return x * self.count


class ReadsTheMeanBeforeConvertingIt(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.ones(3, dtype=torch.float64) / 3

    def forward(self, x):
        y = x.double() * self.mean  # the previous call's conversion in eager, the original here
        self.mean = self.mean.float()
        return y.float() + self.mean


class ConvertsItsWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.weight = self.weight.float()
        return x * self.weight


class RoundTripsItsMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.full((3,), 1 / 3, dtype=torch.float64)

    def forward(self, x):
        self.mean = self.mean.bfloat16().half()  # two casts: no fixed point untrace can prove
        return x * self.mean.float()


class ReplacesTheConvertedMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.ones(3)

    def forward(self, x):
        self.mean = self.mean.type_as(x)
        self.mean = self.mean * 2  # the next call converts this one
        return x * self.mean


@pytest.mark.parametrize("model, message", [
    (CountsInATensor(), "`self.count` is read before forward assigns it"),
    (RoundTripsItsMean(), "`self.mean` is converted to several dtypes in one call"),
    (ReplacesTheConvertedMean(), "assigning `self.mean` after forward converted it to itself"),
    (ReadsTheMeanBeforeConvertingIt(), "`self.mean` is read before forward assigns it"),
    (ConvertsItsWeight(), "assigning `self.weight` in forward replaces a submodule, parameter or buffer"),
], ids=lambda m: type(m).__name__ if isinstance(m, nn.Module) else "")
def test_a_state_update_that_is_no_idempotent_conversion_is_refused(model, message):
    with pytest.raises(LoweringError) as info:
        export(model, (torch.randn(2, 3),))
    assert info.value.message.startswith(message)


class ReplacesItsWeightData(nn.Module):
    """`self.conv.weight.data = ...` from the weight's own value: each call would double it
    again (a re-parameterisation from other weights is a cache: test_parameter_data)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 3, 1)

    def forward(self, x):
        self.conv.weight.data = self.conv.weight * 2
        return self.conv(x)


def test_assigning_a_parameter_s_data_is_refused_by_name():
    with pytest.raises(LoweringError) as info:
        export(ReplacesItsWeightData(), (torch.randn(2, 3, 4),))
    assert info.value.message == ("assigning `self.conv.weight.data` in forward after the graph read its earlier "
                                  "value: eager's next call reads the new one")
