"""Early-exit classifier (BranchyNet / DeeBERT style): a cheap head answers when the whole
batch is confident, otherwise the deep trunk runs. A trace records only the path its
example took, so the exported graph always exits early or never does."""

import torch
import torch.nn as nn


class EarlyExitClassifier(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32, num_classes: int = 4, threshold: float = 0.9):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU())
        self.early_head = nn.Linear(hidden, num_classes)
        self.trunk = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.final_head = nn.Linear(hidden, num_classes)
        self.threshold = threshold

    def forward(self, x):
        h = self.stem(x)
        early = self.early_head(h)
        confidence = torch.softmax(early, dim=-1).amax(dim=-1).min()
        if confidence >= self.threshold:  # expect: UT101
            return early
        return self.final_head(self.trunk(h))


def build() -> nn.Module:
    torch.manual_seed(0)
    return EarlyExitClassifier().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 16, generator=g)
    return [(0.1 * x,), (200.0 * x,)]
