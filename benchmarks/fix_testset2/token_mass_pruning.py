"""Vision-transformer token pruning: keeps the patch tokens that hold most of the class token's
attention mass and fuses the rest into one token, as in inattentive-token fusion."""

import torch
import torch.nn.functional as F
from torch import nn


class AttentiveTokenPruner(nn.Module):
    def __init__(self, dim: int = 8, attention_mass: float = 0.7):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.attention_mass = attention_mass
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        cls_token, patches = tokens[:, :1], tokens[:, 1:]
        scores = self.query(cls_token) @ self.key(patches).transpose(1, 2) / patches.shape[-1] ** 0.5
        attention = F.softmax(scores.squeeze(1), dim=-1).mean(dim=0)
        ordered, order = attention.sort(descending=True)
        num_keep = int((ordered.cumsum(0) < self.attention_mass).sum()) + 1
        kept = patches[:, order[:num_keep]]
        dropped_weight = ordered[num_keep:]
        fused = (patches[:, order[num_keep:]] * dropped_weight[None, :, None]).sum(dim=1, keepdim=True)
        fused = fused / dropped_weight.sum().clamp(min=1e-6)
        return self.norm(torch.cat([cls_token, kept, fused], dim=1))


def build() -> nn.Module:
    torch.manual_seed(0)
    return AttentiveTokenPruner().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(262)
    base = torch.randn(2, 10, 8, generator=g)
    peaked = base.clone()
    peaked[:, 0] = 3.0 * base[:, 3]
    return [(base,), (peaked * 2.0,)]
