"""Projects token features onto their principal direction, found by power iteration with an
early stop on convergence."""

import torch
import torch.nn.functional as F
from torch import nn


class PrincipalProjection(nn.Module):
    def __init__(self, dim: int = 6, max_iters: int = 12, tol: float = 1e-5):
        super().__init__()
        self.max_iters = max_iters
        self.tol = tol
        self.register_buffer("init_vector", F.normalize(torch.ones(dim), dim=0))

    def _top_eigenvector(self, gram: torch.Tensor) -> torch.Tensor:
        v = self.init_vector
        for _ in range(self.max_iters):
            v_next = F.normalize(gram @ v, dim=0)
            change = (v_next - v).abs().max()
            v = v_next
            if change < self.tol:
                break
        return v

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        centered = tokens - tokens.mean(dim=0)
        direction = self._top_eigenvector(centered.t() @ centered)
        return centered @ direction


def build() -> nn.Module:
    return PrincipalProjection().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(6)
    base = torch.randn(20, 6, generator=g)
    dominant = base.clone()
    dominant[:, 0] *= 10.0
    return [(dominant,), (base,)]
