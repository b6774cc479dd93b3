"""Multi-file case: a classifier whose hazard is in a block imported from another file of
the package (as in any real codebase that splits layers from models). Tracing gets the
imported block's gate wrong. The rank branch here is no hazard: the rank is fixed in every graph."""

import torch
import torch.nn as nn

from corpora.multi_file.blocks import GatedBlock


class GatedClassifier(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, num_classes: int = 3):
        super().__init__()
        self.embed = nn.Linear(dim, hidden)
        self.block = GatedBlock(hidden)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x):
        if x.dim() == 1:  # the rank: static (fixed in every graph)
            x = x.unsqueeze(0)
        return self.head(self.block(self.embed(x)))


def build() -> nn.Module:
    torch.manual_seed(0)
    return GatedClassifier().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(38)
    x = torch.randn(4, 8, generator=g)
    return [(x,), (-x[0],), (5.0 * x,), (-5.0 * x,)]
