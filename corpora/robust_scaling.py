"""Robust feature scaling with NumPy, as in tabular preprocessing folded into a model:
each feature is centred on its median, scaled by its interquartile range, clipped to the
5th-95th percentile band, and each row is then divided by its L2 norm. A trace would
bake the example batch's quantiles and norms in as constants."""

import numpy as np
import torch
import torch.nn as nn


class RobustScaler(nn.Module):
    def __init__(self, dim: int = 5):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        values = np.asarray(h.detach())  # expect: UT202
        q1, median, q3 = np.percentile(values, [25, 50, 75], axis=0)
        low, high = np.quantile(values, [0.05, 0.95], axis=0, keepdims=True)
        scaled = (np.clip(values, low, high) - median) / (q3 - q1 + 1e-3)
        rows = np.linalg.norm(scaled, axis=1, keepdims=True)
        peak = np.linalg.norm(scaled.ravel(), ord=np.inf)
        return torch.from_numpy(scaled / (rows + 1e-3)), torch.from_numpy(np.asarray(peak))


def build() -> nn.Module:
    torch.manual_seed(0)
    return RobustScaler().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(41)
    return [(torch.randn(7, 5, generator=g),), (torch.randn(12, 5, generator=g),)]
