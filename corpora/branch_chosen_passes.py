"""Coarse-to-fine refinement where a cheap difficulty test picks how many refinement passes
to run (as in cascaded pose or flow estimators). The pass count is assigned under a
data-dependent `if`, so the loop over it is data-dependent too."""

import torch
import torch.nn as nn


class DifficultyAwareRefiner(nn.Module):
    def __init__(self, dim: int = 8, hard_threshold: float = 0.5, easy_passes: int = 1, hard_passes: int = 3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
        self.refine = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 2)
        self.hard_threshold = hard_threshold
        self.easy_passes = easy_passes
        self.hard_passes = hard_passes

    def forward(self, x):
        h = self.encoder(x)
        if h.abs().mean() > self.hard_threshold:  # expect: UT101
            passes = self.hard_passes
        else:
            passes = self.easy_passes
        for _ in range(passes):  # expect: UT102
            h = h + 0.5 * torch.tanh(self.refine(h))
        return self.head(h)


def build() -> nn.Module:
    torch.manual_seed(0)
    return DifficultyAwareRefiner().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(23)
    x = torch.randn(3, 8, generator=g)
    return [(0.05 * x,), (30.0 * x,)]
