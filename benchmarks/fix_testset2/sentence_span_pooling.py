"""Document encoder: token states are split into sentences at separator tokens and each sentence
is mean-pooled; the sentence vectors are concatenated for the document-level layer."""

import torch
from torch import nn


class SentenceSpanPooler(nn.Module):
    def __init__(self, vocab_size: int = 10, dim: int = 5, sep_token_id: int = 1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.sentence_layer = nn.Linear(dim, dim)
        self.sep_token_id = sep_token_id

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        states = self.embed(input_ids)
        sentences = []
        start = 0
        for position in range(input_ids.shape[0]):
            if input_ids[position] == self.sep_token_id:
                if position > start:
                    sentences.append(states[start:position].mean(dim=0, keepdim=True))
                start = position + 1
        if start < input_ids.shape[0]:
            sentences.append(states[start:].mean(dim=0, keepdim=True))
        return torch.tanh(self.sentence_layer(torch.cat(sentences, dim=0)))


def build() -> nn.Module:
    torch.manual_seed(0)
    return SentenceSpanPooler().eval()


def inputs() -> list:
    return [(torch.tensor([2, 3, 1, 4, 5, 6, 1, 7]),),
            (torch.tensor([1, 1, 4, 5, 1, 2, 3, 1]),),
            (torch.tensor([2, 3, 4, 5, 6, 7, 8, 9]),)]
