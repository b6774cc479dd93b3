"""Toy models for the verify tests: each keeps its branch on one known line (see LINES)."""

import torch
from torch import nn


class BranchyToy(nn.Module):
    """The traced export freezes whichever side the first input takes."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:  # BRANCHY_IF
            return self.fc(x) * 2
        return torch.relu(x) + 1


class ThresholdToy(nn.Module):
    """Small inputs never reach the then side."""

    def forward(self, x):
        if x.sum() > 100:  # THRESHOLD_IF
            return x * 2
        return x + 1


class NestedOutputsToy(nn.Module):
    """Tuple and dict outputs, flattened in order."""

    def forward(self, x):
        return x + 1, {"double": x * 2, "pair": (x.sum(), torch.where(x > 0, x, -x))}


class MutatingToy(nn.Module):
    """Writes into its input: verify must clone before every run."""

    def forward(self, x):
        x.mul_(2.0)
        return x + 1


class IndexToy(nn.Module):
    """An index input bounded by an embedding; the branch needs a token id of 0."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(6, 3)

    def forward(self, ids):
        h = self.embed(ids)
        if (ids == 0).any():  # INDEX_IF
            return h * 0.5
        return h


class RaisingToy(nn.Module):
    """Eager PyTorch raises on negative inputs."""

    def forward(self, x):
        assert (x >= 0).all()
        return x * 3


def line_of(marker: str) -> int:
    with open(__file__) as fh:
        for number, line in enumerate(fh, start=1):
            if line.rstrip().endswith(f"# {marker}"):
                return number
    raise LookupError(marker)


def build_branchy():
    return BranchyToy().eval()


def build_threshold():
    return ThresholdToy().eval()
