"""Vision-transformer patch embedding that interpolates its learned position grid when the
image size differs from the training size (as in ViT/DeiT fine-tuning at higher resolution).
The `if` on token count is a shape branch; a trace keeps only the example's resolution."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class PatchEmbedWithInterp(nn.Module):
    def __init__(self, channels: int = 3, dim: int = 8, patch: int = 4, grid: int = 4):
        super().__init__()
        self.patch = patch
        self.grid = grid
        self.proj = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, grid * grid, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, images):
        tokens = self.proj(images).flatten(2).transpose(1, 2)
        pos = self.pos_embed
        if tokens.shape[1] != pos.shape[1]:  # expect: UT103
            new_h = images.shape[-2] // self.patch
            new_w = images.shape[-1] // self.patch
            grid = pos.reshape(1, self.grid, self.grid, -1).permute(0, 3, 1, 2)
            grid = F.interpolate(grid, size=(new_h, new_w), mode="bilinear", align_corners=False)
            pos = grid.permute(0, 2, 3, 1).reshape(1, new_h * new_w, -1)
        return self.norm(tokens + pos)


def build() -> nn.Module:
    torch.manual_seed(0)
    return PatchEmbedWithInterp().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(25)
    return [
        (torch.randn(2, 3, 16, 16, generator=g),),
        (torch.randn(1, 3, 24, 32, generator=g),),
    ]
