"""Two-tower retrieval with a fixed ``k``: items the user has already seen are masked out with a
large negative score before ``topk``, and the embeddings of the retrieved items are gathered."""

import torch
import torch.nn.functional as F
from torch import nn


class TwoTowerRetrieval(nn.Module):
    def __init__(self, num_items: int = 15, user_features: int = 6, dim: int = 5, k: int = 4,
                 temperature: float = 0.5):
        super().__init__()
        self.user_tower = nn.Sequential(nn.Linear(user_features, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.item_embedding = nn.Embedding(num_items, dim)
        self.k = k
        self.temperature = temperature

    def forward(self, user_features: torch.Tensor, seen: torch.Tensor):
        users = F.normalize(self.user_tower(user_features), dim=-1)
        items = F.normalize(self.item_embedding.weight, dim=-1)
        scores = users @ items.t() / self.temperature
        scores = scores.masked_fill(seen, torch.finfo(scores.dtype).min)
        top_scores, top_items = scores.topk(self.k, dim=-1)
        retrieved = self.item_embedding(top_items)
        return top_items, top_scores.softmax(dim=-1), retrieved


def build() -> nn.Module:
    torch.manual_seed(0)
    return TwoTowerRetrieval().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(288)
    users = torch.randn(2, 6, generator=g)
    nothing_seen = torch.zeros(2, 15, dtype=torch.bool)
    many_seen = torch.rand(2, 15, generator=g) > 0.4
    return [(users, nothing_seen), (users, many_seen)]
