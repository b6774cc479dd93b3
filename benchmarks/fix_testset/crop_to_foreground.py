"""Crops a feature map to the bounding box of its foreground mask, then pools it to a fixed size."""

import torch
import torch.nn.functional as F
from torch import nn


def mask_bounding_box(mask: torch.Tensor):
    """(top, bottom, left, right) of the non-zero region of a 2-D mask, bottom/right exclusive."""
    rows = torch.where(mask.any(dim=1))[0]
    cols = torch.where(mask.any(dim=0))[0]
    top, bottom = int(rows.min()), int(rows.max()) + 1
    left, right = int(cols.min()), int(cols.max()) + 1
    return top, bottom, left, right


class ForegroundCropPool(nn.Module):
    def __init__(self, channels: int = 3, output_size: int = 4):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.output_size = output_size

    def forward(self, image: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        features = self.conv(image)
        top, bottom, left, right = mask_bounding_box(mask)
        crop = features[:, :, top:bottom, left:right]
        return F.adaptive_avg_pool2d(crop, self.output_size)


def build() -> nn.Module:
    torch.manual_seed(0)
    return ForegroundCropPool().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(3)
    image = torch.randn(1, 3, 12, 12, generator=g)
    small = torch.zeros(12, 12, dtype=torch.bool)
    small[2:7, 3:9] = True
    large = torch.zeros(12, 12, dtype=torch.bool)
    large[0:12, 1:11] = True
    return [(image, small), (image, large)]
