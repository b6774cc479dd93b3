"""Farthest point sampling as in PointNet++ set abstraction: repeatedly pick the point
farthest from those already chosen. `centroids[:, i] = farthest` and the masked distance
update mutate tensors in place, which ONNX can only express once rewritten as scatters."""

import torch
import torch.nn as nn


class FarthestPointSampler(nn.Module):
    def __init__(self, npoint: int = 4, feat_dim: int = 8):
        super().__init__()
        self.npoint = npoint
        self.embed = nn.Linear(3, feat_dim)

    def forward(self, xyz):
        batch, num_points, _ = xyz.shape
        centroids = torch.zeros(batch, self.npoint, dtype=torch.long)
        distance = torch.full((batch, num_points), 1e10)
        farthest = torch.zeros(batch, dtype=torch.long)
        batch_idx = torch.arange(batch)
        for i in range(self.npoint):
            centroids[:, i] = farthest  # expect: UT304
            centroid = xyz[batch_idx, farthest, :].unsqueeze(1)
            dist = ((xyz - centroid) ** 2).sum(dim=-1)
            closer = dist < distance
            distance[closer] = dist[closer]  # expect: UT304
            farthest = torch.argmax(distance, dim=-1)
        sampled = torch.gather(xyz, 1, centroids.unsqueeze(-1).expand(-1, -1, 3))
        return centroids, self.embed(sampled)


def build() -> nn.Module:
    torch.manual_seed(0)
    return FarthestPointSampler().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(7)
    cloud = torch.randn(2, 16, 3, generator=g)
    return [(cloud,), (cloud * torch.tensor([4.0, 1.0, 0.25]),)]
