"""Token clustering by k-means (Lloyd iterations until the centres stop moving), used to pool a
long token sequence into a fixed number of cluster tokens."""

import torch
from torch import nn


def lloyd(points: torch.Tensor, centers: torch.Tensor, tol: float, max_iter: int) -> torch.Tensor:
    shift = torch.tensor(float("inf"))
    iteration = 0
    while shift > tol:
        assign = torch.cdist(points, centers).argmin(dim=-1)
        onehot = torch.nn.functional.one_hot(assign, centers.shape[0]).to(points.dtype)
        counts = onehot.sum(dim=0)[:, None]
        updated = torch.where(counts > 0, onehot.t() @ points / counts.clamp(min=1), centers)
        shift = (updated - centers).norm(dim=-1).max()
        centers = updated
        iteration += 1
        if iteration >= max_iter:
            break
    return centers


class ClusterPooling(nn.Module):
    def __init__(self, dim: int = 4, num_clusters: int = 3, tol: float = 1e-4, max_iter: int = 5):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.num_clusters = num_clusters
        self.tol = tol
        self.max_iter = max_iter

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        points = self.proj(tokens)
        centers = points[: self.num_clusters]
        return lloyd(points, centers, self.tol, self.max_iter)


def build() -> nn.Module:
    torch.manual_seed(0)
    return ClusterPooling().eval()


def inputs() -> list:
    g = torch.Generator().manual_seed(268)
    blobs = torch.cat([torch.randn(4, 4, generator=g) * 0.1 + c for c in (-3.0, 0.0, 3.0)])
    spread = torch.randn(12, 4, generator=g)
    line = torch.linspace(0, 1, 12)[:, None] * torch.tensor([[3.0, -2.0, 1.0, 0.5]])
    return [(blobs,), (spread,), (line,), (torch.zeros(12, 4),)]
