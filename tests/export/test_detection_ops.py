"""torchvision's detection operators (`lowering/ops/detection.py`), each checked against
torchvision's own results on onnxruntime: `nms` as NonMaxSuppression, `batched_nms` from
its source (an If on the number of boxes, a Loop over the categories), `roi_align` and
`MultiScaleRoIAlign` as RoiAlign."""

from collections import OrderedDict

import onnx
import pytest
import torch
from torch import nn

from benchmarks.zoo import torchvision_ops
from lowering import LoweringError, export
from tests.export.harness import export_and_compare

torchvision_ops.install()
import torchvision  # noqa: E402 - after the operators are defined
from torchvision.ops import MultiScaleRoIAlign, batched_nms, nms, roi_align  # noqa: E402


def _boxes(n: int, seed: int, size: float = 64.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    corner = torch.rand(n, 2, generator=g) * size
    extent = torch.rand(n, 2, generator=g) * size / 2 + 1
    return torch.cat([corner, corner + extent], dim=1)


def _spread_boxes(n: int, seed: int, h: int, w: int) -> torch.Tensor:
    """Boxes inside an h x w image (as the detectors clip them) from a few pixels to most
    of it: every pyramid level of MultiScaleRoIAlign gets some."""
    g = torch.Generator().manual_seed(seed)
    size = torch.tensor([w, h, w, h], dtype=torch.float32)
    corner = torch.rand(n, 2, generator=g) / 4
    extent = torch.rand(n, 2, generator=g) * 0.74 + 0.01
    return torch.cat([corner, corner + extent], dim=1) * size


def _scores(n: int, seed: int) -> torch.Tensor:
    # A permutation of distinct values: no ties, whose order neither side defines.
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed)).float() / n


def _ops(proto: onnx.ModelProto) -> list[str]:
    found = []

    def walk(graph):
        for node in graph.node:
            found.append(node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)

    walk(proto.graph)
    return found


class Nms(nn.Module):
    def __init__(self, threshold: float):
        super().__init__()
        self.threshold = threshold

    def forward(self, boxes, scores):
        return nms(boxes, scores, self.threshold)


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.7, 1.0])
def test_nms_keeps_torchvisions_boxes_in_its_order(threshold):
    cases = [(_boxes(n, s), _scores(n, s + 1)) for n, s in ((40, 1), (7, 3), (120, 5), (1, 7))]
    export_and_compare(Nms(threshold), cases[0], cases, dynamic_shapes={"boxes": {0: "n"}, "scores": {0: "n"}})


def test_nms_suppresses_only_above_the_threshold():
    # Two boxes with IoU exactly 1/3 (4x4 boxes overlapping by half): kept at 1/3, suppressed below it.
    boxes = torch.tensor([[0.0, 0.0, 4.0, 4.0], [2.0, 0.0, 6.0, 4.0]])
    scores = torch.tensor([0.9, 0.8])
    for threshold in (1 / 3, 0.3):
        export_and_compare(Nms(threshold), (boxes, scores))


def test_nms_lowers_to_one_non_max_suppression():
    proto = export(Nms(0.5), (_boxes(5, 1), _scores(5, 2)))
    assert _ops(proto).count("NonMaxSuppression") == 1


class BatchedNms(nn.Module):
    def forward(self, boxes, scores, labels):
        return batched_nms(boxes, scores, labels, 0.5)


def test_batched_nms_takes_both_of_torchvisions_paths():
    """torchvision loops over the categories above 4000 box coordinates and shifts the
    boxes per category below: an If between the two, the loop a Loop."""
    def case(n, seed):
        labels = torch.randint(0, 4, (n,), generator=torch.Generator().manual_seed(seed))
        return _boxes(n, seed), _scores(n, seed + 1), labels

    cases = [case(60, 1), case(1200, 2), case(3, 3), case(1001, 4)]
    dynamic = {"boxes": {0: "n"}, "scores": {0: "n"}, "labels": {0: "n"}}
    export_and_compare(BatchedNms(), cases[0], cases, dynamic_shapes=dynamic)
    ops = _ops(export(BatchedNms(), cases[0], dynamic_shapes=dynamic))
    assert ops.count("If") >= 2 and ops.count("Loop") == 1 and ops.count("NonMaxSuppression") == 2


