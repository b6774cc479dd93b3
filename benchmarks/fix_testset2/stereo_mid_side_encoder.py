"""Audio encoder front end for two-channel input: nearly identical channels are treated as mono
(no side signal, unit width); otherwise mid/side coding with a measured stereo width."""

import torch
from torch import nn


class MidSideEncoder(nn.Module):
    def __init__(self, frame: int = 8, dim: int = 6, mono_correlation: float = 0.98):
        super().__init__()
        self.frame = frame
        self.mid_proj = nn.Linear(frame, dim)
        self.side_proj = nn.Linear(frame, dim)
        self.mono_correlation = mono_correlation

    def forward(self, audio: torch.Tensor):
        left, right = audio[0], audio[1]
        lc, rc = left - left.mean(), right - right.mean()
        correlation = (lc * rc).sum() / (lc.norm() * rc.norm() + 1e-8)
        if correlation > self.mono_correlation:
            mid = (left + right) / 2
            side = torch.zeros_like(mid)
            width = torch.zeros(())
        else:
            mid = (left + right) / 2
            side = (left - right) / 2
            width = side.pow(2).mean().sqrt() / (mid.pow(2).mean().sqrt() + 1e-8)
        mid_frames = mid.reshape(-1, self.frame)
        side_frames = side.reshape(-1, self.frame)
        return self.mid_proj(mid_frames) + self.side_proj(side_frames), width


def build() -> nn.Module:
    torch.manual_seed(0)
    return MidSideEncoder().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(281)
    voice = torch.randn(32, generator=g)
    mono = torch.stack([voice, voice * 0.9])
    wide = torch.stack([voice, torch.randn(32, generator=g)])
    return [(mono,), (wide,)]
