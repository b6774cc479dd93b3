"""Switch-style mixture of experts with top-1 routing: each expert runs only on the tokens
routed to it, skipped when it received none. The `if mask.any()` and the masked write are
frozen by a trace to the routing of the example batch."""

import torch
import torch.nn as nn


class Top1MoE(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, num_experts: int = 3):
        super().__init__()
        self.router = nn.Linear(dim, num_experts)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)) for _ in range(num_experts)]
        )

    def forward(self, x):
        gates = torch.softmax(self.router(x), dim=-1)
        weight, expert_idx = gates.max(dim=-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            mask = expert_idx == i
            if mask.any():  # expect: UT101
                out[mask] = weight[mask, None] * expert(x[mask])  # expect: UT304
        return out


def build() -> nn.Module:
    torch.manual_seed(0)
    return Top1MoE().eval()


def inputs() -> list[tuple]:
    def tokens(seed: int) -> torch.Tensor:
        return torch.randn(12, 8, generator=torch.Generator().manual_seed(seed))

    # With seed 1 expert 0 receives no token (a trace on it drops that expert); seed 35
    # routes tokens to every expert.
    return [(tokens(1),), (tokens(35),)]
