"""Unrolled GRU over a padded batch that only runs as many steps as the longest sequence, stacking
the per-step outputs."""

import torch
from torch import nn


class UnrolledGRU(nn.Module):
    def __init__(self, input_size: int = 4, hidden_size: int = 6):
        super().__init__()
        self.cell = nn.GRUCell(input_size, hidden_size)
        self.hidden_size = hidden_size

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch_size = inputs.size(0)
        hx = inputs.new_zeros(batch_size, self.hidden_size)
        outputs = []
        for t in range(int(lengths.max())):
            mask = (t < lengths).unsqueeze(-1).to(inputs.dtype)
            hx = mask * self.cell(inputs[:, t], hx) + (1 - mask) * hx
            outputs.append(hx * mask)
        return torch.stack(outputs, dim=1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return UnrolledGRU().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(25)
    x = torch.randn(2, 6, 4, generator=g)
    return [(x, torch.tensor([2, 1])), (x, torch.tensor([6, 3])), (x, torch.tensor([4, 4]))]
