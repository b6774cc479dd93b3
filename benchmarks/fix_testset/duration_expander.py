"""FastSpeech-style length regulator for one utterance: phoneme encodings are repeated by their
predicted durations and written into a mel-length buffer."""

import torch
from torch import nn


class LengthRegulator(nn.Module):
    def __init__(self, dim: int = 4, max_frames: int = 16):
        super().__init__()
        self.duration_predictor = nn.Linear(dim, 1)
        self.max_frames = max_frames

    def forward(self, phonemes: torch.Tensor):
        log_durations = self.duration_predictor(phonemes).squeeze(-1)
        durations = torch.clamp(torch.round(torch.exp(log_durations) - 1.0), min=0).long()
        expanded = torch.repeat_interleave(phonemes, durations, dim=0)
        mel_len = min(int(durations.sum().item()), self.max_frames)
        output = phonemes.new_zeros(self.max_frames, phonemes.size(-1))
        output[:mel_len] = expanded[:mel_len]
        return output, durations.sum()


def build() -> nn.Module:
    torch.manual_seed(0)
    model = LengthRegulator().eval()
    with torch.no_grad():
        model.duration_predictor.weight.fill_(0.5)
        model.duration_predictor.bias.fill_(1.0)
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(2)
    p = torch.randn(5, 4, generator=g)
    return [(0.1 * p,), (p.abs() + 0.5,), (-p.abs() - 2.0,)]
