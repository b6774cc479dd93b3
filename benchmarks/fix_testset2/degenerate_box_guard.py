"""Box regression loss head: the GIoU term between predicted and target boxes, which returns a
zero loss early when the batch contains a degenerate (empty) target box."""

import torch
from torch import nn


def generalized_iou(pred: torch.Tensor, target: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    lt = torch.maximum(pred[:, :2], target[:, :2])
    rb = torch.minimum(pred[:, 2:], target[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=1)
    area_p = (pred[:, 2:] - pred[:, :2]).prod(dim=1)
    area_t = (target[:, 2:] - target[:, :2]).prod(dim=1)
    union = area_p + area_t - inter
    hull = (torch.maximum(pred[:, 2:], target[:, 2:]) - torch.minimum(pred[:, :2], target[:, :2])).prod(dim=1)
    return inter / (union + eps) - (hull - union) / (hull + eps)


def giou_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if (target[:, 2:] <= target[:, :2]).any():
        return pred.sum() * 0.0
    return (1.0 - generalized_iou(pred, target)).mean()


class BoxRegressionHead(nn.Module):
    def __init__(self, dim: int = 6):
        super().__init__()
        self.reg = nn.Linear(dim, 4)

    def forward(self, features: torch.Tensor, anchors: torch.Tensor, targets: torch.Tensor):
        deltas = self.reg(features)
        pred = torch.cat([anchors[:, :2] + deltas[:, :2], anchors[:, 2:] + deltas[:, 2:].exp()], dim=1)
        return pred, giou_loss(pred, targets)


def build() -> nn.Module:
    torch.manual_seed(0)
    return BoxRegressionHead().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(277)
    features = torch.randn(3, 6, generator=g)
    anchors = torch.tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 4.0, 3.0], [2.0, 0.0, 5.0, 5.0]])
    good = anchors + 0.3
    bad = good.clone()
    bad[1, 2] = bad[1, 0]
    return [(features, anchors, good), (features, anchors, bad)]
