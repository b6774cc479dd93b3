"""Channels-first LayerNorm (ConvNeXt / SegFormer style) that accepts (N, C), (N, C, L) or
(N, C, H, W) inputs by branching on the rank. The rank branch is static (a graph has one
rank per input); the shape assert disappears from the graph."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelsFirstLayerNorm(nn.Module):
    def __init__(self, channels: int = 6, eps: float = 1e-6):
        super().__init__()
        self.channels = channels
        self.eps = eps
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.2, 0.2, channels))

    def forward(self, x):
        assert x.shape[1] == self.channels  # expect: UT103
        if x.dim() == 2:  # the rank: static (fixed in every graph)
            return F.layer_norm(x, (self.channels,), self.weight, self.bias, self.eps)
        elif x.dim() == 3:  # the rank: static
            y = F.layer_norm(x.transpose(1, 2), (self.channels,), self.weight, self.bias, self.eps)
            return y.transpose(1, 2)
        y = F.layer_norm(x.movedim(1, -1), (self.channels,), self.weight, self.bias, self.eps)
        return y.movedim(-1, 1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return ChannelsFirstLayerNorm().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(10)
    return [
        (torch.randn(3, 6, generator=g),),
        (torch.randn(2, 6, 5, generator=g),),
        (torch.randn(2, 6, 4, 4, generator=g),),
    ]
