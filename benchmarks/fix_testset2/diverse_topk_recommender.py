"""Recommender re-ranking: walks the items by score and keeps an item only if its category has not
been used ``per_category`` times, stopping once ``k`` items are kept or the scores fall below the
request's minimum score; the kept items are padded to ``k`` with -1."""

import torch
from torch import nn


class DiverseTopK(nn.Module):
    def __init__(self, num_items: int = 10, dim: int = 4, k: int = 4, per_category: int = 1):
        super().__init__()
        self.items = nn.Embedding(num_items, dim)
        self.k = k
        self.per_category = per_category

    def forward(self, user: torch.Tensor, categories: torch.Tensor, min_score: torch.Tensor):
        scores = self.items.weight @ user
        ordered_scores, order = scores.sort(descending=True)
        used = {}
        kept, kept_scores = [], []
        for score, item in zip(ordered_scores, order.tolist()):
            if score < min_score:
                break
            category = int(categories[item])
            if used.get(category, 0) >= self.per_category:
                continue
            used[category] = used.get(category, 0) + 1
            kept.append(item)
            kept_scores.append(score)
            if len(kept) == self.k:
                break
        items = torch.full((self.k,), -1, dtype=torch.long)
        items[: len(kept)] = torch.tensor(kept, dtype=torch.long)
        padded_scores = torch.full((self.k,), float("-inf"))
        if kept_scores:
            padded_scores[: len(kept)] = torch.stack(kept_scores)
        return items, padded_scores


def build() -> nn.Module:
    torch.manual_seed(0)
    return DiverseTopK().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(285)
    user = torch.randn(4, generator=g)
    varied = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2, 3, 4])
    two_kinds = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    floor = torch.tensor(-2.0)
    return [(user, varied, floor), (user * 0.01, two_kinds, floor), (user * 20.0, varied, floor),
            (user, varied, torch.tensor(100.0))]
