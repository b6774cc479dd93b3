"""Deep-equilibrium block: iterates a contractive cell to its fixed point with naive forward
iteration, stopping at a relative residual or an iteration cap."""

import torch
from torch import nn


class EquilibriumBlock(nn.Module):
    def __init__(self, dim: int = 6, tol: float = 1e-3, max_iter: int = 40):
        super().__init__()
        self.inject = nn.Linear(dim, dim)
        self.recur = nn.Linear(dim, dim, bias=False)
        self.tol = tol
        self.max_iter = max_iter

    def cell(self, z: torch.Tensor, injection: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.recur(z) + injection)

    def forward(self, x: torch.Tensor):
        injection = self.inject(x)
        z = torch.zeros_like(x)
        residual = torch.tensor(float("inf"))
        steps = 0
        while residual > self.tol and steps < self.max_iter:
            z_next = self.cell(z, injection)
            residual = (z_next - z).norm() / (z_next.norm() + 1e-8)
            z = z_next
            steps += 1
        return z, steps


def build() -> nn.Module:
    torch.manual_seed(0)
    model = EquilibriumBlock().eval()
    with torch.no_grad():
        model.recur.weight.mul_(0.5)
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(266)
    x = torch.randn(2, 6, generator=g)
    return [(x,), (x * 0.01,)]
