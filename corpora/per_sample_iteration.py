"""Set encoder written with per-example Python loops (DeepSets-style pooling done sample by
sample). Iterating a tensor or calling `list()` on it unrolls over the batch dimension, so
the traced graph only accepts the example's batch size."""

import torch
import torch.nn as nn


class PerSampleSetEncoder(nn.Module):
    def __init__(self, dim: int = 6, hidden: int = 8):
        super().__init__()
        self.encode = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.head = nn.Linear(2 * hidden, 3)

    def forward(self, x):
        h = self.encode(x)
        pooled = []
        for sample in h:  # expect: UT105
            pooled.append(sample.amax(dim=0))
        means = list(h.mean(dim=1))  # expect: UT105
        features = torch.cat([torch.stack(pooled), torch.stack(means)], dim=-1)
        sizes = torch.stack([row.abs().sum() for row in x.unbind(0)])  # expect: UT105
        return self.head(features), sizes


def build() -> nn.Module:
    torch.manual_seed(0)
    return PerSampleSetEncoder().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(19)
    return [(torch.randn(3, 4, 6, generator=g),), (torch.randn(1, 5, 6, generator=g),)]
