"""A list filtered by a tensor test, in a comprehension or grown in a loop, then stacked
(`analyzer.fixes.filtered`): every item stacked and selected by the stacked tests. The
exact text, the same eager results (an all-false filter still raises), and the fixed
model exported with torch.export (strict=False) and run on onnxruntime, on inputs that
keep different numbers of items."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import build, check_fixed_model, does_not_export, fix_until_stable

FILTERED = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, tokens):
        h = self.proj(tokens)
        kept = [t * 2 for t in h if t.norm() > 1.0]
        pooled = torch.stack(kept).mean(dim=0)
        rows = []
        for r in h:
            if r.sum() > 0:
                rows.append(r.relu())
        return pooled, torch.stack(rows, dim=0).sum(0), torch.tensor(len(kept))
"""


def _inputs():
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(5))
    return [(x * s,) for s in (1.0, 10.0, 0.6)]


def test_the_filtered_lists_become_masked_stacks():
    fixed, applied = fix_until_stable(FILTERED)
    assert ("        kept = torch.stack([t * 2 for t in h.unbind(0)])[torch.stack([t.norm() > 1.0 for t in h.unbind(0)])]\n"
            "        torch._check(kept.shape[0] > 0)\n"
            "        pooled = kept.mean(dim=0)\n"
            "        rows = torch.stack([r.relu() for r in h.unbind(0)])[torch.stack([r.sum() > 0 for r in h.unbind(0)])]\n"
            "        torch._check(rows.shape[0] > 0)\n"
            "        return pooled, rows.sum(0), torch.tensor(kept.shape[0])\n") in fixed
    assert {d.code for d in applied} == {"UT101"}


def test_the_inputs_keep_different_numbers_of_items():
    model = build(FILTERED)
    with torch.no_grad():
        counts = {int(model(*args)[2]) for args in _inputs()}
    assert len(counts) == 3, counts


def test_the_fixed_model_exports_and_matches_eager_on_onnxruntime():
    assert does_not_export(FILTERED, _inputs())
    fixed, _ = fix_until_stable(FILTERED)
    check_fixed_model(FILTERED, fixed, _inputs())


def test_an_empty_selection_still_raises():
    fixed, _ = fix_until_stable(FILTERED)
    with pytest.raises(RuntimeError):
        build(FILTERED)(_inputs()[0][0] * 0.3)  # no row of norm above 1
    with pytest.raises(RuntimeError):
        build(fixed)(_inputs()[0][0] * 0.3)


@pytest.mark.parametrize("body,why", [
    ("        kept = [t for t in h if t.sum() > 0]\n        return kept[0]\n", "used other than by"),
    ("        kept = [t for t in h if t.sum() > 0]\n        return len(kept)\n", "is not stacked"),
    ("        kept = [t for t in h.unbind(0) if t.sum() > 0]\n        return torch.stack(kept)\n",
     "does not iterate a name into a name"),
    ("        rows = [h[0]]\n        for r in h:\n            if r.sum() > 0:\n                rows.append(r)\n"
     "        return torch.stack(rows)\n", "is not made empty"),
])
def test_refusals_say_why(body, why):
    source = FILTERED.split("    def forward")[0] + "    def forward(self, tokens):\n        h = self.proj(tokens)\n" + body
    found = [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT101"]
    assert found and found[0].fix is None
    assert why in found[0].suggestion, found[0].suggestion
