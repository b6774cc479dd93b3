"""Dynamic routing between capsules (Sabour et al. 2017) with a fixed number of routing
iterations. Hazard-free: the loop count is a config constant and the `if` on the iteration
index is static, so unrolling it is exactly right."""

import torch
import torch.nn as nn


def squash(s, dim: int = -1):
    norm_sq = (s**2).sum(dim=dim, keepdim=True)
    return norm_sq / (1.0 + norm_sq) * s / torch.sqrt(norm_sq + 1e-8)


class CapsuleRouting(nn.Module):
    def __init__(self, in_caps: int = 6, in_dim: int = 4, out_caps: int = 3, out_dim: int = 5, iterations: int = 3):
        super().__init__()
        self.weight = nn.Parameter(0.1 * torch.randn(in_caps, out_caps, out_dim, in_dim))
        self.iterations = iterations

    def forward(self, u):
        u_hat = torch.einsum("ijkl,bil->bijk", self.weight, u)
        logits = torch.zeros(u_hat.shape[:3])
        for i in range(self.iterations):
            coupling = torch.softmax(logits, dim=2)
            v = squash((coupling.unsqueeze(-1) * u_hat).sum(dim=1))
            if i < self.iterations - 1:
                logits = logits + (u_hat * v.unsqueeze(1)).sum(dim=-1)
        return v


def build() -> nn.Module:
    torch.manual_seed(0)
    return CapsuleRouting().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(36)
    return [(torch.randn(2, 6, 4, generator=g),), (5.0 * torch.randn(2, 6, 4, generator=g),)]
