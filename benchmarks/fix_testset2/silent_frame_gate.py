"""Speech enhancement front end: a chunk whose RMS level is below the noise floor is passed
through untouched with an all-zero speech mask; otherwise a mask is estimated and applied."""

import torch
from torch import nn


class SpectralMaskEnhancer(nn.Module):
    def __init__(self, n_bins: int = 9, noise_floor: float = 1e-2):
        super().__init__()
        self.mask_net = nn.Sequential(nn.Linear(n_bins, 16), nn.ReLU(), nn.Linear(16, n_bins))
        self.noise_floor = noise_floor

    def forward(self, magnitude: torch.Tensor):
        rms = magnitude.pow(2).mean().sqrt()
        if rms < self.noise_floor:
            return magnitude, torch.zeros_like(magnitude)
        log_mag = torch.log1p(magnitude)
        mask = torch.sigmoid(self.mask_net(log_mag))
        return magnitude * mask, mask


def build() -> nn.Module:
    torch.manual_seed(0)
    return SpectralMaskEnhancer().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(275)
    speech = torch.rand(6, 9, generator=g)
    return [(speech,), (speech * 1e-3,)]
