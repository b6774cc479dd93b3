"""Batched greedy token decoder that stops when every sequence emitted the end token; the tokens
are collected in a list and stacked."""

import torch
from torch import nn


class AutoregressiveDecoder(nn.Module):
    def __init__(self, vocab_size: int = 8, hidden_size: int = 10, bos_token_id: int = 1,
                 eos_token_id: int = 2, max_length: int = 7):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.rnn = nn.GRUCell(hidden_size, hidden_size)
        self.proj = nn.Linear(hidden_size, vocab_size)
        self.bos_token_id = bos_token_id
        self.eos_token_id = eos_token_id
        self.max_length = max_length

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        state = torch.tanh(context)
        token = torch.full((context.size(0),), self.bos_token_id, dtype=torch.long)
        generated = []
        for _ in range(self.max_length):
            state = self.rnn(self.embedding(token), state)
            token = self.proj(state).argmax(dim=-1)
            generated.append(token)
            if (token == self.eos_token_id).all():
                break
        return torch.stack(generated, dim=1)


def build() -> nn.Module:
    torch.manual_seed(0)
    return AutoregressiveDecoder().eval()


def inputs() -> list:
    return [(torch.randn(2, 10, generator=torch.Generator().manual_seed(s)),) for s in (3, 1, 2)]
