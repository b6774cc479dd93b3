"""Input sanitising in a sensor-fusion front end: repair NaN/Inf readings and apply a gain
only when the signal is both bounded and not flat. Python `and`/`or` call `bool()` on the
tensors, so a trace bakes in which operands were evaluated."""

import torch
import torch.nn as nn


class SanitizingFrontEnd(nn.Module):
    def __init__(self, dim: int = 6, limit: float = 5.0, min_std: float = 0.05, gain: float = 2.0):
        super().__init__()
        self.limit = limit
        self.min_std = min_std
        self.gain = gain
        self.encoder = nn.Linear(dim, dim)

    def forward(self, x):
        if torch.isnan(x).any() or torch.isinf(x).any():  # expect: UT101
            x = torch.nan_to_num(x, nan=0.0, posinf=self.limit, neginf=-self.limit)
        usable = x.abs().max() < self.limit and x.std() > self.min_std  # expect: UT101
        scale = self.gain if usable else 1.0  # expect: UT101
        return self.encoder(x * scale)


def build() -> nn.Module:
    torch.manual_seed(0)
    return SanitizingFrontEnd().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(14)
    x = torch.randn(3, 6, generator=g)
    spiky = x.clone()
    spiky[0, 0] = float("inf")
    broken = x.clone()
    broken[1, 2] = float("nan")
    return [(x,), (torch.full((3, 6), 0.5),), (spiky,), (broken,)]
