"""Nucleus (top-p) candidate selection on the last position of a decoder."""

from typing import Tuple

import torch
from torch import Tensor, nn


def top_p_candidates(logits: Tensor, top_p: float, min_tokens_to_keep: int = 1) -> Tuple[Tensor, Tensor]:
    """Return the smallest set of highest-probability tokens whose mass reaches ``top_p``."""
    sorted_logits, sorted_indices = torch.sort(logits, descending=True)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    cutoff = int((cumulative_probs < top_p).sum()) + 1
    cutoff = max(cutoff, min_tokens_to_keep)
    return sorted_logits[:cutoff], sorted_indices[:cutoff]


class NucleusHead(nn.Module):
    def __init__(self, hidden_size: int = 16, vocab_size: int = 12, top_p: float = 0.8):
        super().__init__()
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        self.top_p = top_p

    def forward(self, hidden_states: Tensor) -> Tuple[Tensor, Tensor]:
        logits = self.lm_head(hidden_states[-1])
        kept_logits, kept_ids = top_p_candidates(logits, self.top_p)
        return kept_logits.softmax(dim=-1), kept_ids


def build() -> nn.Module:
    torch.manual_seed(0)
    return NucleusHead().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(11)
    h = torch.randn(5, 16, generator=g)
    return [(0.05 * h,), (h,), (8.0 * h,)]
