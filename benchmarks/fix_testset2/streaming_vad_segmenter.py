"""Voice-activity segmenter for a stream chunk: frames are scored, a chunk with no voiced frame
returns at once, and otherwise a cursor walks the frames to cut voiced segments (with a minimum
length), each summarised by its mean embedding."""

import torch
from torch import nn


class VADSegmenter(nn.Module):
    def __init__(self, n_feats: int = 5, dim: int = 4, threshold: float = 0.5, min_frames: int = 2):
        super().__init__()
        self.scorer = nn.Linear(n_feats, 1)
        self.embed = nn.Linear(n_feats, dim)
        self.threshold = threshold
        self.min_frames = min_frames

    def forward(self, frames: torch.Tensor):
        voiced = torch.sigmoid(self.scorer(frames)).squeeze(-1) > self.threshold
        if not voiced.any():
            return frames.new_zeros(0, self.embed.out_features), voiced
        embedded = self.embed(frames)
        segments = []
        cursor = 0
        total = frames.shape[0]
        while cursor < total:
            if not voiced[cursor]:
                cursor += 1
                continue
            end = cursor
            while end < total and voiced[end]:
                end += 1
            if end - cursor >= self.min_frames:
                segments.append(embedded[cursor:end].mean(dim=0))
            cursor = end
        if not segments:
            return frames.new_zeros(0, self.embed.out_features), voiced
        return torch.stack(segments), voiced


def build() -> nn.Module:
    torch.manual_seed(0)
    return VADSegmenter().eval()


def inputs() -> list:
    torch.manual_seed(0)
    model = VADSegmenter()
    direction = model.scorer.weight.detach()[0]
    direction = direction / direction.norm()
    pattern = torch.tensor([1, 1, 1, -1, 1, -1, -1, 1, 1, -1], dtype=torch.float32)
    speech = pattern[:, None] * direction[None, :] * 10.0
    silence = -torch.ones(10, 1) * direction[None, :] * 10.0
    blips = torch.tensor([1, -1, -1, 1, -1, -1, 1, -1, -1, -1], dtype=torch.float32)[:, None] * direction * 10.0
    return [(speech,), (silence,), (blips,)]
