"""`dynamo=False` on modules with and without trace hazards (UT402)."""

import torch
from torch import nn


class GatedResidual(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        if y.mean() > 0:  # expect: UT101
            return x + y
        return x - y


class Plain(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.proj(x))


def export_gated():
    model = GatedResidual().eval()
    torch.onnx.export(
        model,
        (torch.randn(2, 8),),
        "gated.onnx",
        dynamo=False,  # expect: UT402
    )


def export_gated_with_dynamo():
    model = GatedResidual().eval()
    torch.onnx.export(model, (torch.randn(2, 8),), "gated.onnx", dynamo=True)


def export_plain():
    # Defined here and hazard-free: the legacy tracer records the only path there is.
    model = Plain().eval()
    torch.onnx.export(model, (torch.randn(2, 8),), "plain.onnx", dynamo=False)


def export_any(model, sample):
    torch.onnx.export(model, (sample,), "any.onnx", dynamo=False)  # expect: UT402


if __name__ == "__main__":
    export_gated()
    export_plain()
