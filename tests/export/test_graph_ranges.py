"""arange / linspace whose bounds the graph computes -- from a dynamic axis
(``x.shape[0]``), from Python arithmetic on it, or from a 0-d tensor of data -- exported
once and compared with eager on onnxruntime at other sizes: length
``ceil((end - start) / step)`` and torch's result dtypes (int64 for integer bounds, the
default float dtype for a float bound or for linspace, dtype= honoured with ATen's
truncation of float bounds)."""

import torch
from torch import nn

from tests.export.harness import export_and_compare


class RangesFromAxis(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return (torch.arange(n), torch.arange(1, n, 2), torch.arange(n * 0.5), torch.arange(0, n, 0.7),
                torch.arange(n, dtype=torch.float32), torch.arange(-n, 2.5, 1.5, dtype=torch.int32),
                torch.arange(n, 0, -3), x.new_tensor(1.0) * torch.arange(n // 2))


class RangesFromData(nn.Module):
    def forward(self, x):
        top = x.max()
        count = (x > 0).sum()
        return (torch.arange(top), torch.arange(count), torch.arange(0, top, 0.5),
                torch.arange(count, dtype=torch.float64))


class Linspaces(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return (torch.linspace(0, n, 5), torch.linspace(x.min(), x.max(), 7),
                torch.linspace(-n, 1, 4, dtype=torch.int64), torch.linspace(0, 1, n),
                torch.linspace(-1.0, 2.0, n + 30, dtype=torch.float64))


class PositionGrid(nn.Module):
    """A normalised coordinate grid over a dynamic image size, as position encodings build it."""

    def forward(self, x):
        h, w = x.shape[-2:]
        ys = torch.linspace(-1.0, 1.0, h)
        xs = torch.arange(w, dtype=torch.float32) / (w - 1)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        return x + gy + gx


def _x(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def test_ranges_from_a_dynamic_axis():
    inputs = [(_x(n, 2, seed=n),) for n in (5, 1, 9, 12)]
    export_and_compare(RangesFromAxis(), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}})


def test_ranges_from_tensor_data():
    inputs = [(torch.tensor([3.7, 1.0]),), (torch.tensor([6.2, -1.0]),), (torch.tensor([0.0, -2.0]),)]
    export_and_compare(RangesFromData(), inputs[0], inputs)


def test_linspace_with_graph_bounds_and_steps():
    inputs = [(_x(n, 2, seed=n),) for n in (5, 1, 2, 9)]
    export_and_compare(Linspaces(), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}})


def test_position_grid_over_dynamic_height_and_width():
    inputs = [(_x(2, 3, h, w, seed=h),) for h, w in ((4, 6), (7, 3), (2, 2))]
    export_and_compare(PositionGrid(), inputs[0], inputs, dynamic_shapes={"x": {2: "h", 3: "w"}})
