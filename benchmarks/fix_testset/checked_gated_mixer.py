"""Gated mixer that validates its input, normalises by the peak magnitude and picks one of two
paths by the mean gate."""

import torch
from torch import nn


class CheckedGatedMixer(nn.Module):
    def __init__(self, dim: int = 6):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.path_a = nn.Linear(dim, dim)
        self.path_b = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert torch.isfinite(x).all(), "inputs must be finite"
        peak = x.abs().max().item()
        x = x / peak if peak > 0 else x
        gate = torch.sigmoid(self.gate(x))
        return gate * self.path_a(x) if gate.mean() > 0.5 else (1 - gate) * self.path_b(x)


def build() -> nn.Module:
    torch.manual_seed(0)
    model = CheckedGatedMixer().eval()
    with torch.no_grad():
        model.gate.weight.fill_(0.5)
        model.gate.bias.zero_()
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(38)
    x = torch.randn(2, 6, generator=g).abs()
    return [(x,), (-x,), (torch.zeros(2, 6),)]
