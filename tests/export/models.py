"""Small control-flow models for the lowering tests (each line a construct under test)."""

import torch
from torch import nn


def halve_until_small(z):
    n = 0
    while z.abs().sum() > 1:
        z = z / 2
        n += 1
    return z, n


class GraphIf(nn.Module):
    def __init__(self, flag=True):
        super().__init__()
        self.flag = flag
        self.scale = nn.Parameter(torch.full((4,), 1.5))

    def forward(self, x, mask=None):
        if mask is not None:  # static: folded away
            x = x * mask
        if self.flag:  # static config
            x = x + 1
        if x.sum() > 0:  # data: ONNX If
            y = x * self.scale
            k = 2
        else:
            y = -x
            k = 3
        return y * k


class EarlyReturn(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            return x * 10
        x = x - 1
        if x.min() < -3:
            return x * 0
        return x


class WhileCounter(nn.Module):
    def forward(self, x):
        z, n = halve_until_small(x)
        return z, n


class BreakInStaticLoop(nn.Module):
    def forward(self, x):
        for i in range(4):
            if x.max() > 5:
                break
            x = x * 2 + i
        return x


class ContinueInStaticLoop(nn.Module):
    def forward(self, x):
        for i in range(3):
            if x.sum() < 0:
                x = x + 1
                continue
            x = x * 0.5
        return x


class ShapeLoop(nn.Module):
    def forward(self, x):
        acc = x.sum() * 0
        for i in range(x.shape[0]):
            acc = acc + i
        return acc


class ReturnInLoop(nn.Module):
    def forward(self, x):
        for i in range(5):
            x = x + 1
            if x.sum() > 10:
                return x * 100
        return x


class Ternary(nn.Module):
    def forward(self, x):
        return x * 2 if x.sum() > 0 else x - 2


class TorchCond(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))


class OneSided(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        return y
