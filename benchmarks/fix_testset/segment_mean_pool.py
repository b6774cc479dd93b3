"""Graph readout: mean of the node features of each graph in a batch given CSR-style offsets."""

import torch
from torch import nn


class SegmentMeanReadout(nn.Module):
    def __init__(self, dim: int = 4, out_dim: int = 3):
        super().__init__()
        self.lin = nn.Linear(dim, out_dim)

    def forward(self, x: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
        pooled = []
        for start, end in zip(ptr[:-1].tolist(), ptr[1:].tolist()):
            pooled.append(x[start:end].mean(dim=0))
        return self.lin(torch.stack(pooled, dim=0))


def build() -> nn.Module:
    torch.manual_seed(0)
    return SegmentMeanReadout().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(26)
    x = torch.randn(9, 4, generator=g)
    return [(x, torch.tensor([0, 2, 7, 9])), (x, torch.tensor([0, 5, 6, 9]))]
