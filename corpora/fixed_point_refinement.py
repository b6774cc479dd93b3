"""Deep-equilibrium style iterative refinement: apply the layer until the update is below
a tolerance or an iteration cap is hit. The convergence `break` makes the iteration count
data-dependent; a trace unrolls exactly as many steps as the example needed."""

import torch
import torch.nn as nn


class FixedPointLayer(nn.Module):
    def __init__(self, dim: int = 8, max_iter: int = 15, tol: float = 1e-4):
        super().__init__()
        self.recurrent = nn.Linear(dim, dim, bias=False)
        nn.init.orthogonal_(self.recurrent.weight, gain=0.9)
        self.inject = nn.Linear(dim, dim)
        self.max_iter = max_iter
        self.tol = tol

    def forward(self, x):
        injection = self.inject(x)
        z = torch.zeros_like(injection)
        for _ in range(self.max_iter):  # expect: UT102
            z_next = torch.tanh(self.recurrent(z) + injection)
            delta = z_next - z
            z = z_next
            if delta.abs().max() < self.tol:  # expect: UT101
                break
        return z


def build() -> nn.Module:
    torch.manual_seed(0)
    return FixedPointLayer().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(8)
    x = torch.randn(3, 8, generator=g)
    # Saturated (60x) converges in a few steps, small inputs take many: a trace on the
    # first bakes too few iterations for the second.
    return [(60.0 * x,), (0.1 * x,)]
