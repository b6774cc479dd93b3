"""Two-stage detector head for one proposal: the pyramid level is chosen from the box scale
(the canonical level-mapping formula), and the box is cropped from that level in pixels."""

import torch
import torch.nn.functional as F
from torch import nn


class LevelMappedRoIPool(nn.Module):
    def __init__(self, channels: int = 4, output_size: int = 3, canonical_size: float = 12.0,
                 canonical_level: int = 1, num_levels: int = 3, num_classes: int = 5):
        super().__init__()
        self.output_size = output_size
        self.canonical_size = canonical_size
        self.canonical_level = canonical_level
        self.num_levels = num_levels
        self.classifier = nn.Linear(channels * output_size * output_size, num_classes)

    def level_for(self, box: torch.Tensor) -> int:
        scale = torch.sqrt((box[2] - box[0]) * (box[3] - box[1]))
        level = torch.floor(self.canonical_level + torch.log2(scale / self.canonical_size + 1e-6))
        return int(level.clamp(0, self.num_levels - 1).item())

    def forward(self, p0: torch.Tensor, p1: torch.Tensor, p2: torch.Tensor, box: torch.Tensor) -> torch.Tensor:
        features = [p0, p1, p2]
        level = self.level_for(box)
        stride = 2 ** level
        x0, y0, x1, y1 = (box / stride).round().long().tolist()
        crop = features[level][:, :, y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)]
        pooled = F.adaptive_max_pool2d(crop, self.output_size)
        return self.classifier(pooled.flatten(1))


def build() -> nn.Module:
    torch.manual_seed(0)
    return LevelMappedRoIPool().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(264)
    p0 = torch.randn(1, 4, 32, 32, generator=g)
    p1 = torch.randn(1, 4, 16, 16, generator=g)
    p2 = torch.randn(1, 4, 8, 8, generator=g)
    small = torch.tensor([2.0, 3.0, 8.0, 9.0])
    medium = torch.tensor([4.0, 4.0, 20.0, 22.0])
    large = torch.tensor([0.0, 0.0, 31.0, 30.0])
    return [(p0, p1, p2, small), (p0, p1, p2, medium), (p0, p1, p2, large)]
