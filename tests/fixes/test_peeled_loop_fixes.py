"""UT102 fix of a loop whose carried value is first assigned inside it (``p = ...`` in a
bisection): the first iteration runs before the ``while_loop`` (it gives ``p`` its first
value), and the loop runs from the second (``LoopPlan.peel``). Proven eager bit for bit,
with torch.export and onnxruntime, on inputs that stop at the first, a later and the
last iteration; the neighbours that cannot be peeled say why."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import build, check_fixed_model, does_not_export, fix_until_stable

BISECTION = """\
import torch
from torch import nn


def bisect(logits, n_iter: int = 12, tol: float = 1e-4):
    lo = logits.max(dim=-1, keepdim=True).values - 1.0
    dm = torch.ones_like(lo)
    for _ in range(n_iter):
        dm = dm / 2
        mid = lo + dm
        p = torch.clamp(logits - mid, min=0)
        f = p.sum(dim=-1, keepdim=True) - 1.0
        lo = torch.where(f >= 0, mid, lo)
        if (f.abs() < tol).all():
            break
    return p / p.sum(dim=-1, keepdim=True).clamp(min=1e-6)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(4, 5)

    def forward(self, x):
        return bisect(self.score(x))
"""


def _inputs():
    g = torch.Generator().manual_seed(14)
    return [(torch.randn(2, 4, generator=g),), (torch.zeros(2, 4),), (100.0 * torch.randn(2, 4, generator=g),)]


def test_a_value_first_assigned_in_the_loop_comes_from_the_first_iteration_run_before_it():
    fixed, applied = fix_until_stable(BISECTION)
    assert [d.code for d in applied] == ["UT102"]
    assert "    torch._check((loop_stop > 0).item())\n    dm = dm / 2\n" in fixed
    assert "    broke = (f.abs() < tol).all()\n    def loop_cond(_, broke, " in fixed
    assert "(torch.tensor(0 + 1), broke, " in fixed
    inputs = _inputs()
    assert does_not_export(BISECTION, inputs)
    check_fixed_model(BISECTION, fixed, inputs)


def test_no_iteration_raises_in_both():
    fixed, _ = fix_until_stable(BISECTION)
    for source, error in ((BISECTION, UnboundLocalError), (fixed, RuntimeError)):
        module = build(source)
        with pytest.raises(error):
            __import__(type(module).__module__).bisect(torch.randn(2, 5), n_iter=0)


def _ut102(source: str):
    return [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT102"][0]


@pytest.mark.parametrize("change,why", [
    (("        dm = dm / 2\n", "        dm = dm / (2 + _)\n"), "the body reads the loop variable `_`"),
    (("        p = torch.clamp(logits - mid, min=0)\n", "        p = torch.clamp(logits - mid, min=0)[:]\n"), "`p` is not a tensor by its form"),
])
def test_a_loop_that_cannot_run_its_first_iteration_before_says_why(change, why):
    found = _ut102(BISECTION.replace(*change))
    assert found.fix is None
    assert why in found.suggestion
