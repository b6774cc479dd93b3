"""Tacotron-style frame decoder: runs for at most as many steps as the longest target, stopping
when the stop-token probability passes one half, and stacks the frames."""

import torch
from torch import nn


class StopTokenDecoder(nn.Module):
    def __init__(self, n_mels: int = 4, hidden: int = 8):
        super().__init__()
        self.prenet = nn.Linear(n_mels, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.frame_proj = nn.Linear(hidden, n_mels)
        self.stop_proj = nn.Linear(hidden, 1)
        self.n_mels = n_mels

    def forward(self, memory: torch.Tensor, target_lengths: torch.Tensor) -> torch.Tensor:
        max_steps = int(target_lengths.max())
        frame = memory.new_zeros(memory.size(0), self.n_mels)
        state = memory
        frames = []
        for _ in range(max_steps):
            state = self.cell(torch.relu(self.prenet(frame)), state)
            frame = self.frame_proj(state)
            frames.append(frame)
            if torch.sigmoid(self.stop_proj(state)).min().item() > 0.5:
                break
        return torch.stack(frames, dim=1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return StopTokenDecoder().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(36)
    m = torch.randn(2, 8, generator=g)
    model = build()
    w = model.stop_proj.weight.detach().squeeze(0)
    return [(m, torch.tensor([3, 5])), (m, torch.tensor([7, 2])), (20.0 * w.sign().expand(2, 8), torch.tensor([6, 6]))]
