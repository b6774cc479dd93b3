"""Multi-exit cascade (Shallow-Deep networks, early-exit BERT): after every stage an exit
head may return when it is confident enough. The data-dependent `return` inside the stage
loop makes the number of stages run depend on the input, which a trace freezes."""

import torch
import torch.nn as nn


class ExitCascade(nn.Module):
    def __init__(self, dim: int = 12, num_classes: int = 5, depth: int = 3, threshold: float = 0.8):
        super().__init__()
        self.stages = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.ReLU()) for _ in range(depth)])
        self.exits = nn.ModuleList([nn.Linear(dim, num_classes) for _ in range(depth)])
        self.last_stage = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        self.classifier = nn.Linear(dim, num_classes)
        self.threshold = threshold

    def forward(self, x):
        for stage, exit_head in zip(self.stages, self.exits):  # expect: UT102
            x = stage(x)
            logits = exit_head(x)
            if torch.softmax(logits, dim=-1).amax(dim=-1).min() > self.threshold:  # expect: UT101
                return logits
        return self.classifier(self.last_stage(x))


def build() -> nn.Module:
    torch.manual_seed(0)
    return ExitCascade().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 12, generator=g)
    return [(x,), (8.0 * x,), (30.0 * x,)]
