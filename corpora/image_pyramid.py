"""Image pyramid that keeps downsampling until the feature map reaches a minimum size (as in
multi-scale detectors and Laplacian-pyramid blending). The `while` on a spatial size is a
shape-dependent loop: a trace keeps the example's number of levels."""

import torch
import torch.nn as nn


class FeaturePyramid(nn.Module):
    def __init__(self, channels: int = 3, width: int = 4, min_size: int = 4):
        super().__init__()
        self.stem = nn.Conv2d(channels, width, kernel_size=3, padding=1)
        self.down = nn.Sequential(nn.Conv2d(width, width, kernel_size=3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Conv2d(width, 1, kernel_size=1)
        self.min_size = min_size

    def forward(self, images):
        level = self.stem(images)
        outputs = [self.head(level).mean(dim=(-2, -1))]
        while level.shape[-1] > self.min_size:  # expect: UT104
            level = self.down(level)
            outputs.append(self.head(level).mean(dim=(-2, -1)))
        return outputs


def build() -> nn.Module:
    torch.manual_seed(0)
    return FeaturePyramid().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(26)
    return [
        (torch.randn(1, 3, 16, 16, generator=g),),
        (torch.randn(2, 3, 4, 4, generator=g),),
    ]
