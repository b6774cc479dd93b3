"""Pre-norm transformer encoder block with multi-head self-attention and an optional
key-padding mask. Hazard-free: `if mask is not None` depends only on how forward is called,
and the head split uses `.shape` only to reshape."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 4, ff: int = 32):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff), nn.GELU(), nn.Linear(ff, dim))

    def _split_heads(self, t):
        batch, length, _ = t.shape
        return t.view(batch, length, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask=None):
        batch, length, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
        attn = F.softmax(scores, dim=-1)
        context = (attn @ v).transpose(1, 2).reshape(batch, length, dim)
        x = x + self.out(context)
        return x + self.ff(self.norm2(x))


def build() -> nn.Module:
    torch.manual_seed(0)
    return EncoderBlock().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(32)
    x = torch.randn(2, 5, 16, generator=g)
    mask = torch.tensor([[True, True, True, True, True], [True, True, True, False, False]])
    return [(x,), (x, mask)]
