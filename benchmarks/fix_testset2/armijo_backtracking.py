"""Unrolled gradient descent with a backtracking (Armijo) line search, as used by learned
optimisation layers: the step is halved until the energy decreases enough."""

import torch
from torch import nn


class BacktrackingDescent(nn.Module):
    def __init__(self, dim: int = 5, steps: int = 3, shrink: float = 0.5,
                 sufficient_decrease: float = 1e-2, max_backtracks: int = 6):
        super().__init__()
        self.quadratic = nn.Linear(dim, dim, bias=False)
        self.target = nn.Parameter(torch.randn(dim))
        self.steps = steps
        self.shrink = shrink
        self.sufficient_decrease = sufficient_decrease
        self.max_backtracks = max_backtracks

    def energy(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * (self.quadratic(x - self.target) ** 2).sum()

    def gradient(self, x: torch.Tensor) -> torch.Tensor:
        w = self.quadratic.weight
        return (w.t() @ (w @ (x - self.target)[:, None]))[:, 0]

    def forward(self, x: torch.Tensor, initial_step: torch.Tensor) -> torch.Tensor:
        for _ in range(self.steps):
            grad = self.gradient(x)
            current = self.energy(x)
            step = initial_step
            for _ in range(self.max_backtracks):
                candidate = x - step * grad
                if self.energy(candidate) <= current - self.sufficient_decrease * step * grad.pow(2).sum():
                    break
                step = step * self.shrink
            x = x - step * grad
        return x


def build() -> nn.Module:
    torch.manual_seed(0)
    return BacktrackingDescent().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(274)
    x = torch.randn(5, generator=g)
    return [(x, torch.tensor(4.0)), (x * 10, torch.tensor(0.25)), (x, torch.tensor(1000.0))]
