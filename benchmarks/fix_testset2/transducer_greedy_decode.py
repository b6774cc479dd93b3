"""RNN-transducer greedy decoding of one utterance: at every encoder frame the joint network may
emit up to ``max_symbols`` labels, moving to the next frame as soon as it predicts blank."""

import torch
from torch import nn


class Transducer(nn.Module):
    def __init__(self, vocab_size: int = 6, hidden: int = 8, blank_id: int = 0, max_symbols: int = 3):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.predictor = nn.GRUCell(hidden, hidden)
        self.joint = nn.Sequential(nn.Tanh(), nn.Linear(hidden, vocab_size))
        self.blank_id = blank_id
        self.max_symbols = max_symbols

    def forward(self, encoder_out: torch.Tensor) -> torch.Tensor:
        state = torch.zeros(1, self.predictor.hidden_size)
        last = torch.full((1,), self.blank_id, dtype=torch.long)
        pred = self.predictor(self.embed(last), state)
        emitted = torch.zeros(encoder_out.shape[0], self.max_symbols, dtype=torch.long)
        for t in range(encoder_out.shape[0]):
            for s in range(self.max_symbols):
                label = self.joint(encoder_out[t:t + 1] + pred).argmax(dim=-1)
                if label.item() == self.blank_id:
                    break
                emitted[t, s] = label[0]
                state = pred
                pred = self.predictor(self.embed(label), state)
        return emitted


def build() -> nn.Module:
    torch.manual_seed(0)
    return Transducer().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(272)
    return [(torch.randn(5, 8, generator=g) * 3.0,) for _ in range(3)]
