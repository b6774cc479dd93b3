"""Static container idioms over the module tree (issue 13, item 4): Sequential subclasses
that keep Sequential's forward, a ModuleDict's items/values/keys, children(),
named_children(), modules(), an explicit `m.forward(x)`, ModuleList slicing. The tree is
fixed when the module is built, so each is evaluated against the live module; each
export matches eager on onnxruntime over a dynamic batch."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


def _check(model, dynamic_name="x", features=4):
    torch.manual_seed(0)
    inputs = [(torch.randn(b, features),) for b in (2, 5, 1)]
    export_and_compare(model.eval(), inputs[0], inputs, dynamic_shapes={dynamic_name: {0: "batch"}})


class Block(nn.Sequential):
    """A Sequential subclass with its own constructor and Sequential's forward."""

    def __init__(self, scale: float):
        super().__init__(nn.Linear(4, 4), nn.ReLU())
        self.scale = scale


class UsesBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block(1.0)
        self.second = Block(2.0)

    def forward(self, x):
        return self.second(self.first(x)) * self.second.scale


def test_sequential_subclass_keeping_sequential_forward():
    _check(UsesBlocks())


def test_sequential_subclass_as_the_exported_module():
    _check(Block(1.0), dynamic_name="input")


class ModuleDictViews(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4), "c": nn.Tanh()})

    def forward(self, x):
        features = {name: layer(x) for name, layer in self.layers.items()}
        for layer in self.layers.values():
            x = layer(x)
        for name in self.layers.keys():  # noqa: SIM118 - the idiom under test
            x = x + features[name]
        return x


def test_module_dict_items_values_keys():
    _check(ModuleDictViews())


class WalksItsChildren(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.act = nn.GELU()
        self.b = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())

    def forward(self, x):
        for child in self.children():
            x = child(x)
        for name, child in self.named_children():
            if name != "act":
                x = child(x)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                x = m(x)
        return x + sum(p.sum() for p in self.b.parameters())


def test_children_named_children_modules_and_parameters():
    _check(WalksItsChildren())


class ExplicitForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.block = Block(1.0)
        self.inner = UsesBlocks()

    def forward(self, x):
        return self.inner.forward(self.block.forward(self.proj.forward(x)))


def test_explicit_submodule_forward():
    _check(ExplicitForward())


class SlicesItsLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])
        self.seq = nn.Sequential(*[nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers[1:3]:
            x = torch.tanh(layer(x))
        for layer in self.layers[::-2]:
            x = layer(x)
        return self.seq[1:](x)


def test_module_list_and_sequential_slicing():
    _check(SlicesItsLayers())


class LooksUpByTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleDict({"a": nn.Linear(4, 4)})

    def forward(self, x):
        return self.layers.get_submodule(x)


def test_tree_method_with_a_tensor_argument_is_refused():
    with pytest.raises(LoweringError, match="`ModuleDict.get_submodule\\(\\)` with a tensor argument") as info:
        export(LooksUpByTensor().eval(), (torch.randn(2, 4),))
    assert info.value.hint == "pass a Python value (a name or an index known at export time)"
