"""A range check on a number bounded by construction (issue 12, seeds 3 and 5:
torchvision's `adjust_saturation` / `adjust_sharpness` reached from AutoAugment): every
value that reaches `if factor < 0:` is in [0.1, 1.9], so the trace's side is eager's for
every input (`analyzer.analyses.ranges.value_ranges`). Each program marks what must be reported;
the draw itself (UT201) and the op picked at random (UT101 on `op_name == ...`) stay."""

from __future__ import annotations

import math

import pytest

from analyzer.analyses.ranges import value_ranges as vr
from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add

# The shape of torchvision's AutoAugment / RandAugment / TrivialAugmentWide: a table of
# bins keyed by op, an op and a bin drawn at random, a random sign, an `elif` chain on the
# op, and the validity check in a helper two calls down.
AUGMENT = """
    import torch
    import torch.nn as nn

    def adjust_saturation(img, saturation_factor: float):
        if saturation_factor < 0:{saturation}
            raise ValueError("saturation_factor is not non-negative.")
        return img * saturation_factor

    def adjust_hue(img, hue_factor: float):
        if not (-0.5 <= hue_factor <= 0.5):{hue}
            raise ValueError("hue_factor is not in [-0.5, 0.5].")
        return img + hue_factor

    def _apply_op(img, op_name: str, magnitude: float):
        if op_name == "Color":  # expect: UT101
            img = adjust_saturation(img, 1.0 + magnitude)
        elif op_name == "Hue":  # expect: UT101
            img = adjust_hue(img, magnitude)
        elif op_name == "Rotate":  # expect: UT101
            img = adjust_saturation(img, {rotate})
        return img

    class Augment(nn.Module):
        def _space(self, num_bins: int):
            return {{
                "Color": (torch.linspace(0.0, {color}, num_bins), True),
                "Hue": (torch.linspace(-0.4, 0.4, num_bins), False),
                "Rotate": (torch.linspace(0.0, 30.0, num_bins), True),
                "Identity": (torch.tensor(0.0), False),
            }}

        def forward(self, img: torch.Tensor) -> torch.Tensor:
            op_meta = self._space(10)
            op_index = int(torch.randint(len(op_meta), (1,)).item())  # expect: UT201
            op_name = list(op_meta.keys())[op_index]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[torch.randint(len(magnitudes), (1,))].item()) if magnitudes.ndim > 0 else 0.0  # expect: UT201
            if signed and torch.randint(2, (1,)):  # expect: UT101
                magnitude *= -1.0{rebind}
            return _apply_op(img, op_name, magnitude)
"""


def augment(saturation="", hue="", color="0.9", rotate="1.0", rebind=""):
    return AUGMENT.format(saturation=saturation, hue=hue, color=color, rotate=rotate, rebind=rebind)


# The factor of "Color" is 1 + m for |m| <= 0.9 (the bins of linspace(0, 0.9), either sign),
# the hue one of linspace(-0.4, 0.4): both checks are static. "Rotate" passes a constant.
case("augment-factor-in-range", augment())

# Passed by keyword, in another order: the range is keyed on the parameter it binds.
case("augment-keywords", augment().replace("_apply_op(img, op_name, magnitude)",
                                           "_apply_op(img, magnitude=magnitude, op_name=op_name)"))

# Bins up to 1.5 with a random sign: 1 + m can be negative, and the check is data.
case("augment-bins-cross-the-bound", augment(saturation="  # expect: UT101", color="1.5"))

# "Rotate"'s bins (up to 30 either sign) reach the same check: its factor is data.
case("augment-other-key-out-of-range", augment(saturation="  # expect: UT101", rotate="1.0 + magnitude"))

# The op name rebound after the lookup: `magnitude` is no longer the bin of `op_name`'s entry.
case("augment-key-rebound", augment(saturation="  # expect: UT101", hue="  # expect: UT101",
                                    rebind='\n            op_name = list(op_meta.keys())[op_index - 1]'))

# A factor computed from the tensor's values has no range: the check is data.
case("factor-from-tensor-values", """
    import torch
    import torch.nn as nn

    def adjust_brightness(img, brightness_factor: float):
        if brightness_factor < 0:  # expect: UT101
            raise ValueError("brightness_factor is not non-negative.")
        return img * brightness_factor

    class Auto(nn.Module):
        def forward(self, img: torch.Tensor) -> torch.Tensor:
            factor = 1.0 + img.mean().item()  # expect: UT201
            return adjust_brightness(img, factor)
""")

# Ranges through `abs`, `min`, `max`, `int()`, a constant key, unary minus and `arange`;
# a sum carried around a loop has none (it grows with the passes), nor has `torch.arange(n)`
# of an unknown `n` an upper end.
case("range-arithmetic", """
    import torch
    import torch.nn as nn

    class Ops(nn.Module):
        def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
            bins = {"a": torch.linspace(-2.0, 1.0, 5), "b": torch.arange(3)}
            m = bins["a"][torch.randint(5, (1,))].item()  # expect: UT201
            if abs(m) > 2.5:
                x = x + 1
            if min(m, 0.5) > 0.5:
                x = x + 2
            if max(-m, 3.0) < 3.0:
                x = x + 3
            if int(m) >= 2:
                x = x + 4
            k = bins["b"][torch.randint(3, (1,))].item()  # expect: UT201
            if k * 2 - 1 > 3:
                x = x + 5
            if k > 1:  # expect: UT101
                x = x + 6
            j = torch.arange(n)[torch.randint(2, (1,))].item()  # expect: UT201
            if j >= 0:
                x = x + 7
            if j < 100:  # expect: UT101
                x = x + 8
            total = 0.0
            for _ in range(n):
                total = total + m
            if total < 1000.0:  # expect: UT101
                x = x + 9
            return x
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)


def test_join_is_casewise_for_one_key_and_the_hull_otherwise():
    on = ("dict", "f.py", 1, 0)
    a = vr.Keyed(on, (("x", (0.0, 1.0)), ("y", (5.0, 6.0))))
    b = vr.Keyed(on, (("x", (-1.0, 0.0)),))
    joined = vr.join_ranges(a, b)
    assert vr.described(joined) == "{x: [-1, 1], y: [5, 6]}"
    assert vr.plain(joined) == (-1.0, 6.0)
    assert vr.join_ranges(a, (10.0, 10.0)) == vr.Keyed(on, (("x", (0.0, 10.0)), ("y", (5.0, 10.0))), (10.0, 10.0))
    assert vr.join_ranges(a, None) is None  # unknown absorbs
    other = vr.Keyed(("dict", "f.py", 2, 0), (("x", (3.0, 4.0)),))
    assert vr.join_ranges(a, other) == (0.0, 6.0)


def test_arithmetic_keeps_the_ends_and_infinity():
    assert vr.arithmetic("*", (-1.0, 2.0), (-3.0, -3.0)) == (-6.0, 3.0)
    assert vr.arithmetic("-", (0.0, math.inf), (1.0, 1.0)) == (-1.0, math.inf)
    assert vr.arithmetic("*", (0.0, math.inf), (0.0, 0.0)) == (0.0, 0.0)
    assert vr.arithmetic("/", (1.0, 2.0), (1.0, 1.0)) is None
    assert vr.absolute((-3.0, 1.0)) == (0.0, 3.0)
    assert vr.truncated((-1.5, 2.7)) == (-1.0, 2.0)
