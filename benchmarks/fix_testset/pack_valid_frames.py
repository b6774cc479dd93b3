"""Packs the valid frames of a padded batch into one flat tensor (as before a CTC loss or a
packed sequence), projecting each frame on the way."""

import torch
from torch import nn


class FramePacker(nn.Module):
    def __init__(self, in_dim: int = 4, out_dim: int = 6):
        super().__init__()
        self.proj = nn.Linear(in_dim, out_dim)

    def forward(self, frames: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch, time, _ = frames.shape
        total = int(lengths.sum().item())
        valid = torch.arange(time, device=frames.device).unsqueeze(0) < lengths.unsqueeze(1)
        index = valid.reshape(-1).nonzero().squeeze(-1)
        flat = frames.reshape(batch * time, -1).index_select(0, index)
        packed = flat.new_zeros(total, self.proj.out_features)
        packed = packed + self.proj(flat)
        return packed


def build() -> nn.Module:
    torch.manual_seed(0)
    return FramePacker().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(5)
    frames = torch.randn(3, 5, 4, generator=g)
    return [(frames, torch.tensor([5, 2, 1])), (frames, torch.tensor([3, 3, 4]))]
