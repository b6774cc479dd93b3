"""Attention pooling that builds a padding mask only when the batch actually contains
padding (a common inference shortcut in NLP models). The test escapes to a Python bool on
one line and is branched on later; both are frozen by a trace."""

import torch
import torch.nn as nn


class PaddingAwarePooling(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, pad_id: int = 0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.score = nn.Linear(dim, 1)
        self.pad_id = pad_id

    def forward(self, tokens):
        h = self.embed(tokens)
        logits = self.score(h).squeeze(-1)
        has_padding = bool((tokens == self.pad_id).any())  # expect: UT201
        if has_padding:  # expect: UT101
            logits = logits.masked_fill(tokens == self.pad_id, -1e4)
        weights = torch.softmax(logits, dim=-1)
        return (weights.unsqueeze(-1) * h).sum(dim=1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return PaddingAwarePooling().eval()


def inputs() -> list[tuple]:
    return [
        (torch.tensor([[3, 5, 7, 9], [2, 4, 6, 8]]),),
        (torch.tensor([[3, 5, 0, 0], [15, 1, 11, 0]]),),
    ]
