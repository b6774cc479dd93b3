"""A gated residual written for torch.export from the start: the branch is a torch.where and
the expensive path a torch.cond."""

import torch
from torch import nn


class ExportFriendlyGate(nn.Module):
    def __init__(self, dim: int = 5):
        super().__init__()
        self.expand = nn.Linear(dim, dim)
        self.shrink = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.where(x.abs() > 1.0, x.sign(), x)

        def grow(t):
            return torch.relu(self.expand(t))

        def shrink(t):
            return torch.tanh(self.shrink(t))

        return torch.cond(x.sum() > 0, grow, shrink, (x,))


def build() -> nn.Module:
    torch.manual_seed(0)
    return ExportFriendlyGate().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(41)
    x = torch.randn(2, 5, generator=g).abs()
    return [(x,), (-x,)]
