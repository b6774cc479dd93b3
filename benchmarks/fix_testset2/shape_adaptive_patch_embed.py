"""Patch embedding that accepts images or already-flattened patch sequences and pads the image to
a multiple of the patch size; every branch is on ranks, static sizes and configuration."""

import torch
import torch.nn.functional as F
from torch import nn


class FlexiblePatchEmbed(nn.Module):
    def __init__(self, channels: int = 3, patch_size: int = 4, dim: int = 8, depth: int = 2,
                 use_cls_token: bool = True):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim)) if use_cls_token else None
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim)) for _ in range(depth))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if images.dim() == 3:
            images = images.unsqueeze(0)
        height, width = images.shape[-2:]
        pad_h = (-height) % self.patch_size
        pad_w = (-width) % self.patch_size
        if pad_h or pad_w:
            images = F.pad(images, (0, pad_w, 0, pad_h))
        tokens = self.proj(images).flatten(2).transpose(1, 2)
        if self.cls_token is not None:
            tokens = torch.cat([self.cls_token.expand(tokens.shape[0], -1, -1), tokens], dim=1)
        for block in self.blocks:
            tokens = tokens + block(tokens)
        return tokens


def build() -> nn.Module:
    torch.manual_seed(0)
    return FlexiblePatchEmbed().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(287)
    image = torch.randn(1, 3, 10, 7, generator=g)
    return [(image,), (image * -2.0,)]
