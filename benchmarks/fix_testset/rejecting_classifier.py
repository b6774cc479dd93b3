"""Classifier with a reject option: low-quality inputs get the cheap fallback head and the rest
go through a refiner, both returning the quality score with the logits."""

from typing import Tuple

import torch
from torch import nn


class RejectingClassifier(nn.Module):
    def __init__(self, dim: int = 8, num_classes: int = 3, reject_below: float = 0.75):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        self.quality = nn.Linear(dim, 1)
        self.fallback = nn.Linear(dim, num_classes)
        self.refiner = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.head = nn.Linear(dim, num_classes)
        self.reject_below = reject_below

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.encoder(x)
        score = self.quality(h).sigmoid().mean()
        if score < self.reject_below:
            logits = self.fallback(h)
            return logits, score
        h = h + self.refiner(h)
        logits = self.head(h)
        return logits, score


def build() -> nn.Module:
    torch.manual_seed(0)
    model = RejectingClassifier().eval()
    with torch.no_grad():
        model.quality.weight.fill_(0.3)
        model.quality.bias.zero_()
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(22)
    x = torch.randn(4, 8, generator=g)
    return [(x,), (-x,), (5.0 * x,)]
