"""Small U-Net with ModuleList encoder/decoder stages, skip connections and a per-block
`residual` config flag. Hazard-free: every loop runs over submodules or a list built from
them, and every `if` reads a flag fixed at construction."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.residual = in_ch == out_ch

    def forward(self, x):
        y = self.conv2(F.relu(self.conv1(x)))
        if self.residual:
            y = y + x
        return F.relu(y)


class UNet(nn.Module):
    def __init__(self, in_ch: int = 1, base: int = 4, depth: int = 2, classes: int = 2):
        super().__init__()
        widths = [base * 2**i for i in range(depth + 1)]
        self.inc = ConvBlock(in_ch, widths[0])
        self.downs = nn.ModuleList([ConvBlock(widths[i], widths[i + 1]) for i in range(depth)])
        self.bottleneck = ConvBlock(widths[-1], widths[-1])
        self.ups = nn.ModuleList([nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2) for i in reversed(range(depth))])
        self.decs = nn.ModuleList([ConvBlock(2 * widths[i], widths[i]) for i in reversed(range(depth))])
        self.outc = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        x = self.inc(x)
        skips = []
        for down in self.downs:
            skips.append(x)
            x = down(F.max_pool2d(x, 2))
        x = self.bottleneck(x)
        for up, dec, skip in zip(self.ups, self.decs, reversed(skips)):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.outc(x)


def build() -> nn.Module:
    torch.manual_seed(0)
    return UNet().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(33)
    return [(torch.randn(2, 1, 16, 16, generator=g),), (torch.rand(2, 1, 16, 16, generator=g),)]
