"""Recommender user tower over a padded batch of histories: every user's valid prefix (its
length read from the lengths tensor) is attention-pooled on its own, then the users are stacked."""

import torch
import torch.nn.functional as F
from torch import nn


class RaggedHistoryPooling(nn.Module):
    def __init__(self, num_items: int = 20, dim: int = 6):
        super().__init__()
        self.items = nn.Embedding(num_items, dim)
        self.score = nn.Linear(dim, 1)
        self.out = nn.Linear(dim, dim)

    def pool(self, seq: torch.Tensor) -> torch.Tensor:
        weights = F.softmax(self.score(seq).squeeze(-1), dim=0)
        return weights @ seq

    def forward(self, history: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        embedded = self.items(history)
        users = []
        for row, length in enumerate(lengths.tolist()):
            if length == 0:
                users.append(embedded.new_zeros(embedded.shape[-1]))
                continue
            users.append(self.pool(embedded[row, :length]))
        return self.out(torch.stack(users))


def build() -> nn.Module:
    torch.manual_seed(0)
    return RaggedHistoryPooling().eval()


def inputs() -> list:
    history = torch.tensor([[4, 9, 2, 0, 0], [7, 7, 1, 3, 5], [0, 0, 0, 0, 0]])
    return [(history, torch.tensor([3, 5, 0])), (history, torch.tensor([1, 2, 4]))]
