"""Modules that forward builds and calls (`nn.ReplicationPad2d(pad)(x)`, a stateless
module of the model's own code, `nn.Sequential(*self.layers)(x)`): objects of the call,
their constructor run as Python on static arguments or interpreted from source when a
graph value is among them (`lowering.interp.local_modules`). A module whose constructor
initialises tensors randomly is refused by name: eager's outputs are random."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class PadsToAMultipleOfEight(nn.Module):
    """FBCNN: a padding module built from the input's size."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        h, w = x.size()[-2:]
        bottom = (h + 7) // 8 * 8 - h
        right = (w + 7) // 8 * 8 - w
        x = nn.ReplicationPad2d((0, right, 0, bottom))(x)
        return self.conv(x)


class Transpose(nn.Module):
    """A stateless module of the model's own code (einops' `Rearrange` is one)."""

    def __init__(self, first, second):
        super().__init__()
        self.dims = (first, second)

    def forward(self, x):
        return x.transpose(*self.dims)


class BuildsStatelessModules(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = Transpose(1, 2)(x)
        y = nn.Sequential(nn.GELU(), nn.LayerNorm(y.shape[-1]))(y)  # LayerNorm's ones and zeros: not random
        return nn.ReLU()(self.proj(y)) + nn.Identity()(Transpose(2, 1)(x))


class ChainsItsLayers(nn.Module):
    """g-mlp: `nn.Sequential(*layers)` of the model's own submodules, built in forward."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)])

    def forward(self, x):
        layers = self.layers if not self.training else self.layers[:1]
        return nn.Sequential(*layers)(x)


@pytest.mark.parametrize("model, inputs, dynamic", [
    (PadsToAMultipleOfEight(), [(torch.randn(1, 2, 13, 9),), (torch.randn(2, 2, 16, 17),),
                                (torch.randn(1, 2, 5, 8),)], {"x": {0: "b", 2: "h", 3: "w"}}),
    (BuildsStatelessModules(), [(torch.randn(2, 4, 3),), (torch.randn(3, 4, 3),), (torch.randn(1, 4, 3),)],
     {"x": {0: "b"}}),
    (ChainsItsLayers(), [(torch.randn(2, 4),), (torch.randn(5, 4),)], {"x": {0: "b"}}),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_a_module_built_in_forward_matches_eager(model, inputs, dynamic):
    export_and_compare(model.eval(), inputs[0], inputs, dynamic_shapes=dynamic)


def test_the_model_s_own_layers_keep_their_names():
    proto = export(ChainsItsLayers().eval(), (torch.randn(2, 4),))
    assert {"layers.0.weight", "layers.2.bias"} <= {i.name for i in proto.graph.initializer}


class BuildsALinear(nn.Module):
    def forward(self, x):
        return nn.Linear(4, 2)(x)  # new random weights on every call


class BuildsARandomTable(nn.Module):
    def forward(self, x):
        return x + RandomTable()(x)


class RandomTable(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.randn(4)  # a plain tensor attribute, random too

    def forward(self, x):
        return self.table


class BuildsALinearOfTheInputSize(nn.Module):
    def forward(self, x):
        return nn.Linear(x.shape[-1], 2)(x)


@pytest.mark.parametrize("model, message", [
    (BuildsALinear(), "creating a module (Linear) inside forward that initialises `weight`, `bias` randomly"),
    (BuildsARandomTable(), "creating a module (RandomTable) inside forward that initialises `table` randomly"),
    (BuildsALinearOfTheInputSize(), "creating a module (Linear) inside forward from tensor values: cannot build "
                                    "a Parameter from tensors"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_a_module_built_in_forward_with_random_state_is_refused(model, message):
    with pytest.raises(LoweringError) as info:
        export(model.eval(), (torch.randn(2, 4),), dynamic_shapes={"x": {1: "n"}} if "Size" in type(model).__name__
               else None)
    assert info.value.message.startswith(message), info.value.message
    assert info.value.path == __file__


def test_building_a_module_leaves_the_random_state_alone():
    stateless, linear, x, y = BuildsStatelessModules().eval(), BuildsALinear(), torch.randn(2, 4, 3), torch.randn(2, 4)
    state = torch.random.get_rng_state()
    export(stateless, (x,))
    with pytest.raises(LoweringError):
        export(linear, (y,))
    assert torch.equal(torch.random.get_rng_state(), state)


class WrapsAPadOfTheInputSize(nn.Module):
    """A module built from another that forward built from graph sizes: read from source too."""

    def forward(self, x):
        pad = nn.ConstantPad1d((0, x.shape[-1] % 3), 1.0)
        return nn.Sequential(pad, nn.Tanh())(x)


def test_a_module_built_from_a_module_holding_graph_sizes_matches_eager():
    inputs = [(torch.randn(2, n),) for n in (7, 6, 11)]
    export_and_compare(WrapsAPadOfTheInputSize(), inputs[0], inputs, dynamic_shapes={"x": {1: "n"}})


class NormsWithItsOwnWeightName(nn.Module):
    """A LayerNorm built in forward has a `weight` of its own, apart from the root's `weight`."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3) + 5)

    def forward(self, x):
        return nn.LayerNorm(3)(x * self.weight) + nn.LayerNorm(3, eps=1e-3)(x)


def test_the_tensors_of_a_module_built_in_forward_are_its_own():
    inputs = [(torch.randn(b, 3),) for b in (4, 2)]
    export_and_compare(NormsWithItsOwnWeightName(), inputs[0], inputs, dynamic_shapes={"x": {0: "b"}})
