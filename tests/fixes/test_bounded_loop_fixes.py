"""A `range(n)` loop, `n` from tensor values, whose body calls `self.layers[i]`
(`analyzer.fixes.bounded`): every iteration up to `len(self.layers)` runs and
`torch.where` keeps what the first `n` made. The exact text, the same eager results, the
fixed model exported with torch.export (strict=False) and run on onnxruntime on inputs
that take every trip count (0 to all layers), and the refusals."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import build, check_fixed_model, does_not_export, fix_until_stable

HEAD = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.controller = nn.Linear(4, 1)
        self.layers = nn.ModuleList([nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(3)])
        self.norms = nn.ModuleList([nn.LayerNorm(4) for _ in range(3)])
"""

DEPTH = HEAD + """
    def forward(self, x):
        budget = torch.sigmoid(self.controller(x).mean()) * 3
        for i in range(int(budget.round())):
            h = self.layers[i](x)
            x = x + h
            x = x * 0.5
        return x
"""


def _inputs():
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(3))
    return [(x * s,) for s in (0.0, 40.0, -40.0, -2.0)]


def test_the_loop_runs_to_the_module_lists_length_masked():
    fixed, applied = fix_until_stable(DEPTH)
    assert ("        loop_stop = torch.scalar_tensor(torch.sym_int(budget.round().item()), dtype=torch.long)\n"
            "        torch._check((loop_stop <= len(self.layers)).item())\n"
            "        for i in range(len(self.layers)):\n"
            "            h = self.layers[i](x)\n"
            "            x = torch.where(i < loop_stop, x + h, x)\n"
            "            x = torch.where(i < loop_stop, x * 0.5, x)\n") in fixed
    assert "UT102" in {d.code for d in applied}


def test_every_trip_count_is_taken_by_the_inputs():
    model = build(DEPTH)
    with torch.no_grad():
        counts = {int((torch.sigmoid(model.controller(x).mean()) * 3).round()) for (x,) in _inputs()}
    assert counts == {0, 1, 2, 3}


def test_the_fixed_model_exports_and_matches_eager_on_onnxruntime():
    assert does_not_export(DEPTH, _inputs())
    fixed, _ = fix_until_stable(DEPTH)
    check_fixed_model(DEPTH, fixed, _inputs())


def test_a_count_past_the_list_still_raises():
    fixed, _ = fix_until_stable(DEPTH.replace("* 3", "* 9"))
    model = build(fixed)
    with pytest.raises(RuntimeError):
        model(-40.0 * torch.randn(2, 4, generator=torch.Generator().manual_seed(3)))


@pytest.mark.parametrize("body,why", [
    ("        for i in range(int(x.sum())):\n            x = x + self.layers[i](x) * i\n        return x\n",
     "used other than as the index of `self.layers`"),
    ("        for i in range(int(x.sum())):\n            x = self.norms[i](self.layers[i](x))\n        return x\n",
     "more than one module list"),
    ("        for i in range(int(x.sum())):\n            x = self.layers[i](x)\n            print(x)\n        return x\n",
     "evaluates `print(x)`"),
    ("        for i in range(int(x.sum())):\n            x = self.layers[i](x)\n            if x.sum() > 0:\n"
     "                break\n        return x\n", "leaves the loop"),
])
def test_refusals_say_why(body, why):
    source = HEAD + "\n    def forward(self, x):\n" + body
    found = [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT102"]
    assert found and found[0].fix is None
    assert why in found[0].suggestion, found[0].suggestion
