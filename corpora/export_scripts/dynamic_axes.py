"""Dynamic axes declared for modules whose forward depends on shapes (UT404)."""

import torch
from torch import nn


class LengthCropper(nn.Module):
    def __init__(self, dim=8, max_len=16):
        super().__init__()
        self.max_len = max_len
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        if x.shape[1] > self.max_len:  # expect: UT103
            x = x[:, : self.max_len]
        return self.proj(x)


class Pooler(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x).mean(1)


class RowScaler(nn.Module):
    def forward(self, x):
        out = []
        for i in range(x.size(0)):  # expect: UT104
            out.append(x[i] * (i + 1))
        return torch.stack(out)


def main():
    x = torch.randn(2, 20, 8)
    cropper = LengthCropper().eval()
    torch.onnx.export(cropper, (x,), "crop.onnx", dynamic_axes={"x": {1: "length"}})  # expect: UT404
    torch.onnx.export(cropper, (x,), "crop_static.onnx")
    pooler = Pooler().eval()
    torch.onnx.export(pooler, (x,), "pool.onnx", dynamic_axes={"x": {0: "batch", 1: "length"}})
    rows = RowScaler().eval()
    batch = torch.export.Dim("batch")
    torch.export.export(rows, (x,), dynamic_shapes={"x": {0: batch}})  # expect: UT404


if __name__ == "__main__":
    main()
