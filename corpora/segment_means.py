"""Per-sequence pooling of a packed batch, as in set and graph readout layers: the packed
token features are split by the sequence lengths (`lengths.tolist()`) and each piece is
averaged. The lengths are tensor values, which a trace bakes in as the example's split."""

import torch
import torch.nn as nn


class SegmentMeans(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, packed, lengths):
        h = self.proj(packed)
        pieces = torch.split(h, lengths.tolist())  # expect: UT201
        means = [p.mean(0) for p in pieces]
        return torch.stack(means), torch.tensor(len(pieces))


def build() -> nn.Module:
    torch.manual_seed(0)
    return SegmentMeans().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(53)
    return [(torch.randn(6, 4, generator=g), torch.tensor([2, 3, 1])),
            (torch.randn(9, 4, generator=g), torch.tensor([1, 7, 1])),
            (torch.randn(4, 4, generator=g), torch.tensor([1, 1, 2]))]
