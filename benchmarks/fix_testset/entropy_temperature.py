"""Calibration head that picks a temperature and an offset from a small table by the entropy of
the uncalibrated prediction."""

import torch
from torch import nn


class EntropyTemperatureScaling(nn.Module):
    def __init__(self, in_features: int = 6, num_classes: int = 4, low: float = 0.5, high: float = 1.2):
        super().__init__()
        self.logits = nn.Linear(in_features, num_classes)
        self.register_buffer("temperatures", torch.tensor([0.7, 1.0, 1.8]))
        self.register_buffer("offsets", torch.tensor([0.1, 0.0, -0.1]))
        self.low = low
        self.high = high

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        logits = self.logits(features)
        probs = logits.softmax(dim=-1)
        entropy = -(probs * probs.clamp_min(1e-9).log()).sum(dim=-1).mean()
        if entropy > self.high:
            temperature = self.temperatures[2]
            offset = self.offsets[2]
        elif entropy < self.low:
            temperature = self.temperatures[0]
            offset = self.offsets[0]
        else:
            temperature = self.temperatures[1]
            offset = self.offsets[1]
        return (logits / temperature + offset).softmax(dim=-1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return EntropyTemperatureScaling().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(34)
    f = torch.randn(3, 6, generator=g)
    return [(0.01 * f,), (30.0 * f,), (3.0 * f,)]
