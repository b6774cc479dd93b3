"""Block floating point: halves a block until it fits the representable range and returns the
mantissas with the shared exponent."""

import torch
from torch import nn


class BlockFloatQuantizer(nn.Module):
    def __init__(self, bound: float = 4.0, levels: int = 16):
        super().__init__()
        self.bound = bound
        self.levels = levels

    def forward(self, block: torch.Tensor):
        exponent = torch.zeros((), dtype=torch.long)
        while block.abs().amax() > self.bound:
            block = block * 0.5
            exponent = exponent + 1
        mantissa = torch.round(block / self.bound * self.levels) / self.levels * self.bound
        return mantissa, exponent


def build() -> nn.Module:
    return BlockFloatQuantizer().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(16)
    b = torch.randn(4, 4, generator=g)
    return [(0.5 * b,), (20.0 * b,), (300.0 * b,)]
