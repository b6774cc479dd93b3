"""Anchor-free (center-heatmap) object decoder: returns no boxes early when nothing clears the
score threshold; otherwise takes as many peaks as there are confident cells (capped), and builds
one box per peak from the size regression."""

import torch
import torch.nn.functional as F
from torch import nn


class CenterHeatmapDecoder(nn.Module):
    def __init__(self, channels: int = 4, num_classes: int = 2, score_threshold: float = 0.3, max_objects: int = 5):
        super().__init__()
        self.heatmap = nn.Conv2d(channels, num_classes, kernel_size=1)
        self.size = nn.Conv2d(channels, 2, kernel_size=1)
        self.score_threshold = score_threshold
        self.max_objects = max_objects

    def peaks(self, heat: torch.Tensor) -> torch.Tensor:
        pooled = F.max_pool2d(heat, kernel_size=3, stride=1, padding=1)
        return heat * (pooled == heat)

    def forward(self, features: torch.Tensor):
        heat = self.peaks(torch.sigmoid(self.heatmap(features)))[0]
        num_classes, height, width = heat.shape
        confident = heat > self.score_threshold
        if not confident.any():
            return features.new_zeros(0, 4), features.new_zeros(0), features.new_zeros(0, dtype=torch.long)
        k = min(int(confident.sum().item()), self.max_objects)
        scores, flat = heat.flatten().topk(k)
        sizes = self.size(features)[0]
        boxes = []
        for index in flat.tolist():
            cls, rem = divmod(index, height * width)
            y, x = divmod(rem, width)
            w, h = sizes[0, y, x].exp(), sizes[1, y, x].exp()
            boxes.append(torch.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2]))
        labels = flat // (height * width)
        return torch.stack(boxes), scores, labels


def build() -> nn.Module:
    torch.manual_seed(0)
    model = CenterHeatmapDecoder().eval()
    with torch.no_grad():
        model.heatmap.bias.fill_(-3.0)
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(284)
    quiet = torch.zeros(1, 4, 8, 8)
    few = torch.zeros(1, 4, 8, 8)
    few[0, 3, 2, 3] = 12.0
    few[0, 3, 6, 5] = 10.0
    busy = torch.randn(1, 4, 8, 8, generator=g) * 4.0
    return [(quiet,), (few,), (busy,)]
