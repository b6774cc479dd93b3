"""Token pruning for vision transformers (DynamicViT / EViT): keep the tokens a scorer
rates highly, but never fewer than a minimum. Boolean-mask indexing gives a
data-dependent token count, so the `if` on its shape is a branch on tensor values."""

import torch
import torch.nn as nn


class TokenPruner(nn.Module):
    def __init__(self, dim: int = 8, keep_threshold: float = 0.0, min_tokens: int = 3):
        super().__init__()
        self.scorer = nn.Linear(dim, 1)
        self.block = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
        self.keep_threshold = keep_threshold
        self.min_tokens = min_tokens

    def forward(self, tokens):
        scores = self.scorer(tokens).squeeze(-1)
        kept = tokens[scores > self.keep_threshold]
        if kept.shape[0] < self.min_tokens:  # expect: UT101
            kept = tokens[scores.topk(self.min_tokens).indices]  # expect: UT303
        return self.block(kept).mean(dim=0)


def build() -> nn.Module:
    torch.manual_seed(0)
    return TokenPruner().eval()


def inputs() -> list[tuple]:
    def tokens(seed: int) -> torch.Tensor:
        return torch.randn(10, 8, generator=torch.Generator().manual_seed(seed))

    # seed 28 keeps five tokens; seed 26 keeps only two, below min_tokens.
    return [(tokens(28),), (tokens(26),)]
