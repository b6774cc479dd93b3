"""ELMo-style scalar mix of layer outputs plus a two-way learned gate: the softmax-normalised
weights are unpacked and zipped in Python. Zipping a tensor iterates its first dimension,
which a trace fixes to the example's length; here that length is the parameter's (one
weight per layer), the same for every input, so the trace is right and nothing is
reported. Unpacking into two names is no hazard either (any input eager accepts has two
rows). Iterating the rows of a hidden state is the hazard."""

import torch
import torch.nn as nn


class ScalarMixEncoder(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 3):
        super().__init__()
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim), nn.Tanh()) for _ in range(num_layers)])
        self.layer_scalars = nn.Parameter(torch.linspace(-1.0, 1.0, num_layers))
        self.pair_logits = nn.Parameter(torch.tensor([0.3, -0.3]))
        self.skip = nn.Linear(dim, dim)

    def forward(self, x):
        outputs = []
        h = x
        for layer in self.layers:
            h = layer(h)
            outputs.append(h)
        weights = torch.softmax(self.layer_scalars, dim=0)
        mixed = sum(w * out for w, out in zip(weights, outputs))
        w_mix, w_skip = torch.softmax(self.pair_logits, dim=0)
        rows = sum(r for r in torch.relu(x))  # expect: UT105
        return w_mix * mixed + w_skip * self.skip(x) + rows


def build() -> nn.Module:
    torch.manual_seed(0)
    return ScalarMixEncoder().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(20)
    return [(torch.randn(3, 8, generator=g),), (torch.randn(3, 8, generator=g),)]
