"""Switch layer with two experts chosen for the whole batch by the mean gate, returning the
auxiliary balancing loss with the hidden states."""

import torch
from torch import nn


class TwoExpertSwitch(nn.Module):
    def __init__(self, dim: int = 6):
        super().__init__()
        self.gate = nn.Linear(dim, 1)
        self.expert_a = nn.Sequential(nn.Linear(dim, dim), nn.SiLU())
        self.expert_b = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())

    def forward(self, x: torch.Tensor):
        gate_prob = torch.sigmoid(self.gate(x))
        if gate_prob.mean() > 0.5:
            hidden = self.expert_a(x)
            aux_loss = gate_prob.pow(2).mean()
        else:
            hidden = self.expert_b(x)
            aux_loss = (1 - gate_prob).pow(2).mean()
        return hidden + x, aux_loss


def build() -> nn.Module:
    torch.manual_seed(0)
    model = TwoExpertSwitch().eval()
    with torch.no_grad():
        model.gate.weight.fill_(0.4)
        model.gate.bias.zero_()
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(32)
    x = torch.randn(3, 6, generator=g).abs()
    return [(x,), (-x,)]
