"""Keeping only the salient feature vectors before pooling, as in token-pruning and
memory-bank layers: the token embeddings whose norm exceeds a threshold are kept by a
comprehension filtered on tensor values, and so are the per-scale summaries whose mean
activation is positive. A trace keeps exactly the example's survivors."""

import torch
import torch.nn as nn


class SalientPooling(nn.Module):
    def __init__(self, dim: int = 4, threshold: float = 1.0):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.threshold = threshold

    def forward(self, tokens):
        h = self.proj(tokens)
        kept = [t for t in h if t.norm() > self.threshold]  # expect: UT101, UT105
        pooled = torch.stack(kept).mean(dim=0)
        scales = [h, h.relu(), h.tanh() - 0.5]
        active = [s.mean(dim=0) for s in scales if s.mean() > 0]  # expect: UT101
        summary = torch.cat(active) * len(active)
        return pooled, summary, torch.tensor(len(kept))


def build() -> nn.Module:
    torch.manual_seed(0)
    return SalientPooling().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(47)
    return [(torch.randn(6, 4, generator=g) * 2,), (torch.randn(9, 4, generator=g) * 2,),
            (torch.randn(5, 4, generator=g) - 2,)]
