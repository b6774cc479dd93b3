"""A transformer-style feed-forward block whose optional parts are chosen by its configuration
and by which arguments the caller passes."""

from dataclasses import dataclass
from typing import Optional, Tuple

import torch
from torch import nn


@dataclass
class BlockConfig:
    hidden_size: int = 8
    intermediate_size: int = 16
    num_layers: int = 2
    use_gate: bool = True
    layer_norm_eps: float = 1e-5


class ConfigurableBlock(nn.Module):
    def __init__(self, config: BlockConfig):
        super().__init__()
        self.config = config
        self.up = nn.ModuleList([nn.Linear(config.hidden_size, config.intermediate_size) for _ in range(config.num_layers)])
        self.down = nn.ModuleList([nn.Linear(config.intermediate_size, config.hidden_size) for _ in range(config.num_layers)])
        self.gates = nn.ModuleList([nn.Linear(config.hidden_size, config.intermediate_size) for _ in range(config.num_layers)]) \
            if config.use_gate else None
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                output_hidden_states: bool = False) -> Tuple[torch.Tensor, ...]:
        all_hidden = () if output_hidden_states else None
        if attention_mask is not None:
            hidden_states = hidden_states * attention_mask.unsqueeze(-1)
        for i, (up, down) in enumerate(zip(self.up, self.down)):
            inner = torch.relu(up(hidden_states))
            if self.gates is not None:
                inner = inner * torch.sigmoid(self.gates[i](hidden_states))
            if self.training:
                inner = self.dropout(inner)
            hidden_states = self.norm(hidden_states + down(inner))
            if all_hidden is not None:
                all_hidden = all_hidden + (hidden_states,)
        if output_hidden_states:
            return (hidden_states,) + all_hidden
        return (hidden_states,)


def build() -> nn.Module:
    torch.manual_seed(0)
    return ConfigurableBlock(BlockConfig()).eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(39)
    h = torch.randn(2, 3, 8, generator=g)
    return [(h, torch.ones(2, 3)), (h, torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))]
