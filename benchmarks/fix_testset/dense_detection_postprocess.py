"""Post-processing of a dense detector for one image: nothing is returned when no anchor passes
the score threshold, otherwise the top candidates are decoded."""

import torch
from torch import nn


class DenseDetectionPostprocess(nn.Module):
    def __init__(self, num_classes: int = 3, score_thresh: float = 0.3, topk_candidates: int = 4):
        super().__init__()
        self.num_classes = num_classes
        self.score_thresh = score_thresh
        self.topk_candidates = topk_candidates

    def forward(self, cls_logits: torch.Tensor, box_regression: torch.Tensor, anchors: torch.Tensor):
        scores = torch.sigmoid(cls_logits).flatten()
        if scores.max() < self.score_thresh:
            return box_regression.new_zeros((0, 4)), scores.new_zeros((0,)), torch.zeros((0,), dtype=torch.long)
        num_topk = min(self.topk_candidates, int((scores > self.score_thresh).sum()))
        top_scores, topk_idxs = scores.topk(num_topk)
        anchor_idxs = torch.div(topk_idxs, self.num_classes, rounding_mode="floor")
        labels = topk_idxs % self.num_classes
        boxes = anchors[anchor_idxs] + box_regression[anchor_idxs]
        return boxes, top_scores, labels


def build() -> nn.Module:
    return DenseDetectionPostprocess().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(35)
    logits = torch.randn(6, 3, generator=g)
    reg = torch.randn(6, 4, generator=g)
    anchors = torch.rand(6, 4, generator=g)
    return [(logits, reg, anchors), (logits - 10.0, reg, anchors), (logits - 1.2, reg, anchors)]
