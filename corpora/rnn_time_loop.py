"""Elman RNN written as an explicit Python loop over time, accepting batched or unbatched
sequences (as torch.nn.RNN does). A trace unrolls the loop to the example's length; the
rank branch is static (a graph has one rank per input)."""

import torch
import torch.nn as nn


class ElmanRNN(nn.Module):
    def __init__(self, input_size: int = 6, hidden: int = 10):
        super().__init__()
        self.input_to_hidden = nn.Linear(input_size, hidden)
        self.hidden_to_hidden = nn.Linear(hidden, hidden, bias=False)
        self.hidden = hidden

    def forward(self, x):
        if x.dim() == 2:  # the rank: static (fixed in every graph)
            x = x.unsqueeze(0)
        h = x.new_zeros(x.shape[0], self.hidden)
        outputs = []
        for t in range(x.shape[1]):  # expect: UT104
            h = torch.tanh(self.input_to_hidden(x[:, t]) + self.hidden_to_hidden(h))
            outputs.append(h)
        return torch.stack(outputs, dim=1), h


def build() -> nn.Module:
    torch.manual_seed(0)
    return ElmanRNN().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(9)
    return [
        (torch.randn(5, 6, generator=g),),
        (torch.randn(2, 3, 6, generator=g),),
        (torch.randn(3, 1, 6, generator=g),),
    ]
