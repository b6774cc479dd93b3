"""Python numbers chosen by a tensor test (`analyzer.fixes.numbers`) -> `torch.sym_ite`, and
a tensor `and` / `or` only tested for truth -> `torch.logical_and` / `logical_or`: the exact
text, the same eager results, and the fixed model exported with torch.export (strict=False)
and run on onnxruntime, on inputs that take both sides."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import check_fixed_model, does_not_export, fix_until_stable

HEAD = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.sharp, self.soft = 0.5, 2.0
        self.hard_passes, self.easy_passes = 3, 1
"""

TERNARY = HEAD + """
    def forward(self, x):
        h = self.fc(x)
        tau = self.sharp if h.mean() > 0 else self.soft
        return torch.softmax(h / tau, dim=-1)
"""

PASSES = HEAD + """
    def forward(self, x):
        h = self.fc(x)
        if h.abs().mean() > 1.0:
            passes = self.hard_passes
            gain = 0.1
        else:
            passes = self.easy_passes
            gain = 1.5
        for _ in range(passes):
            h = h + 0.5 * torch.tanh(self.fc(h))
        return h * gain
"""

TRUTH = HEAD + """
    def forward(self, x):
        usable = x.abs().max() < 5.0 and x.std() > 0.05
        scale = 2.0 if usable else 1.0
        return self.fc(x * scale)
"""

X = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))


def _ut101(source):
    return [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT101"]


def test_a_ternary_of_numbers_becomes_sym_ite():
    fixed, applied = fix_until_stable(TERNARY)
    assert "tau = torch.sym_ite((h.mean() > 0).item(), self.sharp, self.soft)" in fixed
    assert {d.code for d in applied} == {"UT101"}


def test_an_if_choosing_numbers_becomes_sym_ite_per_name():
    fixed, _ = fix_until_stable(PASSES)
    assert ("chosen_14 = (h.abs().mean() > 1.0).item()\n"
            "        passes = torch.sym_ite(chosen_14, self.hard_passes, self.easy_passes)\n"
            "        gain = torch.sym_ite(chosen_14, 0.1, 1.5)\n") in fixed
    assert "torch._higher_order_ops.while_loop(" in fixed  # the loop over range(passes), by the UT102 fix


def test_a_tensor_and_tested_only_for_truth_becomes_logical_and():
    fixed, _ = fix_until_stable(TRUTH)
    assert "usable = torch.logical_and(x.abs().max() < 5.0, x.std() > 0.05)" in fixed
    assert "scale = torch.sym_ite(usable.item(), 2.0, 1.0)" in fixed


@pytest.mark.parametrize("source,inputs", [
    (TERNARY, [(X + 3,), (X - 3,)]),
    (PASSES, [(0.01 * X,), (30.0 * X,)]),
    (TRUTH, [(X,), (torch.full((3, 4), 0.5),), (X * 10,)]),
], ids=["ternary", "if-then-range", "and-truth"])
def test_the_fixed_model_exports_and_matches_eager_on_onnxruntime(source, inputs):
    assert does_not_export(source, inputs)
    fixed, _ = fix_until_stable(source)
    check_fixed_model(source, fixed, inputs)


@pytest.mark.parametrize("body,why", [
    ("        t = 1 if x.mean() > 0 else 0.5\n        return x * t\n", "numbers of two types"),
    ("        t = None if x.mean() > 0 else 0.5\n        return x, t\n", "not a number"),
    ("        t = self.pick() if x.mean() > 0 else 0.5\n        return x * t\n", "may have side effects"),
    ("        if x.mean() > 0:\n            n = 2\n            m = n + 1\n        else:\n            n = 3\n"
     "            m = 1\n        return x * n * m\n", "reads a name the branches assign"),
    ("        ok = x.min() > 0 and x.max() < 9\n        return ok\n", "returns one of its operands"),
    ("        ok = x.min() > 0 and self.flag\n        if ok:\n            x = -x\n        return x\n",
     "an operand is not a tensor"),
])
def test_refusals_say_why(body, why):
    source = HEAD + "\n    def forward(self, x):\n" + body
    found = _ut101(source)
    assert found and found[0].fix is None
    assert why in found[0].suggestion, found[0].suggestion
