"""torchvision models with random weights (`weights=None, weights_backbone=None`).

Classifiers take 64x64 images (vit_b_16 built for them with `image_size`) except maxvit_t,
whose window partitions need 224, batch dynamic; the two
segmentation nets also have dynamic height and width.

Detectors take a list of two images of different sizes (each with dynamic height and
width) and resize them to at most 160 pixels (`min_size`/`max_size`; ssdlite always
resizes to 320x320). With the library's initialisation the backbone's features vanish and
every detection ties in score, so that which box survives NMS depends on the sort's tie
order: the weights are re-initialised (seeded, `_reinit`) so that scores differ.
Five classes and the score thresholds below leave a few boxes after post-processing.
raft_small runs 3 flow updates on 128x128 frames.
"""

from __future__ import annotations

import torch

from benchmarks.zoo.cases import Case, CaseInputs, Inputs, image_case, image_dynamic, images, seeded


def _tv(name: str, **kwargs):
    def build():
        import torchvision

        return torchvision.models.get_model(name, weights=None, **kwargs)

    return seeded(build)


def _classifier(name: str, size: tuple[int, int] = (64, 64), *, dynamic_hw: bool = False, input_name: str = "x",
                **kwargs) -> Case:
    return Case(name, "torchvision", _tv(name, **kwargs), image_case(size, dynamic_hw=dynamic_hw),
                image_dynamic(dynamic_hw, input_name))


def _reinit(model: torch.nn.Module, heads: tuple[str, ...]) -> torch.nn.Module:
    """Weights under which random detectors give distinct scores. With the library's
    initialisation the backbone's features shrink to ~1e-14 (or, with plain 1/sqrt(fan_in)
    weights, grow to hundreds), and every detection gets the score of the head's bias.
    So every layer outside the heads is scaled, in one seeded calibration pass, to output
    unit standard deviation (LSUV in one forward: each layer's output is rescaled as it is
    made, so the layers after it see the rescaled one), and the heads get weights of
    scale 0.5/sqrt(fan_in) (small box deltas) and random biases (scores that differ)."""
    generator = torch.Generator().manual_seed(1234)
    layers = (torch.nn.Conv2d, torch.nn.ConvTranspose2d, torch.nn.Linear)
    in_heads = {id(m) for head in heads for m in model.get_submodule(head).modules()}
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, layers) and id(module) in in_heads:
                weight = module.weight
                weight.copy_(torch.randn(weight.shape, generator=generator) * 0.5 / weight[0].numel() ** 0.5)
                if module.bias is not None:
                    module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.1)

    def unit_output(module, args, output):
        scale = float(output.std()) or 1.0
        module.weight.div_(scale)
        if module.bias is not None:
            module.bias.div_(scale)
        return output / scale

    hooks = [m.register_forward_hook(unit_output) for m in model.modules()
             if isinstance(m, layers) and id(m) not in in_heads]
    model.eval()
    with torch.no_grad():
        model([images(1, (128, 128), 99)[0]])
    for hook in hooks:
        hook.remove()
    return model


def _detector(name: str, heads: tuple[str, ...], **kwargs):
    def build():
        import torchvision

        torch.manual_seed(0)
        model = torchvision.models.get_model(name, weights=None, weights_backbone=None, num_classes=5, **kwargs)
        return _reinit(model, heads).eval()

    return build


DETECTOR_SIZES = (160, 128)  # (max_size, min_size) of the resize in the model's transform


def _detector_inputs() -> CaseInputs:
    def batch(sizes, offset):
        return Inputs(([images(1, s, offset + i)[0] for i, s in enumerate(sizes)],))

    example = [(120, 150), (140, 110)]
    return CaseInputs(batch(example, 0), [
        ("other values", batch(example, 10)),
        ("other sizes", batch([(100, 130), (150, 150)], 20)),
        ("other sizes 2", batch([(160, 96), (128, 128)], 30)),
    ])


def _detector_case(name: str, heads: tuple[str, ...], **kwargs) -> Case:
    max_size, min_size = DETECTOR_SIZES
    resize = {} if name.startswith("ssdlite") else {"min_size": min_size, "max_size": max_size}
    return Case(name, "torchvision", _detector(name, heads, **resize, **kwargs), _detector_inputs,
                {"images": [{1: "height0", 2: "width0"}, {1: "height1", 2: "width1"}]})


def _raft_inputs() -> CaseInputs:
    def pair(batch, size, offset):
        return Inputs((images(batch, size, offset), images(batch, size, offset + 1)), {"num_flow_updates": 3})

    size = (128, 128)
    return CaseInputs(pair(1, size, 0), [
        ("other values", pair(1, size, 10)), ("batch 2", pair(2, size, 20)), ("size 128x160", pair(1, (128, 160), 30)),
    ])


# Fewer candidates than the defaults (1000 proposals per level, 300 detections), so that
# eager PyTorch's NMS stand-in (a Python loop) and mask pasting stay quick; rcnn's box
# threshold lowered to 0.01, since with random weights the background class takes most of
# the softmax and no box would pass the default 0.05.
RCNN = dict(rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=50, box_detections_per_img=10,
            box_score_thresh=0.01)
ONE_STAGE = dict(topk_candidates=100, detections_per_img=10)

_RAFT_AXES = {0: "batch", 2: "height", 3: "width"}

CASES: list[Case] = [
    _classifier("resnet18"),
    _classifier("mobilenet_v3_small"),
    _classifier("squeezenet1_0"),
    _classifier("shufflenet_v2_x0_5"),
    _classifier("efficientnet_b0"),
    _classifier("vit_b_16", image_size=64),
    _classifier("swin_t"),
    _classifier("googlenet", aux_logits=False, init_weights=True),
    _classifier("regnet_y_400mf"),
    _classifier("maxvit_t", (224, 224)),
    _classifier("deeplabv3_mobilenet_v3_large", dynamic_hw=True, weights_backbone=None, aux_loss=False),
    _classifier("lraspp_mobilenet_v3_large", dynamic_hw=True, input_name="input", weights_backbone=None),
    Case("raft_small", "torchvision", _tv("raft_small"), _raft_inputs,
         {"image1": _RAFT_AXES, "image2": _RAFT_AXES}),
    _detector_case("fasterrcnn_mobilenet_v3_large_320_fpn", ("rpn.head", "roi_heads.box_head", "roi_heads.box_predictor"), **RCNN),
    _detector_case("ssdlite320_mobilenet_v3_large", ("head",), **ONE_STAGE),
    _detector_case("retinanet_resnet50_fpn", ("head",), **ONE_STAGE),
    _detector_case("maskrcnn_resnet50_fpn", ("rpn.head", "roi_heads.box_head", "roi_heads.box_predictor", "roi_heads.mask_predictor"),
                   **RCNN),
    _detector_case("fcos_resnet50_fpn", ("head",), **ONE_STAGE),
]
