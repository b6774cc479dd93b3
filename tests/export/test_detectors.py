"""torchvision's detectors exported with their post-processing in the graph (If, Loop,
NonMaxSuppression) and checked against eager PyTorch on onnxruntime, two images of other
values and other sizes (dynamic height and width) per input (`tests/export/detectors.py`)."""

import onnx
import pytest
import torch

from lowering import export
from tests.export import detectors
from tests.export.harness import export_and_compare


def _count(proto: onnx.ModelProto, op: str) -> int:
    def walk(graph):
        return sum((node.op_type == op) + sum(walk(a.g) for a in node.attribute
                                              if a.type == onnx.AttributeProto.GRAPH) for node in graph.node)

    return walk(proto.graph)


@pytest.mark.parametrize("name", ["ssdlite320_mobilenet_v3_large", "retinanet_resnet50_fpn", "fcos_resnet50_fpn"])
def test_detector_matches_eager(name):
    model = detectors.build(name)
    example = detectors.example()
    export_and_compare(model, example, [example, *detectors.checks()], dynamic_shapes=detectors.DYNAMIC,
                       rtol=1e-3, atol=1e-3)
    proto = export(model, example, dynamic_shapes=detectors.DYNAMIC)
    # Per image: batched_nms's If on the number of boxes, the If on none, the Loop over categories.
    assert (_count(proto, "If"), _count(proto, "Loop"), _count(proto, "NonMaxSuppression")) == (6, 2, 4)


@pytest.mark.parametrize("score_thresh", [None, 0.9])
def test_rcnn_box_decoding_that_changes_rank_on_no_proposals_matches_eager(score_thresh):
    """BoxCoder.decode reshapes to [N, classes, 4] only `if box_sum > 0`: with no proposals
    the boxes stay [0, 4 * classes]. The code after that `if` is lowered once per side
    (`lowering.forks`); with the model's threshold every image keeps boxes, above every
    score (0.9) none does."""
    model = detectors.build("fasterrcnn_mobilenet_v3_large_320_fpn")
    if score_thresh is not None:
        model.roi_heads.score_thresh = score_thresh
    example = detectors.example()
    inputs = [example, *detectors.checks()[1:3]]
    with torch.no_grad():
        counts = {len(d["boxes"]) for args in inputs for d in model(*args)}
    assert counts == ({0} if score_thresh else {model.roi_heads.detections_per_img})
    export_and_compare(model, example, inputs, dynamic_shapes=detectors.DYNAMIC, rtol=1e-3, atol=1e-3)
