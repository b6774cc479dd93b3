"""Random draws from a generator that forward creates and seeds: evaluated at export time
with a real generator (so its state advances draw by draw as in eager) and embedded as
constants; every other random draw is refused (`lowering.seeded_random`)."""

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

X = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))


class Draws(nn.Module):
    """Each draw kind, several from one generator (their states chain as in eager)."""

    def forward(self, x):
        g = torch.Generator().manual_seed(123)
        u = torch.rand(x.shape, generator=g)
        n = torch.randn(x.shape[0], x.shape[1], generator=g)
        i = torch.randint(0, 10, (x.shape[0], 5), generator=g)
        p = torch.randperm(x.shape[1], generator=g)
        b = torch.bernoulli(torch.full(x.shape, 0.3), generator=g)
        like = torch.rand_like(x, generator=g)
        return x * u + n, i, x[:, p], x * b + like


class UnseededFreshGenerator(nn.Module):
    """A fresh generator has PyTorch's fixed default seed: deterministic too."""

    def forward(self, x):
        return x + torch.randn(x.shape, generator=torch.Generator())


class SeedFromConfig(nn.Module):
    def __init__(self, seed):
        super().__init__()
        self.seed = seed

    def forward(self, x):
        g = torch.Generator()
        g.manual_seed(self.seed)
        keep = torch.rand(x.shape, generator=g) >= 0.5
        return x * keep * 2.0, g.initial_seed()


class DrawInBranchFromOwnGenerator(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            g = torch.Generator().manual_seed(1)
            y = x + torch.rand(x.shape, generator=g)
        else:
            y = x
        return y


@pytest.mark.parametrize("model", [Draws(), UnseededFreshGenerator(), SeedFromConfig(7), DrawInBranchFromOwnGenerator()],
                         ids=lambda m: type(m).__name__)
def test_seeded_draws_match_eager_on_every_call(model):
    export_and_compare(model, (X,), [(X,), (-X,), (X * 3,)])


class GlobalRng(nn.Module):
    def forward(self, x):
        return x + torch.rand(x.shape)


class GeneratorAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = torch.Generator().manual_seed(0)

    def forward(self, x):
        return x + torch.rand(x.shape, generator=self.g)


class GeneratorArgument(nn.Module):
    def forward(self, x, g):
        return x + torch.rand(x.shape, generator=g)


class NondeterministicSeed(nn.Module):
    def forward(self, x):
        g = torch.Generator()
        g.seed()
        return x + torch.rand(x.shape, generator=g)


class SeedFromData(nn.Module):
    def forward(self, x):
        g = torch.Generator().manual_seed(int(x.sum()))
        return x + torch.rand(x.shape, generator=g)


class DrawInBranchFromOuterGenerator(nn.Module):
    def forward(self, x):
        g = torch.Generator().manual_seed(1)
        if x.sum() > 0:
            x = x + torch.rand(x.shape, generator=g)
        return x + torch.rand(x.shape, generator=g)


class DrawFromComputedProbabilities(nn.Module):
    def forward(self, x):
        g = torch.Generator().manual_seed(1)
        return torch.bernoulli(torch.sigmoid(x), generator=g)


REFUSED = [
    (GlobalRng(), (X,), None, "draws random numbers"),
    (GeneratorAttribute(), (X,), None, "generator that forward did not create"),
    (GeneratorArgument(), (X, torch.Generator()), None, "generator that forward did not create"),
    (NondeterministicSeed(), (X,), None, "Generator.seed"),
    (SeedFromData(), (X,), None, "seed computed from tensor values"),
    (DrawInBranchFromOuterGenerator(), (X,), None, "data-dependent `if` or a graph loop"),
    (DrawFromComputedProbabilities(), (X,), None, "tensor computed at run time"),
    (Draws(), (X,), {"x": {0: "batch"}}, "dynamic axis"),
]


@pytest.mark.parametrize("model, args, dynamic, message", REFUSED, ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_unreproducible_draws_are_refused(model, args, dynamic, message):
    with pytest.raises(LoweringError, match=message) as info:
        export(model, args, dynamic_shapes=dynamic)
    assert info.value.path and info.value.path.endswith("test_seeded_random.py") and info.value.line


def test_generator_attribute_state_is_not_advanced_by_export():
    model = GeneratorAttribute()
    before = model.g.get_state()
    with pytest.raises(LoweringError):
        export(model, (X,))
    assert torch.equal(model.g.get_state(), before)
