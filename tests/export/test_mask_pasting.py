"""torchvision's mask pasting (`roi_heads.paste_masks_in_image`) and the constructs it is
made of: `int()` of a 0-d tensor used as a size, Python `max` / `min` of a tensor and a
number, `F.interpolate` to sizes computed in the graph, slices read and written with
graph bounds, and a list comprehension over `zip` of the rows of dynamic axes, stacked
when `len(res) > 0`. Each is checked on onnxruntime against eager on inputs that reach
its edge cases (boxes partly outside the image, empty and one-pixel boxes, no boxes, many
boxes, other image sizes), or refused with a message that says what to write instead."""

import onnx
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.zoo import torchvision_ops
from lowering import LoweringError, export
from tests.export.harness import export_and_compare

torchvision_ops.install()  # before torchvision is imported: its compiled ops cannot load here
from torchvision.models.detection.roi_heads import paste_masks_in_image  # noqa: E402


def _ops(proto: onnx.ModelProto) -> set[str]:
    def walk(graph):
        for node in graph.node:
            yield node.op_type
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from walk(a.g)

    return set(walk(proto.graph))


def _refused(model, args, message, dynamic_shapes=None):
    with pytest.raises(LoweringError, match=f"(?s){message}") as info:
        export(model, args, dynamic_shapes=dynamic_shapes)
    assert info.value.path.endswith("test_mask_pasting.py") and info.value.line
    return info.value


# ---------------------------------------------------------------- int() of a 0-d tensor as a size


class OnesOfIntLength(nn.Module):
    def forward(self, x):
        n = int(x[0] * 3)  # truncates toward zero, as Python's int() does
        return torch.ones(max(n, 1), 2)


@pytest.mark.parametrize("value", [2.7, -2.7, 0.2, 5.0])
def test_int_of_a_tensor_is_a_graph_size(value):
    example = (torch.tensor([1.0]),)
    export_and_compare(OnesOfIntLength(), example, [example, (torch.tensor([value]),)])


# ---------------------------------------------------------------- Python max / min


class ClampIndexBox(nn.Module):
    """torchvision's `max(box[0], 0)` / `min(box[2] + 1, im_w)`: the int64 tensor or the int."""

    def forward(self, box, image):
        x0, x1 = max(box[0], 0), min(box[2] + 1, image.shape[-1])
        y0, y1 = max(box[1], 0), min(box[3] + 1, image.shape[-2])
        return torch.zeros(4, dtype=torch.int64) + torch.stack([torch.as_tensor(v) for v in (x0, y0, x1, y1)])


def test_max_min_of_an_int64_tensor_and_ints():
    image = torch.zeros(1, 30, 40)
    inputs = [(torch.tensor(b), torch.zeros(1, h, w)) for b, h, w in
              [([3, 4, 10, 12], 30, 40), ([-5, -2, 50, 40], 30, 40), ([60, 70, 80, 90], 20, 50), ([0, 0, 0, 0], 5, 5)]]
    export_and_compare(ClampIndexBox(), (torch.tensor([1, 2, 3, 4]), image), inputs,
                       dynamic_shapes={"image": {1: "h", 2: "w"}})


class PythonMaxMin(nn.Module):
    """Python keeps the first item and replaces it only by a greater (smaller) one: NaN
    and -0.0 decide as they do there. 1 / -0.0 tells -0.0 from 0.0."""

    def forward(self, a):
        return torch.stack([max(a[0], a[1]), min(a[0], a[1]), 1 / max(a[2], a[3]), 1 / min(a[3], a[2]),
                            max(a[0], a[1], a[2])])


@pytest.mark.parametrize("values", [[1.0, 2.0, 0.0, -0.0], [float("nan"), 1.0, -0.0, 0.0], [1.0, float("nan"), 0.0, 0.0],
                                    [3.0, -1.0, -0.0, -0.0]])
def test_python_max_min_of_0d_tensors_follow_python(values):
    example = (torch.tensor([1.0, 2.0, 3.0, 4.0]),)
    export_and_compare(PythonMaxMin(), example, [example, (torch.tensor(values),)])


