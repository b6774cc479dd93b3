"""A one-element buffer tested as a flag in forward (`if self.initted: return`, a lazy
initialisation done by the first call, issue 24). A buffer is an initializer of the
graph, a constant, so the `If` on it always takes the side its value at export picks:
the interpreter takes that side alone. With the flag set, no call of eager changes it and
the graph matches eager on every input; with the flag unset, the side taken writes the
module's state (eager's first call initialises it), which is refused."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch"}}
INPUTS = [(torch.randn(4, 3, generator=torch.Generator().manual_seed(n)) * (n - 1),) for n in (0, 1, 2)]


class LazyInit(nn.Module):
    def __init__(self, initted: bool):
        super().__init__()
        self.register_buffer("initted", torch.tensor(initted))
        self.register_buffer("centre", torch.zeros(3))

    def init_(self, x):
        if self.initted:
            return
        self.centre.data.copy_(x.mean(0))
        self.initted.data.copy_(torch.tensor(True))

    def forward(self, x):
        self.init_(x)
        if not self.initted:
            return x
        return x - self.centre


class CountFlag(nn.Module):
    """A one-element integer buffer: its truth is its value's, as a Python int's."""

    def __init__(self, count: int):
        super().__init__()
        self.register_buffer("count", torch.tensor([count]))

    def forward(self, x):
        return x * 2 if self.count else x + 1


@pytest.mark.parametrize("count", [0, 3])
def test_an_integer_buffer_picks_the_side(count):
    export_and_compare(CountFlag(count).eval(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


def test_a_set_flag_skips_the_initialisation():
    model = LazyInit(True).eval()
    model.centre.fill_(0.5)
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)


def test_an_unset_flag_would_initialise_the_state_and_is_refused():
    with pytest.raises(LoweringError, match="a parameter or buffer .* changes the module.s state"):
        export(LazyInit(False).eval(), INPUTS[0], dynamic_shapes=DYNAMIC)


class DataTest(nn.Module):
    """A buffer of several elements compared with the input stays a graph `If`."""

    def __init__(self):
        super().__init__()
        self.register_buffer("threshold", torch.tensor([0.0]))

    def forward(self, x):
        if x.sum() > self.threshold:
            return x * 2
        return x - 1


def test_a_comparison_with_a_buffer_stays_data_dependent():
    proto = export(DataTest().eval(), INPUTS[0], dynamic_shapes=DYNAMIC)
    assert any(n.op_type == "If" for n in proto.graph.node)
    export_and_compare(DataTest().eval(), INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC)
