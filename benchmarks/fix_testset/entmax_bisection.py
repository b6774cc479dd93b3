"""alpha-entmax by bisection on the threshold tau (Peters et al., 2019), stopping early once the
mass is within tolerance."""

import torch
from torch import nn


def entmax_bisect(logits: torch.Tensor, alpha: float = 1.5, n_iter: int = 18, tol: float = 1e-5) -> torch.Tensor:
    d = logits.shape[-1]
    x = logits * (alpha - 1)
    max_val, _ = x.max(dim=-1, keepdim=True)
    tau_lo = max_val - 1.0
    tau_hi = max_val - (1.0 / d) ** (alpha - 1)
    f_lo = (torch.clamp(x - tau_lo, min=0) ** (1.0 / (alpha - 1))).sum(dim=-1) - 1.0
    dm = tau_hi - tau_lo
    for _ in range(n_iter):
        dm = dm / 2
        tau_m = tau_lo + dm
        p_m = torch.clamp(x - tau_m, min=0) ** (1.0 / (alpha - 1))
        f_m = p_m.sum(dim=-1) - 1.0
        mask = (f_m * f_lo >= 0).unsqueeze(-1)
        tau_lo = torch.where(mask, tau_m, tau_lo)
        if (f_m.abs() < tol).all():
            break
    return p_m / p_m.sum(dim=-1, keepdim=True)


class EntmaxAttentionPool(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        weights = entmax_bisect(self.score(tokens).squeeze(-1))
        return (weights.unsqueeze(-1) * tokens).sum(dim=1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return EntmaxAttentionPool().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(14)
    t = torch.randn(2, 7, 8, generator=g)
    return [(t,), (torch.zeros(2, 7, 8),)]
