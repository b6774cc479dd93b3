"""Two-stage detector proposal filtering: keep the anchors whose objectness passes a
threshold (via `torch.nonzero`), falling back to the single best anchor when none does. The
number of nonzero hits is a data-dependent shape, so both `if`s depend on tensor values."""

import torch
import torch.nn as nn


class ProposalFilter(nn.Module):
    def __init__(self, dim: int = 8, threshold: float = 0.6):
        super().__init__()
        self.objectness = nn.Linear(dim, 1)
        self.regress = nn.Linear(dim, 4)
        self.threshold = threshold

    def forward(self, feats):
        scores = torch.sigmoid(self.objectness(feats)).squeeze(-1)
        idx = torch.nonzero(scores > self.threshold).squeeze(1)
        if idx.shape[0] > 0:  # expect: UT101
            selected = feats[idx]
        else:
            selected = feats[scores.argmax().unsqueeze(0)]
        deltas = self.regress(selected)
        wide = deltas[deltas[:, 2] > 0]
        if wide.numel() == 0:  # expect: UT101
            return deltas, scores
        return wide, scores


def build() -> nn.Module:
    torch.manual_seed(0)
    return ProposalFilter().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(21)
    feats = torch.randn(6, 8, generator=g)
    return [(feats,), (0.01 * feats,), (-4.0 * feats,), (4.0 * feats,)]