class RoiAlign(nn.Module):
    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int, aligned: bool, as_list: bool):
        super().__init__()
        self.output_size, self.spatial_scale = output_size, spatial_scale
        self.sampling_ratio, self.aligned, self.as_list = sampling_ratio, aligned, as_list

    def forward(self, x, first, second):
        boxes = [first, second] if self.as_list else torch.cat(
            [torch.cat([torch.full_like(b[:, :1], i), b], dim=1) for i, b in enumerate([first, second])])
        return roi_align(x, boxes, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
@pytest.mark.parametrize("output_size, spatial_scale, as_list", [(3, 0.25, True), ((4, 2), 0.5, False)])
def test_roi_align_matches_torchvision(aligned, sampling_ratio, output_size, spatial_scale, as_list):
    model = RoiAlign(output_size, spatial_scale, sampling_ratio, aligned, as_list)
    g = torch.Generator().manual_seed(11)

    def case(n1, n2, seed, h=16, w=20):
        # Inside the feature map: outside it torchvision's pure-PyTorch fallback, the eager
        # kernel here, does not zero the samples as its compiled kernel and ONNX do.
        size = min(h, w) / spatial_scale / 1.6
        return torch.randn(2, 3, h, w, generator=g), _boxes(n1, seed, size), _boxes(n2, seed + 1, size)

    cases = [case(5, 3, 1), case(2, 7, 3, 12, 24), case(1, 1, 5)]
    export_and_compare(model, cases[0], cases, dynamic_shapes={
        "x": {2: "h", 3: "w"}, "first": {0: "n1"}, "second": {0: "n2"}})
    assert _ops(export(model, cases[0])).count("RoiAlign") == 1


class Pooler(nn.Module):
    def __init__(self, names):
        super().__init__()
        self.pool = MultiScaleRoIAlign(names, 7, 2)

    def forward(self, images, f0, f1, f2, first, second):
        features = OrderedDict([("0", f0), ("1", f1), ("pool", f2)])
        sizes = [(images.shape[-2], images.shape[-1])] * 2
        return self.pool(features, [first, second], sizes)


@pytest.mark.parametrize("names", [["0", "1", "pool"], ["1"]], ids=["three-levels", "one-level"])
def test_multiscale_roi_align_matches_torchvision(names):
    g = torch.Generator().manual_seed(3)

    def case(h, w, n1, n2, seed):
        feats = [torch.randn(2, 4, h // s, w // s, generator=g) for s in (4, 8, 16)]
        return (torch.zeros(2, 3, h, w), *feats, _spread_boxes(n1, seed, h, w), _spread_boxes(n2, seed + 1, h, w))

    cases = [case(320, 288, 12, 9, 1), case(256, 320, 7, 14, 3), case(320, 320, 1, 2, 5)]
    dynamic = {"images": {2: "h", 3: "w"}, "f0": {2: "h0", 3: "w0"}, "f1": {2: "h1", 3: "w1"},
               "f2": {2: "h2", 3: "w2"}, "first": {0: "n1"}, "second": {0: "n2"}}
    export_and_compare(Pooler(names), cases[0], cases, dynamic_shapes=dynamic, atol=1e-5)
    export_and_compare(Pooler(names), cases[1], [cases[1]])  # static sizes: the scales are Python floats


def test_roi_align_refuses_an_output_size_from_the_graph():
    class GraphSize(nn.Module):
        def forward(self, x, boxes):
            return roi_align(x, [boxes], x.shape[-1], 1.0)

    with pytest.raises(LoweringError) as info:
        export(GraphSize(), (torch.randn(1, 2, 8, 8), _boxes(3, 1)), dynamic_shapes={"x": {3: "w"}})
    assert str(info.value) == (
        f"{__file__}:{GraphSize.forward.__code__.co_firstlineno + 1}: roi_align: output_size comes from the graph "
        "(a dynamic size), but ONNX RoiAlign takes it as an attribute\npass output_size as Python ints")


def test_torchvision_is_the_stand_in_or_its_own():
    assert torchvision.ops.nms is nms
