"""Adaptive Computation Time (Graves 2016, Universal Transformer): the recurrent cell
repeats until every sample's cumulative halting probability reaches the threshold. The
`while` on tensor values becomes a fixed number of unrolled steps under tracing."""

import torch
import torch.nn as nn


class AdaptiveComputationTime(nn.Module):
    def __init__(self, dim: int = 8, threshold: float = 0.99, min_halt: float = 0.1):
        super().__init__()
        self.cell = nn.Linear(2 * dim, dim)
        self.halt = nn.Linear(2 * dim, 1)
        self.threshold = threshold
        self.min_halt = min_halt

    def forward(self, x):
        state = x
        halting = x.new_zeros(x.shape[0])
        output = torch.zeros_like(x)
        while (halting < self.threshold).any():  # expect: UT102
            features = torch.cat([state, x], dim=-1)
            state = torch.tanh(self.cell(features))
            p = self.min_halt + (1.0 - self.min_halt) * torch.sigmoid(self.halt(features)).squeeze(-1)
            running = (halting < self.threshold).to(x.dtype)
            p = torch.minimum(p, 1.0 - halting) * running
            output = output + p.unsqueeze(-1) * state
            halting = halting + p
        return output, halting


def build() -> nn.Module:
    torch.manual_seed(0)
    return AdaptiveComputationTime().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(4)
    x = torch.randn(4, 8, generator=g)
    return [(x,), (3.0 * x,), (10.0 * x,)]
