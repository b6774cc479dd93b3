"""Exporter calls asking for opsets below 13 (UT403)."""

import torch
from torch import nn

OPSET = 11


class TinyConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)).sum(dim=(2, 3))


def main():
    model = TinyConv().eval()
    x = torch.randn(1, 3, 8, 8)
    torch.onnx.export(model, (x,), "tiny_9.onnx", opset_version=9, dynamo=False)  # expect: UT403
    torch.onnx.export(
        model,
        (x,),
        "tiny_11.onnx",
        input_names=["x"],
        opset_version=11,  # expect: UT403
    )
    torch.onnx.export(model, (x,), "tiny_13.onnx", opset_version=13)
    torch.onnx.export(model, (x,), "tiny_18.onnx", opset_version=18)
    # Not a literal: not reported.
    torch.onnx.export(model, (x,), "tiny_cfg.onnx", opset_version=OPSET)


if __name__ == "__main__":
    main()
