"""Neural ODE with an adaptive Heun-Euler solver: a step is accepted when the embedded error
estimate is below tolerance, and the step size is adapted either way until t reaches 1."""

import torch
from torch import nn


class ODEFunc(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.Tanh(), nn.Linear(16, dim))

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.net(y) * (1.0 + t)


class AdaptiveODEBlock(nn.Module):
    def __init__(self, dim: int = 4, rtol: float = 1e-2, first_step: float = 0.5, max_steps: int = 64):
        super().__init__()
        self.func = ODEFunc(dim)
        self.rtol = rtol
        self.first_step = first_step
        self.max_steps = max_steps

    def forward(self, y0: torch.Tensor) -> torch.Tensor:
        t = torch.zeros(())
        dt = torch.full((), self.first_step)
        y = y0
        steps = 0
        while t < 1.0 and steps < self.max_steps:
            dt = torch.minimum(dt, 1.0 - t)
            k1 = self.func(t, y)
            k2 = self.func(t + dt, y + dt * k1)
            y_heun = y + dt * (k1 + k2) / 2
            error = (dt * (k2 - k1) / 2).abs().max() / (y_heun.abs().max() + 1e-6)
            if error <= self.rtol:
                t = t + dt
                y = y_heun
                dt = dt * 1.5
            else:
                dt = dt * 0.5
            steps += 1
        return y


def build() -> nn.Module:
    torch.manual_seed(0)
    return AdaptiveODEBlock().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(267)
    y0 = torch.randn(3, 4, generator=g)
    return [(y0,), (y0 * 8.0,)]
