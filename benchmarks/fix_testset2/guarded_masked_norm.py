"""Masked instance normalisation for padded sequences, with its guards written as tensor ops:
empty rows and zero variance are handled by clamps and ``torch.where``, not by branching."""

from typing import Optional

import torch
from torch import nn


class MaskedInstanceNorm(nn.Module):
    def __init__(self, dim: int = 5, eps: float = 1e-5, affine: bool = True):
        super().__init__()
        self.eps = eps
        if affine:
            self.weight = nn.Parameter(torch.ones(dim))
            self.bias = nn.Parameter(torch.zeros(dim))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if mask is None:
            mask = torch.ones(x.shape[:-1], dtype=torch.bool, device=x.device)
        weights = mask.unsqueeze(-1).to(x.dtype)
        count = weights.sum(dim=1, keepdim=True).clamp(min=1.0)
        mean = (x * weights).sum(dim=1, keepdim=True) / count
        var = ((x - mean).pow(2) * weights).sum(dim=1, keepdim=True) / count
        normed = torch.where(var > self.eps, (x - mean) / torch.sqrt(var + self.eps), x - mean)
        if self.weight is not None:
            normed = normed * self.weight + self.bias
        return normed * weights


def build() -> nn.Module:
    torch.manual_seed(0)
    return MaskedInstanceNorm().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(286)
    x = torch.randn(2, 6, 5, generator=g)
    x[1, :, 0] = 3.0
    partial = torch.tensor([[True] * 6, [True, True, True, False, False, False]])
    empty = torch.tensor([[True] * 6, [False] * 6])
    return [(x, partial), (x, empty)]
