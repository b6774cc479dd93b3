"""Anytime classifier: a cascade of increasingly deep stages, each with its own head; the
cascade stops at the first stage whose top-class margin clears the threshold."""

import torch
from torch import nn


class Stage(nn.Module):
    def __init__(self, dim: int, num_classes: int):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor):
        x = x + self.block(x)
        return x, self.head(x)


class CascadeClassifier(nn.Module):
    def __init__(self, dim: int = 8, num_classes: int = 4, depth: int = 4, margin: float = 0.25):
        super().__init__()
        self.stages = nn.ModuleList(Stage(dim, num_classes) for _ in range(depth))
        self.margin = margin

    @staticmethod
    def top2_margin(logits: torch.Tensor) -> torch.Tensor:
        top2 = logits.softmax(dim=-1).topk(2, dim=-1).values
        return (top2[..., 0] - top2[..., 1]).min()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = None
        exit_index = torch.zeros((), dtype=torch.long)
        for index, stage in enumerate(self.stages):
            x, logits = stage(x)
            exit_index = torch.full((), index)
            if self.top2_margin(logits) > self.margin:
                break
        return logits.log_softmax(dim=-1), exit_index


def build() -> nn.Module:
    torch.manual_seed(0)
    return CascadeClassifier().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(271)
    x = torch.randn(2, 8, generator=g)
    return [(x * 0.01,), (x * 6.0,), (x,)]
