"""Recurrent encoder that trims a padded batch to its longest real sequence before looping
over time (a standard speed-up in speech and NLP code). The trimmed length is read with
`int()`, then drives the time loop, so a trace fixes both to the example."""

import torch
import torch.nn as nn


class TrimmedGRUEncoder(nn.Module):
    def __init__(self, input_size: int = 5, hidden: int = 8):
        super().__init__()
        self.cell = nn.GRUCell(input_size, hidden)
        self.hidden = hidden

    def forward(self, x, lengths):
        max_len = int(lengths.max())  # expect: UT201
        x = x[:, :max_len]
        h = x.new_zeros(x.shape[0], self.hidden)
        for t in range(max_len):  # expect: UT102
            step = (lengths > t).to(x.dtype).unsqueeze(-1)
            h = step * self.cell(x[:, t], h) + (1.0 - step) * h
        return h


def build() -> nn.Module:
    torch.manual_seed(0)
    return TrimmedGRUEncoder().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(24)
    x = torch.randn(3, 6, 5, generator=g)
    return [
        (x, torch.tensor([1, 1, 1])),
        (x, torch.tensor([6, 2, 4])),
        (x, torch.tensor([0, 0, 0])),
    ]
