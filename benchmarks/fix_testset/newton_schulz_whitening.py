"""Batch whitening by the Newton-Schulz iteration for the inverse square root of the covariance,
stopping once the iterate has converged."""

import torch
from torch import nn


def inverse_sqrt_newton_schulz(matrix: torch.Tensor, num_iters: int = 6, tol: float = 1e-4) -> torch.Tensor:
    dim = matrix.size(-1)
    norm = matrix.norm()
    identity = torch.eye(dim, dtype=matrix.dtype, device=matrix.device)
    y = matrix / norm
    z = identity.clone()
    for _ in range(num_iters):
        t = 0.5 * (3.0 * identity - z @ y)
        y = y @ t
        z = t @ z
        if torch.dist(y @ y, matrix / norm) < tol:
            break
    return z / norm.sqrt()


class IterNormWhitening(nn.Module):
    def __init__(self, num_features: int = 4, eps: float = 1e-3):
        super().__init__()
        self.eps = eps
        self.num_features = num_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        centered = x - x.mean(dim=0, keepdim=True)
        cov = centered.t() @ centered / x.size(0)
        cov = cov + self.eps * torch.eye(self.num_features, dtype=x.dtype)
        return centered @ inverse_sqrt_newton_schulz(cov)


def build() -> nn.Module:
    return IterNormWhitening().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(4)
    x = torch.randn(32, 4, generator=g)
    mixed = x @ torch.tensor([[1.0, 0.9, 0.0, 0.0], [0.0, 0.3, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    return [(x,), (mixed,)]
