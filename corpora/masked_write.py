"""Padding handling and scatter pooling written with in-place writes, common in speech and
graph models: zero the padded frames of the input, scale it in place, then scatter-add
frames into slots. ONNX has no mutation; writes into an input are the hardest to rewrite."""

import torch
import torch.nn as nn


class PaddedSlotPooling(nn.Module):
    def __init__(self, dim: int = 6, slots: int = 3, input_scale: float = 0.5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.slots = slots
        self.input_scale = input_scale

    def forward(self, x, valid, slot_ids):
        x[~valid] = 0.0  # expect: UT301
        x.mul_(self.input_scale)  # expect: UT301
        h = self.fc(x)
        h.relu_()
        pooled = h.new_zeros(self.slots, h.shape[-1])
        pooled.index_put_((slot_ids,), h, accumulate=True)  # expect: UT304
        return pooled


def build() -> nn.Module:
    torch.manual_seed(0)
    return PaddedSlotPooling().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(18)
    x = torch.randn(5, 6, generator=g)
    return [
        (x.clone(), torch.tensor([True, True, True, False, False]), torch.tensor([0, 0, 1, 2, 2])),
        (x.clone(), torch.ones(5, dtype=torch.bool), torch.tensor([2, 1, 0, 1, 2])),
    ]
