"""Metric-learning loss head: when the batch has hard negatives (closer than the margin) the loss
is averaged over them with their count; otherwise the semi-hard ones are used at a lower weight."""

import torch
import torch.nn.functional as F
from torch import nn


class HardNegativeLoss(nn.Module):
    def __init__(self, dim: int = 8, embed_dim: int = 4, margin: float = 0.5, semi_hard_weight: float = 0.1):
        super().__init__()
        self.embed = nn.Linear(dim, embed_dim)
        self.margin = margin
        self.semi_hard_weight = semi_hard_weight

    def forward(self, anchors: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor):
        a = F.normalize(self.embed(anchors), dim=-1)
        p = F.normalize(self.embed(positives), dim=-1)
        n = F.normalize(self.embed(negatives), dim=-1)
        pos_dist = (a - p).norm(dim=-1)
        neg_dist = torch.cdist(a, n)
        hard = neg_dist < pos_dist[:, None] + self.margin
        if hard.any():
            violations = torch.relu(pos_dist[:, None] - neg_dist + self.margin) * hard
            count = hard.sum()
            loss = violations.sum() / count
        else:
            violations = torch.relu(pos_dist[:, None] - neg_dist + 2 * self.margin)
            count = torch.zeros((), dtype=torch.long)
            loss = self.semi_hard_weight * violations.mean()
        return loss, count, violations


def build() -> nn.Module:
    torch.manual_seed(0)
    return HardNegativeLoss().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(282)
    anchors = torch.randn(3, 8, generator=g)
    close_negatives = anchors + 0.1 * torch.randn(3, 8, generator=g)
    return [(anchors, anchors, close_negatives), (anchors, anchors, -anchors)]
