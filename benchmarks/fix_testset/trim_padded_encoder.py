"""Sentence encoder that drops the padding columns shared by the whole batch before encoding."""

from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn


@dataclass
class EncoderConfig:
    vocab_size: int = 20
    hidden_size: int = 16
    pad_token_id: int = 0


class TrimmedMeanEncoder(nn.Module):
    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if attention_mask is None:
            attention_mask = input_ids.ne(self.config.pad_token_id).long()
        max_len = int(attention_mask.sum(dim=1).max().item())
        input_ids = input_ids[:, :max_len]
        attention_mask = attention_mask[:, :max_len]
        hidden = torch.tanh(self.dense(self.embeddings(input_ids)))
        weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def build() -> nn.Module:
    torch.manual_seed(0)
    return TrimmedMeanEncoder(EncoderConfig()).eval()


def inputs() -> list:
    ids = torch.tensor([[3, 5, 7, 9, 2, 4], [6, 8, 1, 3, 5, 7]])
    short = torch.tensor([[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]])
    full = torch.ones(2, 6, dtype=torch.long)
    return [(ids, short), (ids, full)]
