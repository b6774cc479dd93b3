"""Plain multilayer perceptron classifier with a ModuleList of hidden layers. Hazard-free:
the only loop runs over submodules, which is static Python that a trace handles correctly."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLPClassifier(nn.Module):
    def __init__(self, dim: int = 10, hidden: int = 32, depth: int = 3, num_classes: int = 4):
        super().__init__()
        widths = [dim] + [hidden] * depth
        self.hidden = nn.ModuleList([nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:])])
        self.dropout = nn.Dropout(0.1)
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, x):
        for layer in self.hidden:
            x = self.dropout(F.gelu(layer(x)))
        return F.log_softmax(self.out(x), dim=-1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return MLPClassifier().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(30)
    return [(torch.randn(4, 10, generator=g),), (3.0 * torch.randn(4, 10, generator=g),)]
