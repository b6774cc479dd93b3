"""Packing a ragged batch (concatenated variable-length sequences plus a lengths vector)
into a padded tensor, as done before RNNs and CTC losses. Enumerating the lengths tensor
unrolls over the batch, and each slice write is an in-place index assignment."""

import torch
import torch.nn as nn


class RaggedToPadded(nn.Module):
    def __init__(self, dim: int = 4, max_len: int = 5):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.max_len = max_len

    def forward(self, flat, lengths):
        cpu_lengths = lengths.cpu()
        out = flat.new_zeros(cpu_lengths.shape[0], self.max_len, flat.shape[-1])
        start = 0
        for i, n in enumerate(cpu_lengths):  # expect: UT105
            out[i, :n] = self.proj(flat[start : start + n])  # expect: UT304
            start = start + n
        return out


def build() -> nn.Module:
    torch.manual_seed(0)
    return RaggedToPadded().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(29)
    return [
        (torch.randn(9, 4, generator=g), torch.tensor([5, 0, 3, 1])),
        (torch.randn(3, 4, generator=g), torch.tensor([0, 2, 0, 1])),
    ]
