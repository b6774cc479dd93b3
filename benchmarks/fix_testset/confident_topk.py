"""Detection head that keeps at most ``max_detections`` boxes, and only those above the confidence threshold."""

import torch
from torch import nn


class ConfidentTopK(nn.Module):
    def __init__(self, feat_dim: int = 8, conf_threshold: float = 0.5, max_detections: int = 5):
        super().__init__()
        self.score = nn.Linear(feat_dim, 1)
        self.box = nn.Linear(feat_dim, 4)
        self.conf_threshold = conf_threshold
        self.max_detections = max_detections

    def forward(self, features: torch.Tensor):
        scores = self.score(features).squeeze(-1).sigmoid()
        boxes = self.box(features)
        num_confident = int((scores > self.conf_threshold).sum())
        k = min(num_confident, self.max_detections)
        top_scores, top_idx = scores.topk(k)
        return boxes[top_idx], top_scores


def build() -> nn.Module:
    torch.manual_seed(0)
    return ConfidentTopK().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(21)
    f = torch.randn(10, 8, generator=g)
    return [(f,), (-6.0 * f,), (6.0 * f,)]
