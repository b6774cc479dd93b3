"""Rank-based (quantile) feature normalisation implemented with NumPy, as in tabular-data
preprocessing layers folded into a model. `np.asarray` and `.numpy()` take the values out
of the graph, so a trace exports the example's ranks as constants."""

import numpy as np
import torch
import torch.nn as nn


class RankGaussNormalizer(nn.Module):
    def __init__(self, dim: int = 6):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        values = np.asarray(h.detach())  # expect: UT202
        ranks = values.argsort(axis=0).argsort(axis=0).astype(np.float32)
        spread = h.detach().cpu().numpy().std(axis=0)  # expect: UT202
        uniform = torch.from_numpy((ranks + 0.5) / values.shape[0])
        scale = torch.from_numpy(spread.astype(np.float32)) + 1e-3
        return uniform * scale


def build() -> nn.Module:
    torch.manual_seed(0)
    return RankGaussNormalizer().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(17)
    return [(torch.randn(6, 6, generator=g),), (torch.randn(6, 6, generator=g),)]
