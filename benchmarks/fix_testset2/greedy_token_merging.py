"""Token merging to a budget: while more tokens are active than the budget allows, the most
similar pair of active tokens is averaged into one (size-weighted) and the other is retired."""

import torch
import torch.nn.functional as F
from torch import nn


class GreedyTokenMerger(nn.Module):
    def __init__(self, dim: int = 6, budget: int = 5):
        super().__init__()
        self.key = nn.Linear(dim, dim)
        self.budget = budget

    def forward(self, tokens: torch.Tensor, active: torch.Tensor):
        keys = F.normalize(self.key(tokens), dim=-1)
        similarity = keys @ keys.t()
        similarity.fill_diagonal_(float("-inf"))
        sizes = active.to(tokens.dtype)
        merged = tokens * sizes[:, None]
        while active.sum() > self.budget:
            pair_ok = active[:, None] & active[None, :]
            masked = similarity.masked_fill(~pair_ok, float("-inf"))
            flat = masked.argmax()
            keep, drop = flat // masked.shape[1], flat % masked.shape[1]
            merged[keep] = merged[keep] + merged[drop]
            sizes[keep] = sizes[keep] + sizes[drop]
            merged[drop] = 0.0
            sizes[drop] = 0.0
            active = active.clone()
            active[drop] = False
        pooled = merged / sizes.clamp(min=1.0)[:, None]
        return pooled, active


def build() -> nn.Module:
    torch.manual_seed(0)
    return GreedyTokenMerger().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(270)
    tokens = torch.randn(8, 6, generator=g)
    all_active = torch.ones(8, dtype=torch.bool)
    few = torch.tensor([True, False, True, False, True, False, False, True])
    return [(tokens, all_active), (tokens, few)]
