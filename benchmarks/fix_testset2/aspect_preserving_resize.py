"""Image preprocessor that resizes to a longest side while keeping the aspect ratio of the valid
region given by the image's (height, width) tensor, pads, and embeds into patches."""

import torch
import torch.nn.functional as F
from torch import nn


class AspectPreservingEmbed(nn.Module):
    def __init__(self, longest_side: int = 16, patch_size: int = 4, channels: int = 3, dim: int = 6):
        super().__init__()
        self.longest_side = longest_side
        self.proj = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)

    def target_size(self, image_size: torch.Tensor) -> tuple[int, int]:
        scale = self.longest_side / image_size.max()
        new_h, new_w = (image_size * scale + 0.5).floor().long().tolist()
        return new_h, new_w

    def forward(self, image: torch.Tensor, image_size: torch.Tensor) -> torch.Tensor:
        height, width = image_size.tolist()
        valid = image[:, :, :height, :width]
        new_h, new_w = self.target_size(image_size)
        resized = F.interpolate(valid, size=(new_h, new_w), mode="bilinear", align_corners=False)
        padded = F.pad(resized, (0, self.longest_side - new_w, 0, self.longest_side - new_h))
        return self.proj(padded).flatten(2).transpose(1, 2)


def build() -> nn.Module:
    torch.manual_seed(0)
    return AspectPreservingEmbed().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(265)
    image = torch.randn(1, 3, 24, 24, generator=g)
    return [(image, torch.tensor([24, 12])), (image, torch.tensor([10, 20])), (image, torch.tensor([18, 18]))]
