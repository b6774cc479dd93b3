"""Fine-tuning a classifier on a frozen backbone, with seeded dropout (reproducible masks,
as used with activation checkpointing) and inputs given as one tensor or a tuple of feature
groups. Hazard-free: `self.training` and `isinstance` are static Python, decided per call."""

import torch
import torch.nn as nn


class SeededDropout(nn.Module):
    def __init__(self, p: float, seed: int):
        super().__init__()
        self.p = p
        self.seed = seed

    def forward(self, x):
        if self.training:
            g = torch.Generator().manual_seed(self.seed)
            keep = torch.rand(x.shape, generator=g) >= self.p
            x = x * keep / (1.0 - self.p)
        return x


class Encoder(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(dim, hidden)
        self.drop = SeededDropout(0.1, seed=1)

    def forward(self, x):
        return self.drop(torch.relu(self.fc(x)))


class FrozenBackboneClassifier(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, num_classes: int = 3):
        super().__init__()
        self.backbone = Encoder(dim, hidden)
        self.head_drop = SeededDropout(0.25, seed=2)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x):
        if isinstance(x, (tuple, list)):
            x = torch.cat(x, dim=-1)
        return self.head(self.head_drop(self.backbone(x)))


def build() -> nn.Module:
    torch.manual_seed(0)
    model = FrozenBackboneClassifier()
    model.train()
    model.backbone.eval()  # the pretrained backbone stays frozen during fine-tuning
    return model


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(35)
    x = torch.randn(3, 8, generator=g)
    return [(x,), ((x[:, :5], x[:, 5:]),)]
