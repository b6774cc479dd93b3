"""Greedy cover of a point cloud: picks the point farthest from the chosen centers until every
point is within the radius or the center budget is spent."""

import torch
from torch import nn


class GreedyCenterPicker(nn.Module):
    def __init__(self, radius: float = 1.0, max_centers: int = 6):
        super().__init__()
        self.radius = radius
        self.max_centers = max_centers

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        centers = [points[0]]
        min_dist = (points - points[0]).norm(dim=-1)
        for _ in range(self.max_centers - 1):
            if min_dist.max() <= self.radius:
                break
            idx = min_dist.argmax()
            centers.append(points[idx])
            min_dist = torch.minimum(min_dist, (points - points[idx]).norm(dim=-1))
        return torch.stack(centers)


def build() -> nn.Module:
    return GreedyCenterPicker().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(28)
    p = torch.randn(12, 2, generator=g)
    return [(0.2 * p,), (p,), (10.0 * p,)]
