"""Proposal filter written with a Python loop: keeps the boxes whose score passes the threshold."""

import torch
from torch import nn


class ProposalFilter(nn.Module):
    def __init__(self, feat_dim: int = 6, score_thresh: float = 0.5):
        super().__init__()
        self.scorer = nn.Linear(feat_dim, 1)
        self.score_thresh = score_thresh

    def forward(self, boxes: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        scores = self.scorer(features).squeeze(-1).sigmoid()
        keep = []
        for i in range(scores.size(0)):
            if scores[i] > self.score_thresh:
                keep.append(boxes[i] * scores[i])
        if len(keep) == 0:
            return boxes.new_zeros((0, 4))
        return torch.stack(keep)


def build() -> nn.Module:
    torch.manual_seed(0)
    return ProposalFilter().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(27)
    boxes = torch.rand(6, 4, generator=g)
    f = torch.randn(6, 6, generator=g)
    return [(boxes, f), (boxes, 20.0 * f), (boxes, torch.full((6, 6), -5.0))]
