"""Embedding lookup with a max-norm constraint (like nn.Embedding(max_norm=...)) where the
renormalisation is a private method that only runs when some looked-up row is too long.
The branch sits in `self._renorm`, one call away from forward."""

import torch
import torch.nn as nn


class MaxNormEmbeddingBag(nn.Module):
    def __init__(self, vocab: int = 20, dim: int = 8, max_norm: float = 3.0):
        super().__init__()
        self.table = nn.Parameter(torch.randn(vocab, dim))
        self.max_norm = max_norm
        self.proj = nn.Linear(dim, dim)

    def _renorm(self, rows):
        norms = rows.norm(dim=-1, keepdim=True)
        if (norms > self.max_norm).any():  # expect: UT101
            rows = rows * torch.clamp(self.max_norm / norms, max=1.0)
        return rows

    def forward(self, ids):
        rows = self._renorm(self.table[ids])
        return self.proj(rows.mean(dim=1))


def build() -> nn.Module:
    torch.manual_seed(0)
    return MaxNormEmbeddingBag().eval()


def inputs() -> list[tuple]:
    return [
        (torch.tensor([[0, 1, 3], [4, 6, 9]]),),
        (torch.tensor([[2, 5, 7], [10, 11, 12], [13, 14, 15]]),),
    ]
