"""Retrieval head whose ops export, but not always to the same numbers (UT303): a top-k
over scores, an argsort and a floor division between tensors. Ties among the scores, or
negative quotients under torch.onnx's legacy exporter, make the ONNX graph disagree with
eager PyTorch. The stable sort and the floor-rounding `div` next to them are the forms
that agree, and `x.argsort()` on the un-annotated argument is not reported: `x` is only
assumed to be a tensor there."""

import torch
import torch.nn as nn


class RetrievalHead(nn.Module):
    def __init__(self, dim: int = 8, k: int = 3, buckets: int = 4):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.k = k
        self.buckets = buckets

    def forward(self, x, keys: torch.Tensor):
        q = self.query(x)
        scores = q @ keys.transpose(0, 1)
        top_scores, top_idx = torch.topk(scores, self.k, dim=-1)  # expect: UT303
        order = torch.argsort(scores, dim=-1, descending=True)  # expect: UT303
        stable_order = torch.sort(scores, dim=-1, stable=True).indices
        positions = torch.arange(keys.shape[0]).expand_as(order)
        bucket = positions // self.buckets  # expect: UT303
        bucket_floor = torch.div(positions, self.buckets, rounding_mode="floor")
        raw_order = x.argsort(dim=-1)
        picked = torch.gather(bucket, 1, top_idx)
        mixed = (order == stable_order).float().mean(dim=-1, keepdim=True)
        return top_scores + picked + mixed, (bucket - bucket_floor).sum(), raw_order


def build() -> nn.Module:
    torch.manual_seed(0)
    return RetrievalHead().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(41)
    return [
        (torch.randn(2, 8, generator=g), torch.randn(6, 8, generator=g)),
        (torch.randn(3, 8, generator=g), torch.randn(6, 8, generator=g)),
    ]
