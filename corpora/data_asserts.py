"""Mixture-density head that validates its inputs with asserts: the mixture weights must be
non-negative and the feature width must match the layer. A trace evaluates the asserts once
and drops them, so the exported graph checks nothing."""

import torch
import torch.nn as nn


class MixtureDensityHead(nn.Module):
    def __init__(self, dim: int = 8, components: int = 3):
        super().__init__()
        self.dim = dim
        self.means = nn.Linear(dim, components)
        self.log_scales = nn.Linear(dim, components)

    def forward(self, weights, feats):
        assert (weights >= 0).all()  # expect: UT101
        assert feats.shape[-1] == self.dim  # expect: UT103
        mu = self.means(feats)
        sigma = torch.exp(self.log_scales(feats).clamp(-5.0, 5.0))
        w = weights / weights.sum(dim=-1, keepdim=True).clamp(min=1e-6)
        return (w * mu).sum(dim=-1), (w * sigma).sum(dim=-1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return MixtureDensityHead().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(15)
    return [
        (torch.rand(2, 3, generator=g), torch.randn(2, 8, generator=g)),
        (torch.tensor([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]), torch.randn(2, 8, generator=g)),
    ]
