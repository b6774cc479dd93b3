"""Hard monotonic attention for streaming speech recognition: from the previous attended frame
the decoder scans forward and attends to the first frame whose selection probability passes 0.5
(or stays at the last frame)."""

import torch
from torch import nn


class MonotonicAttentionStep(nn.Module):
    def __init__(self, enc_dim: int = 6, dec_dim: int = 5, energy_bias: float = 0.0):
        super().__init__()
        self.enc_proj = nn.Linear(enc_dim, dec_dim, bias=False)
        self.dec_proj = nn.Linear(dec_dim, dec_dim)
        self.energy = nn.Linear(dec_dim, 1)
        self.energy_bias = energy_bias

    def forward(self, memory: torch.Tensor, query: torch.Tensor, previous: torch.Tensor):
        keys = self.enc_proj(memory)
        q = self.dec_proj(query)
        attended = memory.shape[0] - 1
        for j in range(int(previous), memory.shape[0]):
            p_select = torch.sigmoid(self.energy(torch.tanh(keys[j] + q)) + self.energy_bias)
            if p_select > 0.5:
                attended = j
                break
        context = memory[attended]
        return context, torch.tensor(attended)


def build() -> nn.Module:
    torch.manual_seed(0)
    return MonotonicAttentionStep().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(273)
    memory = torch.randn(7, 6, generator=g) * 2.0
    query = torch.randn(5, generator=g)
    return [(memory, query, torch.tensor(0)), (memory, query, torch.tensor(3)), (memory, -query * 4, torch.tensor(0))]
