"""Image enhancement preprocessor: the mean luminance decides whether the image is treated as
under-exposed, over-exposed or normal, each setting a gain, an offset and a gamma."""

import torch
from torch import nn


class ExposureCorrector(nn.Module):
    def __init__(self, channels: int = 3, dark: float = 0.25, bright: float = 0.75):
        super().__init__()
        self.register_buffer("luma", torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1))
        self.refine = nn.Conv2d(channels, channels, kernel_size=1)
        self.dark = dark
        self.bright = bright

    def forward(self, image: torch.Tensor):
        luminance = (image * self.luma).sum(dim=1, keepdim=True).mean()
        if luminance < self.dark:
            gain = self.dark / luminance.clamp(min=1e-3)
            offset = torch.zeros(())
            gamma = torch.tensor(0.8)
        elif luminance > self.bright:
            gain = torch.ones(())
            offset = self.bright - luminance
            gamma = torch.tensor(1.2)
        else:
            gain = torch.ones(())
            offset = torch.zeros(())
            gamma = torch.ones(())
        corrected = ((image * gain + offset).clamp(0.0, 1.0) + 1e-6) ** gamma
        return self.refine(corrected), gain, gamma


def build() -> nn.Module:
    torch.manual_seed(0)
    return ExposureCorrector().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(280)
    image = torch.rand(1, 3, 6, 6, generator=g)
    return [(image * 0.2,), (0.7 + image * 0.3,), (image,)]
