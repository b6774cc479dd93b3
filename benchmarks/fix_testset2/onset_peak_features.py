"""Music onset detector: picks local maxima of the spectral-flux novelty curve above an adaptive
threshold and returns the embedded frames at those peaks (at least the strongest frame)."""

import torch
from torch import nn


class OnsetPeakPicker(nn.Module):
    def __init__(self, n_bins: int = 6, dim: int = 4, delta: float = 0.1):
        super().__init__()
        self.embed = nn.Linear(n_bins, dim)
        self.delta = delta

    def novelty(self, spectrogram: torch.Tensor) -> torch.Tensor:
        flux = torch.relu(spectrogram[1:] - spectrogram[:-1]).sum(dim=-1)
        return torch.cat([flux.new_zeros(1), flux])

    def forward(self, spectrogram: torch.Tensor) -> torch.Tensor:
        curve = self.novelty(spectrogram)
        threshold = curve.mean() + self.delta
        frames = self.embed(spectrogram)
        peaks = []
        for t in range(1, curve.shape[0] - 1):
            if curve[t] > curve[t - 1] and curve[t] >= curve[t + 1] and curve[t] > threshold:
                peaks.append(frames[t])
        if not peaks:
            peaks.append(frames[curve.argmax()])
        return torch.stack(peaks)


def build() -> nn.Module:
    torch.manual_seed(0)
    return OnsetPeakPicker().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(278)
    base = torch.rand(10, 6, generator=g) * 0.05
    hits = base.clone()
    hits[2] += 1.0
    hits[6] += 0.8
    flat = torch.ones(10, 6)
    return [(hits,), (base,), (flat,)]
