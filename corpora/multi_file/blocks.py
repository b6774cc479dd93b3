"""Building block for the multi-file case: a gated residual block that skips its body when
the learned gate is mostly closed (conditional computation). The data-dependent `if` lives
in this file, while the model that uses it is defined in model.py."""

import torch
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, dim: int, skip_below: float = 0.5):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.skip_below = skip_below

    def forward(self, x):
        gate = torch.sigmoid(self.gate(x))
        if gate.mean() < self.skip_below:  # expect: UT101
            return x
        return x + gate * self.body(x)
