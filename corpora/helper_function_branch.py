"""Activation-overflow guard hidden in a module-level helper, as in fp16 training code that
rescales a tensor only when its magnitude explodes. The data-dependent `if` lives outside
`forward`, so a reviewer reading forward alone misses what the trace freezes."""

import torch
import torch.nn as nn


def rescale_if_overflowing(x, limit: float):
    peak = x.abs().max()
    if peak > limit:  # expect: UT101
        return x * (limit / peak)
    return x


class GuardedMLP(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 32, limit: float = 10.0):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.limit = limit

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = rescale_if_overflowing(h, self.limit)
        return self.fc2(h)


def build() -> nn.Module:
    torch.manual_seed(0)
    return GuardedMLP().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(11)
    x = torch.randn(4, 8, generator=g)
    return [(x,), (100.0 * x,)]
