"""Constructs of vision models that a dynamic axis makes hard (issue 13, item 6):
`torch.chunk` along a dynamic axis and `F.interpolate(antialias=True)`. Each export
matches eager on onnxruntime over several shapes, or fails where eager does."""

import onnxruntime as ort
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class ChunksTheBatch(nn.Module):
    """RAFT's idiom: both images through one encoder, then split back."""

    def forward(self, a, b):
        both = torch.cat([a, b], dim=0) * 2
        first, second = torch.chunk(both, 2, dim=0)
        return first - second, second


def test_chunk_along_a_dynamic_axis():
    inputs = [(torch.randn(n, 3), torch.randn(n, 3)) for n in (2, 1, 5)]
    export_and_compare(ChunksTheBatch(), inputs[0], inputs, dynamic_shapes={"a": {0: "n"}, "b": {0: "n"}})


class ChunksInThree(nn.Module):
    def forward(self, x):
        return tuple(p * (i + 1) for i, p in enumerate(x.chunk(3, dim=1)))


@pytest.mark.parametrize("width", [3, 5, 7, 9, 0])
def test_uneven_chunks_along_a_dynamic_axis(width):
    # The last piece is smaller (7 -> 3, 3, 1) or all are empty (0); the example is 6 wide.
    export_and_compare(ChunksInThree(), (torch.randn(2, 6),), [(torch.randn(2, width),)],
                       dynamic_shapes={"x": {1: "w"}})


def test_chunk_that_eager_returns_fewer_pieces_of_fails_at_run_time():
    # Width 4 in 3 chunks gives two pieces of 2 in eager: the graph's three outputs cannot
    # express that, so onnxruntime raises instead of returning a wrong third piece.
    proto = export(ChunksInThree(), (torch.randn(2, 6),), dynamic_shapes={"x": {1: "w"}})
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    assert len(torch.randn(2, 4).chunk(3, dim=1)) == 2
    with pytest.raises(Exception, match="(?i)split"):
        session.run(None, {session.get_inputs()[0].name: torch.randn(2, 4).numpy()})


class LoopsOverChunks(nn.Module):
    """A causal scan in blocks (issue 24): `for` over the pieces `chunk` makes along a
    dynamic axis, a running sum carried from block to block, each block's output appended
    and concatenated. Eager makes fewer pieces than asked when the axis is short; the
    graph runs the body for the pieces that exist."""

    def forward(self, q, k):
        carried = 0
        outs = []
        for i, (qb, kb) in enumerate(zip(q.chunk(4, dim=1), k.chunk(4, dim=1))):
            running = carried + kb.cumsum(dim=1)
            outs.append(qb * running + i)
            carried = running[:, -1:]
        return torch.cat(outs, dim=1), carried


@pytest.mark.parametrize("length", [1, 2, 3, 5, 6, 7, 8, 13])
def test_a_for_loop_over_chunks_of_a_dynamic_axis(length):
    # 1, 2, 3: fewer pieces than 4; 5, 6: three pieces (6 -> 2, 2, 2); 7, 13: a shorter last one.
    make = lambda n, seed: (torch.randn(2, n, 3, generator=torch.Generator().manual_seed(seed)),  # noqa: E731
                            torch.randn(2, n, 3, generator=torch.Generator().manual_seed(seed + 1)))
    export_and_compare(LoopsOverChunks(), make(8, 0), [make(length, length)],
                       dynamic_shapes={"q": {1: "n"}, "k": {1: "n"}})


class ZipsChunksWithRows(nn.Module):
    """zip() of pieces with a list and with the rows of a static first axis."""

    def forward(self, x, w):
        total = x[:, :1] * 0
        for piece, row, scale in zip(x.chunk(3, dim=1), w, [1.0, 2.0, 3.0]):
            total = total + (piece * row[:, None] * scale).sum(1, keepdim=True)
        return total


@pytest.mark.parametrize("width", [1, 2, 4, 7])
def test_zip_of_chunks_with_a_list_and_the_rows_of_a_tensor(width):
    w = torch.randn(3, 2)
    export_and_compare(ZipsChunksWithRows(), (torch.randn(2, 6), w), [(torch.randn(2, width), w)],
                       dynamic_shapes={"x": {1: "w"}})


class ZipsChunksWithDynamicRows(nn.Module):
    def forward(self, x, y):
        total = x[:1] * 0
        for piece, row in zip(x.chunk(2, dim=0), y):
            total = total + piece.sum(0, keepdim=True) * row
        return total


def test_zip_of_chunks_with_rows_of_a_dynamic_axis_is_refused():
    with pytest.raises(LoweringError, match="zip\(\) of the pieces `chunk` makes"):
        export(ZipsChunksWithDynamicRows(), (torch.randn(4, 3), torch.randn(5, 3)),
               dynamic_shapes={"x": {0: "n"}, "y": {0: "m"}})


class ResamplesAPositionTable(nn.Module):
    """timm's resample_abs_pos_embed: a learned grid resized to the input's patch grid."""

    def __init__(self, mode="bicubic", align_corners=False):
        super().__init__()
        self.table = nn.Parameter(torch.randn(1, 3, 7, 7))
        self.mode, self.align_corners = mode, align_corners

    def forward(self, x):
        grid = (x.shape[2] // 4, x.shape[3] // 4)
        table = F.interpolate(self.table, size=grid, mode=self.mode, antialias=True, align_corners=self.align_corners)
        return x[:, :, ::4, ::4] + table


@pytest.mark.parametrize("mode", ["bicubic", "bilinear"])
def test_antialiased_interpolate_to_a_dynamic_size(mode):
    # Grids of 4x5 and 3x3 shrink the 7x7 table, 10x8 and 16x28 grow it.
    inputs = [(torch.randn(b, 3, h, w),) for b, h, w in [(2, 16, 20), (1, 12, 12), (3, 40, 32), (1, 64, 112)]]
    export_and_compare(ResamplesAPositionTable(mode), inputs[0], inputs, dynamic_shapes={"x": {0: "b", 2: "h", 3: "w"}})


@pytest.mark.parametrize("model, opset, message, hint", [
    (ResamplesAPositionTable(align_corners=True), 18,
     ("interpolate(antialias=True, align_corners=True): onnxruntime's antialiased Resize samples other points than "
     "torch's with align_corners=True"), "use align_corners=False (the default), or antialias=False"),
    (ResamplesAPositionTable(), 17,
     "interpolate(antialias=True) needs Resize's `antialias` attribute, new in opset 18 (exporting at opset 17)",
     "export with opset=18 or later"),
])
def test_antialiased_interpolate_refusals(model, opset, message, hint):
    with pytest.raises(LoweringError) as info:
        export(model, (torch.randn(1, 3, 16, 16),), opset=opset)
    assert info.value.message == message and info.value.hint == hint
    assert info.value.line is not None and info.value.path == __file__


class AntialiasedNearest(nn.Module):
    def forward(self, x):
        return F.interpolate(x, size=(4, 4), mode="nearest", antialias=True)


def test_antialias_outside_bilinear_and_bicubic_is_refused_as_torch_raises():
    with pytest.raises(LoweringError) as info:
        export(AntialiasedNearest(), (torch.randn(1, 3, 16, 16),))
    assert info.value.message == ("interpolate(antialias=True) is restricted to the bilinear and bicubic modes and a "
                                  "4-D input (torch raises)")
    with pytest.raises(Exception, match="Anti-alias option is restricted to bilinear, bicubic"):
        AntialiasedNearest()(torch.randn(1, 3, 16, 16))
