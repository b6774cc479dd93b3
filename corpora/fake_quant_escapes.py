"""Dynamic per-tensor int8 fake quantisation with a Python-side observer (post-training
quantisation calibration code). The scale, clip counts and range are pulled out with
`.item()`, `int()`, `.tolist()` and `float()`, so a trace stores them as constants."""

import torch
import torch.nn as nn


class DynamicFakeQuant(nn.Module):
    def __init__(self, dim: int = 8, qmax: int = 127):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.qmax = qmax

    def forward(self, x):
        h = self.fc(x)
        amax = h.abs().max().item()  # expect: UT201
        scale = max(amax, 1e-8) / self.qmax
        q = torch.clamp(torch.round(h / scale), -self.qmax, self.qmax)
        saturated = int((q.abs() == self.qmax).sum())  # expect: UT201
        lo, hi = torch.stack([q.min(), q.max()]).tolist()  # expect: UT201
        spread = float(h.std())  # expect: UT201
        stats = torch.tensor([lo, hi, saturated, spread])
        return q * scale, stats


def build() -> nn.Module:
    torch.manual_seed(0)
    return DynamicFakeQuant().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(16)
    x = torch.randn(4, 8, generator=g)
    return [(x,), (25.0 * x,)]