class MaxOfSizes(nn.Module):
    def forward(self, x):
        return x.new_zeros(max(x.shape[0] // 2, 1), min(x.shape[1], 3))


def test_max_min_of_sizes_stay_python_numbers():
    inputs = [(torch.randn(h, w),) for h, w in [(4, 5), (1, 2), (7, 3)]]
    export_and_compare(MaxOfSizes(), inputs[0], inputs, dynamic_shapes={"x": {0: "h", 1: "w"}})


class MaxOfFloatTensorAndInt(nn.Module):
    def forward(self, x):
        return x * max(x[0], 0)


class MaxOfVectors(nn.Module):
    def forward(self, x):
        return max(x, x + 1)


class MaxOfTwoDtypes(nn.Module):
    def forward(self, x):
        return torch.zeros(3) + max(x[0], x[1].int())


class MaxOverADynamicAxis(nn.Module):
    def forward(self, x):
        return max(x)


class MaxWithKey(nn.Module):
    def forward(self, x):
        return max(x[0], x[1], key=abs)


@pytest.mark.parametrize("model, message, dynamic", [
    (MaxOfFloatTensorAndInt(), "max\\(\\) of a torch.float32 tensor and a Python number: eager returns the tensor or "
                               "the number depending on the values.*torch.as_tensor", None),
    (MaxOfVectors(), "max\\(\\) of a tensor that is not 0-d.*use torch.maximum\\(a, b\\)", None),
    (MaxOfTwoDtypes(), "max\\(\\) of tensors of dtypes \\['torch.float32', 'torch.int32'\\]: eager returns one of "
                       "them.*cast them to one dtype", None),
    (MaxOverADynamicAxis(), "max\\(\\) over the elements of a tensor whose first axis is dynamic.*torch.max\\(t\\)",
     {"x": {0: "n"}}),
    (MaxWithKey(), "max\\(\\) with key= over graph values", None),
])
def test_python_max_whose_result_type_depends_on_the_data_is_refused(model, message, dynamic):
    _refused(model, (torch.randn(4),), message, dynamic)


# ---------------------------------------------------------------- interpolate to graph sizes


class ResizeToBox(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def forward(self, mask, box):
        h, w = max(int(box[1]), 1), max(int(box[0]), 1)
        kwargs = {} if self.mode.startswith("nearest") else {"align_corners": False}
        return F.interpolate(mask[None, None], size=(h, w), mode=self.mode, **kwargs)[0, 0]


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "nearest-exact", "bicubic"])
def test_interpolate_to_sizes_computed_in_the_graph(mode):
    mask = torch.rand(7, 9)
    inputs = [(torch.rand(7, 9), torch.tensor(b)) for b in ([5, 3], [1, 1], [9, 7], [20, 13], [0, -4], [2, 30])]
    export_and_compare(ResizeToBox(mode), (mask, torch.tensor([4, 4])), inputs)


# ---------------------------------------------------------------- slices with graph bounds


class SliceByTensor(nn.Module):
    def forward(self, x, b):
        return x[b[0]:b[1], b[2]:b[3]]


@pytest.mark.parametrize("bounds", [[1, 4, 0, 3], [-3, -1, 2, 100], [4, 2, 0, 5], [-100, 100, -2, 0], [0, -7, 3, 3]])
def test_slice_read_with_graph_bounds_clamps_as_python(bounds):
    example = (torch.randn(6, 5), torch.tensor([0, 1, 0, 1]))
    export_and_compare(SliceByTensor(), example, [example, (torch.randn(6, 5), torch.tensor(bounds))])


class PasteIntoSlice(nn.Module):
    def forward(self, x, src, b):
        out = torch.zeros_like(x)
        h, w = out[b[0]:b[1], b[2]:b[3]].shape
        out[b[0]:b[1], b[2]:b[3]] = src[:h, :w]
        out[b[0]:b[1], 0:1] = 1.0
        return out


@pytest.mark.parametrize("bounds", [[1, 4, 0, 3], [2, 2, 1, 4], [5, 6, 4, 5], [-3, -1, -2, 5], [0, 6, 3, 3]])
def test_slice_write_with_graph_bounds(bounds):
    example = (torch.randn(6, 5), torch.randn(6, 5), torch.tensor([0, 1, 0, 1]))
    export_and_compare(PasteIntoSlice(), example, [example, (torch.randn(6, 5), torch.randn(6, 5), torch.tensor(bounds))])


class BroadcastIntoSlice(nn.Module):
    def forward(self, x, row, b):
        x = x.clone()
        x[b[0]:b[1], :] = row  # one row broadcast over a data-dependent number of rows
        return x


@pytest.mark.parametrize("bounds", [[1, 4], [3, 3], [-2, 100]])
def test_slice_write_broadcasts_a_row(bounds):
    example = (torch.randn(5, 3), torch.randn(1, 3), torch.tensor([0, 1]))
    export_and_compare(BroadcastIntoSlice(), example, [example, (torch.randn(5, 3), torch.randn(1, 3), torch.tensor(bounds))])


# ---------------------------------------------------------------- zip / enumerate over dynamic rows


class ScaledRows(nn.Module):
    def forward(self, x, scale):
        res = [row * s for row, s in zip(x, scale)]
        if len(res) > 0:
            return torch.stack(res, dim=0)[:, None]
        return x.new_empty((0, 1, x.shape[1]))


@pytest.mark.parametrize("n, m", [(3, 3), (0, 0), (1, 1), (40, 40), (5, 2), (2, 6)])
def test_comprehension_over_zip_of_dynamic_rows(n, m):
    """zip stops at the shorter input, as Python's does; none gives the `else` side."""
    example = (torch.randn(3, 4), torch.randn(3))
    proto = export(ScaledRows(), example, dynamic_shapes={"x": {0: "n"}, "scale": {0: "m"}})
    assert {"Loop", "If"} <= _ops(proto)
    export_and_compare(ScaledRows(), example, [example, (torch.randn(n, 4), torch.randn(m))],
                       dynamic_shapes={"x": {0: "n"}, "scale": {0: "m"}})


class EnumeratedRows(nn.Module):
    def forward(self, x):
        out = []
        for i, (row, other) in enumerate(zip(x, x.flip(0)), 1):
            out.append(row * i - other)
        return torch.stack(out), torch.stack([r for r in reversed(x)])


@pytest.mark.parametrize("n", [1, 3, 6])
def test_for_over_enumerate_zip_and_reversed_of_dynamic_rows(n):
    example = (torch.randn(3, 2),)
    export_and_compare(EnumeratedRows(), example, [example, (torch.randn(n, 2),)], dynamic_shapes={"x": {0: "n"}})


class ZipWithAList(nn.Module):
    def forward(self, x):
        return torch.stack([row * s for row, s in zip(x, [1.0, 2.0])])


class ZipStrict(nn.Module):
    def forward(self, x, y):
        return torch.stack([a + b for a, b in zip(x, y, strict=True)])


class ListOfZip(nn.Module):
    def forward(self, x):
        return list(zip(x, x))[0][0]


class EnumerateAfterALoop(nn.Module):
    def forward(self, x):
        out = [x[0]]
        for row in x:
            out.append(row * 2)
        return torch.stack([r * i for i, r in enumerate(out)])


def test_zip_of_dynamic_rows_that_cannot_be_exact_is_refused():
    x = torch.randn(3, 2)
    _refused(ZipWithAList(), (x,), "zip\\(\\) of the rows of a tensor whose first axis is dynamic with list: the "
             "graph cannot pick that sequence's items by the loop's index.*zip tensors only",
             {"x": {0: "n"}})
    _refused(ZipStrict(), (x, x), "zip\\(strict=True\\) over the rows of a tensor whose first axis is dynamic.*"
             "drop strict=True", {"x": {0: "n"}, "y": {0: "m"}})
    _refused(ListOfZip(), (x,), "list\\(\\) of the rows that `zip` / `enumerate` pair along a dynamic axis.*"
             "use the pairs in a for loop or a list comprehension", {"x": {0: "n"}})
    _refused(EnumerateAfterALoop(), (x,), "`enumerate\\(\\)` of the list `out` after the data-dependent loop that "
             "appended to it", {"x": {0: "n"}})


# ---------------------------------------------------------------- torchvision's paste_masks_in_image


class PasteMasks(nn.Module):
    def forward(self, masks, boxes, image):
        return paste_masks_in_image(masks, boxes, image.shape[-2:])


def _boxes(n: int, h: int, w: int, seed: int) -> tuple:
    """Masks and boxes as maskrcnn's post-processing has them (clipped to the image, some
    empty), which the paste's expansion pushes partly outside; from 5 boxes on, also
    boxes on the edges and corners, empty and one pixel wide."""
    g = torch.Generator().manual_seed(seed)
    size = torch.tensor([w, h, w, h], dtype=torch.float32)
    corners = torch.rand(n, 2, 2, generator=g) * 1.2 - 0.1
    p0, p1 = corners.min(dim=1).values, corners.max(dim=1).values
    boxes = (torch.cat([p0, p1], 1) * size).clamp(min=0).minimum(size)
    empty = torch.rand(n, generator=g) < 0.2
    boxes[empty, 2:] = boxes[empty, :2]
    fixed = torch.tensor([[0, 0, w, h], [w, h, w, h], [0, 0, 0, 0], [w - 1, 0, w, 1], [0, h - 2, 3, h]],
                         dtype=torch.float32)
    boxes = torch.cat([boxes, fixed]) if n >= 5 else boxes
    return torch.rand(len(boxes), 1, 28, 28, generator=g), boxes, torch.zeros(3, h, w)


def test_torchvision_paste_masks_in_image_matches_eager():
    example = _boxes(3, 60, 70, 0)
    dynamic = {"masks": {0: "n"}, "boxes": {0: "n"}, "image": {1: "h", 2: "w"}}
    inputs = [example, _boxes(0, 60, 70, 1), _boxes(1, 20, 30, 2), _boxes(60, 50, 45, 3), _boxes(7, 5, 5, 4),
              _boxes(100, 33, 80, 5)]
    proto = export(PasteMasks(), example, dynamic_shapes=dynamic)
    assert {"Loop", "If", "Resize", "ScatterElements"} <= _ops(proto)
    export_and_compare(PasteMasks(), example, inputs, dynamic_shapes=dynamic)
