"""torchvision's compiled operators, defined in Python, for the machines where its `_C.so`
cannot load.

The torchvision wheel that matches our torch (0.28.0 for torch 2.13.0) is a CUDA build,
and its extension library does not load beside the CPU torch. Without it `import
torchvision` fails at once: `_meta_registrations` registers fake kernels for
`torchvision::nms` and `torchvision::qnms`, operators that only the extension defines.
Every other operator's fake kernel is registered only when the extension loaded, and the
Python ops (`roi_align`, `roi_pool`, ...) fall back to their pure-PyTorch versions then.

So we define the two operators the import needs, with a CPU kernel for `nms` that follows
torchvision's own (`csrc/ops/cpu/nms_kernel.cpp`: stable sort by descending score, greedy
suppression of every later box whose IoU with a kept one is above the threshold), and
tell `torchvision.ops.nms` that the operator is there. The legacy tracer then sees
`torchvision::nms` and uses torchvision's own ONNX symbolic (NonMaxSuppression).

    from benchmarks.zoo import torchvision_ops
    torchvision_ops.install()   # before the first `import torchvision` (timm imports it)
"""

from __future__ import annotations

import sys

import torch

_LIBRARY: torch.library.Library | None = None


def _nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    if dets.numel() == 0:
        return torch.empty((0,), dtype=torch.long, device=dets.device)
    x1, y1, x2, y2 = dets.unbind(1)
    areas = (x2 - x1) * (y2 - y1)
    order = scores.sort(stable=True, descending=True).indices
    suppressed = torch.zeros(dets.shape[0], dtype=torch.bool)
    keep = []
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        xx1 = torch.maximum(x1[i], x1)
        yy1 = torch.maximum(y1[i], y1)
        xx2 = torch.minimum(x2[i], x2)
        yy2 = torch.minimum(y2[i], y2)
        inter = (xx2 - xx1).clamp(min=0) * (yy2 - yy1).clamp(min=0)
        iou = inter / (areas[i] + areas - inter)
        suppressed |= iou > iou_threshold
    return torch.tensor(keep, dtype=torch.long, device=dets.device)


def _has_ops() -> bool:
    # A def, not a lambda: torchvision's `_script_if_tracing` compiles the functions that
    # call it with TorchScript while the legacy tracer runs.
    return True


def _unavailable(*_args, **_kwargs):
    raise RuntimeError("torchvision::qnms (quantized NMS) has no stand-in kernel")


def install() -> None:
    """Define the operators (once per process) and make `torchvision.ops.nms` use them.
    Call before torchvision is first imported; a no-op when the real extension loaded."""
    global _LIBRARY
    if _LIBRARY is not None:
        return
    if "torchvision" in sys.modules:
        raise RuntimeError("torchvision_ops.install() must run before torchvision is imported")
    if _extension_loads():
        _LIBRARY = torch.library.Library("torchvision", "FRAGMENT")
        return
    library = torch.library.Library("torchvision", "DEF")
    library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    library.define(
        "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
        "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor")
    library.impl("nms", _nms, "CPU")
    library.impl("qnms", _unavailable, "CPU")
    library.impl("roi_align", _roi_align, "CPU")
    torch.library.register_fake("torchvision::roi_align", _roi_align_fake, lib=library)
    _LIBRARY = library
    import torchvision.extension

    # `_assert_has_ops` reads this module global. roi_align imported `_has_ops` by name:
    # without the operator it would call its torch.compile'd fallback, which neither
    # tracer can enter. The other ops keep False and use their pure-PyTorch fallbacks.
    torchvision.extension._has_ops = _has_ops
    # (`torchvision.ops.roi_align` names the function: the package re-exports it.)
    sys.modules["torchvision.ops.roi_align"]._has_ops = _has_ops


def _roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    # torchvision's own transcription of its kernel, without the torch.compile wrapper.
    from torchvision.ops.roi_align import _roi_align as compiled

    return compiled.__wrapped__(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)


def _roi_align_fake(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    return input.new_empty((rois.shape[0], input.shape[1], pooled_height, pooled_width))


def _extension_loads() -> bool:
    """Whether torchvision's compiled library loads here, found without importing
    torchvision (whose import is what fails when it does not)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("torchvision is not installed (make setup installs it)")
    library = next(iter(sorted(Path(spec.origin).parent.glob("_C*.so"))), None)
    if library is None:
        return False
    try:
        torch.ops.load_library(str(library))
    except (OSError, RuntimeError):
        return False
    return True
