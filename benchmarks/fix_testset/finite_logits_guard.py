"""Classifier head that repairs non-finite logits before the log-softmax."""

import torch
from torch import nn


class GuardedClassifier(nn.Module):
    def __init__(self, in_features: int = 6, num_classes: int = 4):
        super().__init__()
        self.classifier = nn.Linear(in_features, num_classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        logits = self.classifier(features)
        if not torch.isfinite(logits).all():
            logits = torch.nan_to_num(logits, nan=0.0, posinf=1e4, neginf=-1e4)
        return logits.log_softmax(dim=-1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return GuardedClassifier().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(20)
    f = torch.randn(3, 6, generator=g)
    bad = f.clone()
    bad[1, 2] = float("inf")
    return [(f,), (bad,)]
