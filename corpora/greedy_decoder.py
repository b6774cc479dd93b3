"""Greedy autoregressive decoding (seq2seq inference loops): emit the argmax token until
EOS or a length cap. The `while` on `token.item()` is unrolled by a trace to the length of
the example's output, so other inputs decode to the wrong length."""

import torch
import torch.nn as nn


class GreedyDecoder(nn.Module):
    def __init__(self, vocab: int = 10, dim: int = 16, bos_id: int = 0, eos_id: int = 4, max_len: int = 6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)
        self.bos_id = bos_id
        self.eos_id = eos_id
        self.max_len = max_len

    def forward(self, memory):
        h = torch.tanh(memory)
        token = torch.full((1,), self.bos_id, dtype=torch.long)
        tokens = [token]
        steps = 0
        while token.item() != self.eos_id:  # expect: UT102, UT201
            if steps == self.max_len:
                break
            h = self.cell(self.embed(token), h)
            token = self.out(h).argmax(dim=-1)
            tokens.append(token)
            steps += 1
        return torch.cat(tokens)


def build() -> nn.Module:
    torch.manual_seed(0)
    return GreedyDecoder().eval()


def inputs() -> list[tuple]:
    def memory(seed: int) -> torch.Tensor:
        return torch.randn(1, 16, generator=torch.Generator().manual_seed(seed))

    # seed 0 never emits EOS (stops at max_len), seed 7 after three tokens, seed 2 at once.
    return [(memory(0),), (memory(7),), (memory(2),)]
