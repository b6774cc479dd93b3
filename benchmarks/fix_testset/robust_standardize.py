"""Standardisation layer that only rescales when the batch actually varies, otherwise centres
on zero with unit scale."""

import torch
from torch import nn


class RobustStandardize(nn.Module):
    def __init__(self, num_features: int = 5, min_std: float = 1e-2, eps: float = 1e-5):
        super().__init__()
        self.min_std = min_std
        self.eps = eps
        self.affine = nn.Linear(num_features, num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.std() > self.min_std:
            mean = x.mean(dim=-1, keepdim=True)
            scale = x.std(dim=-1, keepdim=True)
        else:
            mean = torch.zeros_like(x[..., :1])
            scale = torch.ones_like(x[..., :1])
        return self.affine((x - mean) / (scale + self.eps))


def build() -> nn.Module:
    torch.manual_seed(0)
    return RobustStandardize().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(30)
    x = torch.randn(3, 5, generator=g)
    return [(x,), (torch.full((3, 5), 0.25),)]
