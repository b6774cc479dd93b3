"""Gated top-k pooling block built from ops that return tuples (chunk, split, unbind, topk,
max(dim)) and from unpacking `.shape`. Hazard-free: unpacking a tuple of tensors or a shape
is not tensor iteration, and `for row in x.unbind(0)` iterates a Python tuple."""

import torch
import torch.nn as nn


class GatedTopKPool(nn.Module):
    def __init__(self, dim: int = 8, k: int = 2):
        super().__init__()
        self.glu_in = nn.Linear(dim, 2 * dim)
        self.qk = nn.Linear(dim, 2 * dim)
        self.k = k

    def forward(self, x):
        batch, length, dim = x.shape
        value, gate = self.glu_in(x).chunk(2, dim=-1)
        h = value * torch.sigmoid(gate)
        q, k = torch.unbind(self.qk(h).view(batch, length, 2, dim), dim=2)
        scores = (q * k).sum(dim=-1)
        top_scores, top_idx = torch.topk(scores, self.k, dim=-1)  # expect: UT303
        picked = torch.gather(h, 1, top_idx.unsqueeze(-1).expand(-1, -1, dim))
        peak, _ = h.max(dim=1)
        left, right = peak.split([dim // 2, dim - dim // 2], dim=-1)
        norms = torch.stack([row.norm() for row in x.unbind(0)])  # expect: UT105
        pooled = (torch.softmax(top_scores, dim=-1).unsqueeze(-1) * picked).sum(dim=1)
        return torch.cat([pooled, left - right], dim=-1), norms


def build() -> nn.Module:
    torch.manual_seed(0)
    return GatedTopKPool().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(37)
    return [(torch.randn(2, 5, 8, generator=g),), (torch.randn(2, 5, 8, generator=g),)]
