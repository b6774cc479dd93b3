"""Greedy search in the style of generation utilities: every sequence appends its argmax token
until all of them have produced the end-of-sequence token or ``max_new_tokens`` is reached."""

import torch
from torch import nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size: int = 9, hidden_size: int = 12):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.cell = nn.GRUCell(hidden_size, hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size)


class GreedyGenerator(nn.Module):
    def __init__(self, eos_token_id: int = 8, pad_token_id: int = 0, max_new_tokens: int = 5):
        super().__init__()
        self.decoder = TinyDecoder()
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
        self.max_new_tokens = max_new_tokens

    def forward(self, input_ids: torch.Tensor, encoder_state: torch.Tensor) -> torch.Tensor:
        hidden = encoder_state
        unfinished_sequences = torch.ones(input_ids.shape[0], dtype=torch.long)
        for _ in range(self.max_new_tokens):
            hidden = self.decoder.cell(self.decoder.embed_tokens(input_ids[:, -1]), hidden)
            next_tokens = self.decoder.lm_head(hidden).argmax(dim=-1)
            next_tokens = next_tokens * unfinished_sequences + self.pad_token_id * (1 - unfinished_sequences)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished_sequences = unfinished_sequences & (next_tokens != self.eos_token_id).long()
            if unfinished_sequences.max() == 0:
                break
        return input_ids


def build() -> nn.Module:
    torch.manual_seed(0)
    return GreedyGenerator().eval()


def inputs() -> list:
    start = torch.tensor([[1], [3]])
    return [(start, torch.randn(2, 12, generator=torch.Generator().manual_seed(s))) for s in (4, 0, 2)]
