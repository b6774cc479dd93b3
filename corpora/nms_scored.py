"""Greedy non-maximum suppression after a learned scoring head (Faster R-CNN / YOLO
post-processing): pop the best box, drop its overlaps, repeat until none is left. The loop
count and the `.item()` indices are data, so a trace hard-codes the example's survivors."""

import torch
import torch.nn as nn


def box_area(boxes):
    return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])


def iou_one_to_many(box, boxes):
    top_left = torch.maximum(box[:2], boxes[:, :2])
    bottom_right = torch.minimum(box[2:], boxes[:, 2:])
    wh = (bottom_right - top_left).clamp(min=0)
    inter = wh[:, 0] * wh[:, 1]
    return inter / (box_area(box) + box_area(boxes) - inter)


class ScoredNMS(nn.Module):
    def __init__(self, feat_dim: int = 6, iou_threshold: float = 0.5):
        super().__init__()
        self.score = nn.Linear(feat_dim, 1)
        self.iou_threshold = iou_threshold

    def forward(self, boxes, feats):
        scores = torch.sigmoid(self.score(feats)).squeeze(-1)
        order = scores.argsort(descending=True)  # expect: UT303
        keep = []
        while order.numel() > 0:  # expect: UT102
            i = order[0].item()  # expect: UT201
            keep.append(i)
            rest = order[1:]
            overlap = iou_one_to_many(boxes[i], boxes[rest])
            order = rest[overlap <= self.iou_threshold]
        kept = torch.tensor(keep, dtype=torch.long)
        return kept, scores[kept]


def build() -> nn.Module:
    torch.manual_seed(0)
    return ScoredNMS().eval()


def inputs() -> list[tuple]:
    boxes = torch.tensor(
        [
            [0.0, 0.0, 10.0, 10.0],
            [1.0, 1.0, 11.0, 11.0],
            [20.0, 20.0, 30.0, 30.0],
            [21.0, 19.0, 31.0, 29.0],
            [50.0, 0.0, 55.0, 8.0],
        ]
    )
    g = torch.Generator().manual_seed(6)
    feats = torch.randn(5, 6, generator=g)
    return [
        (boxes, feats),
        (boxes[:1], feats[:1]),
        (boxes[:0], feats[:0]),
    ]
