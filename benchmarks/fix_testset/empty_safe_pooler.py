"""Masked mean pooler that returns zeros when the whole batch is padding."""

import torch
from torch import nn


class MaskedMeanPooler(nn.Module):
    def __init__(self, hidden_size: int = 8, out_size: int = 6):
        super().__init__()
        self.dense = nn.Linear(hidden_size, out_size)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        counts = attention_mask.sum(dim=1, keepdim=True).to(hidden_states.dtype)
        if (counts == 0).all():
            return hidden_states.new_zeros(hidden_states.size(0), self.dense.out_features)
        pooled = (hidden_states * attention_mask.unsqueeze(-1)).sum(dim=1) / counts.clamp(min=1.0)
        return torch.tanh(self.dense(pooled))


def build() -> nn.Module:
    torch.manual_seed(0)
    return MaskedMeanPooler().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(17)
    h = torch.randn(2, 5, 8, generator=g)
    return [(h, torch.tensor([[1, 1, 0, 0, 0], [1, 1, 1, 1, 0]])), (h, torch.zeros(2, 5, dtype=torch.long))]
