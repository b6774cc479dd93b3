"""Window attention on an image of any size, as in Swin-style backbones: the feature map
is padded on the bottom and right up to a multiple of the window size, split into
windows, attended within each window, merged and cropped back. The pad widths are
computed from the image's height and width, which the legacy tracer records as
constants of the example's size."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class WindowAttention(nn.Module):
    def __init__(self, dim: int = 4, window: int = 4):
        super().__init__()
        self.window = window
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, c, h, w = x.shape
        k = self.window
        pad_h = (k - h % k) % k
        pad_w = (k - w % k) % k
        x = F.pad(x, (0, pad_w, 0, pad_h))
        hp, wp = x.shape[2], x.shape[3]
        windows = x.reshape(b, c, hp // k, k, wp // k, k).permute(0, 2, 4, 3, 5, 1).reshape(-1, k * k, c)
        q, key, v = self.qkv(windows).chunk(3, dim=-1)
        attn = torch.softmax(q @ key.transpose(1, 2) / c ** 0.5, dim=-1)
        out = self.proj(attn @ v)
        out = out.reshape(b, hp // k, wp // k, k, k, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, hp, wp)
        edge = F.pad(x[:, :1], (1, pad_w, 1, pad_h), mode="replicate")
        return out[:, :, :h, :w], edge.mean(dim=(2, 3))


def build() -> nn.Module:
    torch.manual_seed(0)
    return WindowAttention().eval()


def inputs() -> list[tuple]:
    g = torch.Generator().manual_seed(43)
    return [(torch.randn(1, 4, 6, 7, generator=g),), (torch.randn(1, 4, 8, 8, generator=g),),
            (torch.randn(1, 4, 5, 9, generator=g),)]
