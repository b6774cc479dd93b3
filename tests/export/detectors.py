"""torchvision's detectors with seeded random weights, for the export tests and for
`untrace verify` (`benchmarks/`): two images of different sizes, each with dynamic height
and width, resized by the model to at most 160 pixels (ssdlite always to 320x320).

With the library's initialisation the class logits are all near zero and every detection
ties in score, so that which box survives NMS and top-k depends on tie order, which no two
sorts share. Every convolution and linear layer is re-initialised (seeded, normal with
variance `gain / fan_in`) so that scores differ; `gain` and the score threshold are chosen
per model so that scores are neither saturated nor all below the threshold, and each image
keeps at most 20 detections (the 20 best are well apart in score)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from benchmarks.zoo import torchvision_ops


@dataclass(frozen=True)
class Detector:
    name: str
    gain: float
    score_thresh: float | None = None  # None: the model's own


DETECTORS = {d.name: d for d in (
    Detector("ssdlite320_mobilenet_v3_large", 1.5),
    Detector("retinanet_resnet50_fpn", 0.8, 0.8),
    Detector("fcos_resnet50_fpn", 0.5),
    Detector("fasterrcnn_mobilenet_v3_large_320_fpn", 0.5),
    Detector("maskrcnn_resnet50_fpn", 0.5),
)}

DYNAMIC = {"images": [{1: "height0", 2: "width0"}, {1: "height1", 2: "width1"}]}


def build(name: str) -> torch.nn.Module:
    torchvision_ops.install()
    import torchvision

    spec = DETECTORS[name]
    torch.manual_seed(0)
    resize = {} if name.startswith("ssdlite") else {"min_size": 128, "max_size": 160}
    model = torchvision.models.get_model(name, weights=None, weights_backbone=None, num_classes=5, **resize)
    generator = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
                std = math.sqrt(spec.gain / module.weight[0].numel())
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * std)
                if module.bias is not None:
                    module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.1)
    holder = getattr(model, "roi_heads", model)
    holder.detections_per_img = 20
    if spec.score_thresh is not None:
        holder.score_thresh = spec.score_thresh
    return model.eval()


def images(sizes, seed: int, scales=None) -> list[torch.Tensor]:
    """One image per (height, width), each `randn * scale + shift` for its (scale, shift)."""
    scales = scales or [(1.0, 0.0)] * len(sizes)
    return [torch.randn(3, h, w, generator=torch.Generator().manual_seed(seed + i)) * a + b
            for i, ((h, w), (a, b)) in enumerate(zip(sizes, scales))]


def example() -> tuple:
    return (images([(120, 150), (140, 110)], 1),)


def checks() -> list[tuple]:
    """Other values, other sizes, and for retinanet's thresholds inputs that take every side
    of batched_nms: few boxes, none, and over a thousand (the loop over categories)."""
    return [
        (images([(120, 150), (140, 110)], 11),),
        (images([(100, 130), (150, 150)], 21),),
        (images([(120, 150), (140, 110)], 30, [(1.0, 0.0), (0.0, 0.0)]),),
        (images([(100, 130), (150, 150)], 40, [(1.0, 3.0), (3.0, 0.0)]),),
    ]
