"""Exporter calls whose opset is below what the exported module's ops need (UT403), and
an op that `untrace export` has no lowering for (UT302: `torch.linalg.svdvals`)."""

import torch
import torch.nn.functional as F
from torch import nn


class FlowWarp(nn.Module):
    """Warps an image by a predicted flow field: GridSample arrived in ONNX opset 16."""

    def __init__(self, channels: int = 3):
        super().__init__()
        self.flow = nn.Conv2d(channels, 2, 3, padding=1)

    def forward(self, image: torch.Tensor):
        grid = torch.tanh(self.flow(image)).permute(0, 2, 3, 1)
        return F.grid_sample(image, grid, align_corners=False)


class SpectralScale(nn.Module):
    """Divides by the largest singular value: no ONNX op computes an SVD."""

    def forward(self, weight: torch.Tensor):
        return weight / torch.linalg.svdvals(weight)[0]  # expect: UT302


class CausalMask(nn.Module):
    """A lower-triangular mask: Trilu arrived in ONNX opset 14."""

    def forward(self, scores: torch.Tensor):
        keep = torch.tril(torch.ones_like(scores))
        return scores.masked_fill(keep == 0, float("-inf")).softmax(dim=-1)


def main():
    image = torch.randn(1, 3, 8, 8)
    warp = FlowWarp().eval()
    torch.onnx.export(warp, (image,), "warp_14.onnx", opset_version=14)  # expect: UT403
    torch.onnx.export(warp, (image,), "warp_16.onnx", opset_version=16)
    mask = CausalMask().eval()
    torch.onnx.export(mask, (torch.randn(4, 4),), "mask_13.onnx", opset_version=13)  # expect: UT403
    torch.onnx.export(mask, (torch.randn(4, 4),), "mask_14.onnx", opset_version=14)


if __name__ == "__main__":
    main()
