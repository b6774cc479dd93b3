"""Input-adaptive depth (SkipNet / layer-dropping at inference): a small controller decides
how many residual layers to run. The loop bound comes from a tensor through `int()`, so a
trace runs the example's depth for every input."""

import torch
import torch.nn as nn


class AdaptiveDepthNet(nn.Module):
    def __init__(self, dim: int = 8, max_depth: int = 4):
        super().__init__()
        self.controller = nn.Linear(dim, 1)
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.Tanh()) for _ in range(max_depth)])
        self.max_depth = max_depth

    def forward(self, x):
        budget = torch.sigmoid(self.controller(x).mean()) * self.max_depth
        for i in range(int(budget.round())):  # expect: UT102, UT201
            x = x + self.layers[i](x)
        return x


def build() -> nn.Module:
    torch.manual_seed(0)
    return AdaptiveDepthNet().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(22)
    x = torch.randn(3, 8, generator=g)
    return [(x,), (20.0 * x,), (-20.0 * x,)]
