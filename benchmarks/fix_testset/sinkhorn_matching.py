"""Log-domain Sinkhorn iterations for a soft assignment between two point sets, with the usual
early exit when the dual potentials stop moving."""

import torch
from torch import nn


class SinkhornMatcher(nn.Module):
    def __init__(self, eps: float = 0.1, max_iter: int = 50, thresh: float = 1e-3):
        super().__init__()
        self.eps = eps
        self.max_iter = max_iter
        self.thresh = thresh

    def _modified_cost(self, cost: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return (-cost + u.unsqueeze(-1) + v.unsqueeze(-2)) / self.eps

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        cost = torch.cdist(x, y) ** 2
        n, m = cost.shape[-2], cost.shape[-1]
        mu = torch.full((n,), 1.0 / n, dtype=x.dtype)
        nu = torch.full((m,), 1.0 / m, dtype=x.dtype)
        u = torch.zeros_like(mu)
        v = torch.zeros_like(nu)
        for _ in range(self.max_iter):
            u_prev = u
            u = self.eps * (torch.log(mu + 1e-8) - torch.logsumexp(self._modified_cost(cost, u, v), dim=-1)) + u
            v = self.eps * (torch.log(nu + 1e-8) - torch.logsumexp(self._modified_cost(cost, u, v).transpose(-2, -1), dim=-1)) + v
            err = (u - u_prev).abs().sum()
            if err.item() < self.thresh:
                break
        return torch.exp(self._modified_cost(cost, u, v))


def build() -> nn.Module:
    return SinkhornMatcher().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(15)
    x = torch.randn(5, 2, generator=g)
    y = torch.randn(4, 2, generator=g)
    return [(x, y), (0.01 * x, 0.01 * y)]
