"""Residual blocks that skip their body when the incoming activation is nearly silent
(activation-sparsity skipping in efficient CNN/RNN inference). The data-dependent `if` is
inside a submodule class, so the parent's forward looks static."""

import torch
import torch.nn as nn


class SkipWhenQuiet(nn.Module):
    def __init__(self, dim: int, energy_floor: float = 1e-3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.energy_floor = energy_floor

    def forward(self, x):
        if x.pow(2).mean() < self.energy_floor:  # expect: UT101
            return x
        return x + self.body(x)


class QuietSkippingNet(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.first = SkipWhenQuiet(dim)
        self.second = SkipWhenQuiet(dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
        return self.head(self.second(self.first(x)))


def build() -> nn.Module:
    torch.manual_seed(0)
    return QuietSkippingNet().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(12)
    x = torch.randn(3, 8, generator=g)
    return [(x,), (torch.zeros(3, 8),)]
