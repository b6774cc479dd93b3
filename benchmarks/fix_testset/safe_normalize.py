"""Normalises embeddings, falling back to a clamped norm when some row is nearly zero."""

import torch
from torch import Tensor, nn


def safe_normalize(v: Tensor, eps: float = 1e-3) -> Tensor:
    norm = v.norm(dim=-1, keepdim=True)
    if norm.min() > eps:
        return v / norm
    return v / norm.clamp_min(eps)


class EmbeddingNormalizer(nn.Module):
    def __init__(self, dim: int = 5):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return safe_normalize(self.proj(x))


def build() -> nn.Module:
    torch.manual_seed(0)
    return EmbeddingNormalizer().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(23)
    x = torch.randn(3, 5, generator=g)
    tiny = x.clone()
    tiny[0] = 1e-6
    return [(x,), (tiny,)]
