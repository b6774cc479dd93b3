"""A fixed number of denoising steps with a cosine schedule computed in Python."""

import math

import torch
from torch import nn


class CosineScheduleDenoiser(nn.Module):
    def __init__(self, dim: int = 4, num_steps: int = 4):
        super().__init__()
        self.denoise = nn.Linear(dim, dim)
        self.num_steps = num_steps

    def _alpha(self, step: int) -> float:
        return math.cos((step / self.num_steps + 0.008) / 1.008 * math.pi / 2) ** 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for step in range(self.num_steps):
            alpha = self._alpha(step)
            x = math.sqrt(alpha) * x + (1 - alpha) * torch.tanh(self.denoise(x))
        if isinstance(x, tuple):
            x = x[0]
        return x


def build() -> nn.Module:
    torch.manual_seed(0)
    return CosineScheduleDenoiser().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(42)
    return [(torch.randn(3, 4, generator=g),)]
