"""DeeBERT-style early exit: after each encoder layer an off-ramp classifier answers as soon as
its prediction entropy is low enough."""

import torch
from torch import nn


def entropy(logits: torch.Tensor) -> torch.Tensor:
    probs = logits.softmax(dim=-1)
    return -(probs * logits.log_softmax(dim=-1)).sum(dim=-1)


class EarlyExitEncoder(nn.Module):
    def __init__(self, hidden_size: int = 8, num_layers: int = 4, num_labels: int = 3, exit_entropy: float = 1.0):
        super().__init__()
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.GELU())
                                     for _ in range(num_layers)])
        self.highways = nn.ModuleList([nn.Linear(hidden_size, num_labels) for _ in range(num_layers)])
        self.exit_entropy = exit_entropy

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer, highway in zip(self.layers, self.highways):
            hidden_states = layer(hidden_states)
            logits = highway(hidden_states.mean(dim=1))
            if entropy(logits).max() < self.exit_entropy:
                return logits
        return logits


def build() -> nn.Module:
    torch.manual_seed(0)
    return EarlyExitEncoder().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(19)
    h = torch.randn(2, 4, 8, generator=g)
    return [(0.1 * h,), (40.0 * h,)]
