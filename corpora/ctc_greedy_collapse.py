"""CTC greedy decoding (speech recognition): take the best label per frame, then collapse
repeats and drop blanks in a Python loop over frames. The frame loop follows the input
length, the keep test follows the labels, and the output is written in place."""

import torch
import torch.nn as nn


class CTCGreedyDecoder(nn.Module):
    def __init__(self, dim: int = 6, num_labels: int = 4, blank: int = 0):
        super().__init__()
        self.classifier = nn.Linear(dim, num_labels)
        self.blank = blank

    def forward(self, frames):
        best = self.classifier(frames).argmax(dim=-1)
        out = torch.full_like(best, -1)
        n = 0
        prev = self.blank
        for t in range(best.shape[0]):  # expect: UT104
            label = best[t]
            if label != prev and label != self.blank:  # expect: UT101
                out[n] = label  # expect: UT304
                n += 1
            prev = label
        return out[:n], best


def build() -> nn.Module:
    torch.manual_seed(0)
    return CTCGreedyDecoder().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(27)
    return [(torch.randn(16, 6, generator=g),), (torch.randn(3, 6, generator=g),)]
