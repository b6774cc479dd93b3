"""Entropy-adaptive temperature (as in confidence-calibrated distillation or sampling):
sharpen when the prediction is uncertain, soften when it is already peaked. The choice is
a conditional expression on tensor values, which a trace turns into a constant."""

import torch
import torch.nn as nn


class EntropyTemperature(nn.Module):
    def __init__(self, dim: int = 8, num_classes: int = 6, entropy_threshold: float = 1.0):
        super().__init__()
        self.classifier = nn.Linear(dim, num_classes)
        self.entropy_threshold = entropy_threshold
        self.sharp = 0.5
        self.soft = 2.0

    def forward(self, x):
        logits = self.classifier(x)
        probs = torch.softmax(logits, dim=-1)
        entropy = -(probs * torch.log(probs + 1e-9)).sum(dim=-1).mean()
        tau = self.sharp if entropy > self.entropy_threshold else self.soft  # expect: UT101
        return torch.softmax(logits / tau, dim=-1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return EntropyTemperature().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(13)
    x = torch.randn(4, 8, generator=g)
    return [(0.1 * x,), (30.0 * x,)]
