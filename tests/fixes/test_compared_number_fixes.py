"""A number escaped from a tensor and only compared in tests (`analyzer.fixes.escapes.
fix_compared_number`, UT201): `v = t.item()` / `float(t)` -> `t.double()`, `int(t)` ->
`t.long().double()`, so the `if` on the comparison becomes a tensor branch that the UT101
fix rewrites on the next pass. The exact text, the same eager results on inputs that take
every branch, and the fixed model exported with torch.export (strict=False) and run on
onnxruntime; the neighbours where a use is not the same on a tensor are left."""

from __future__ import annotations

import textwrap

import torch

from analyzer import check_source

from .exporting import build, check_fixed_model, does_not_export, fix_until_stable

GATE = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, tol: float = 0.75):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.tol = tol

    def forward(self, x, limit: int = 6):
        h = self.fc(x)
        peak = h.abs().max().item()
        count = int((h > 0).sum())
        spread = float(h.std())
        if peak > self.tol and not count >= limit:
            h = h * 2
        else:
            h = h - 1
        return h + (1.0 if spread < 1.5 else -1.0)
"""


def _inputs():
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(3))
    return [(x,), (x * 0.01,), (x * 5,), (-x * 5,), (x * 20,)]


def test_the_compared_numbers_stay_tensors_and_the_tests_become_tensor_selects():
    fixed, applied = fix_until_stable(GATE)
    assert "peak = h.abs().max().double()" in fixed
    assert "count = (h > 0).sum().long().double()" in fixed
    assert "spread = h.std().double()" in fixed
    assert "torch.where(torch.logical_and(peak > self.tol, torch.logical_not(count >= limit))" in fixed
    assert {d.code for d in applied} == {"UT201", "UT101"}


def test_the_inputs_take_every_branch():
    model = build(GATE)
    taken = set()
    with torch.no_grad():
        for (x,) in _inputs():
            h = model.fc(x)
            taken.add((h.abs().max().item() > 0.75 and not int((h > 0).sum()) >= 6, float(h.std()) < 1.5))
    assert taken == {(a, b) for a in (True, False) for b in (True, False)}


def test_the_fixed_model_exports_and_matches_eager_on_onnxruntime():
    assert does_not_export(GATE, _inputs())
    fixed, _ = fix_until_stable(GATE)
    check_fixed_model(GATE, fixed, _inputs())


def test_a_double_tensor_compares_as_the_python_number_does():
    # float32 values are exact in double: the comparison with a Python number is Python's
    value = torch.tensor(0.1, dtype=torch.float32)
    for c in (0.1, 0.10000000149011612, 0.1000000014901161, 1, -3):
        assert bool(value.double() < c) == (value.item() < c)
        assert bool(value.double() == c) == (value.item() == c)
    assert bool(torch.tensor(2.7).long().double() >= 2.5) == (int(torch.tensor(2.7)) >= 2.5)


def _kept(body: str) -> list:
    source = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, s):\n" + textwrap.indent(body, " " * 8)
    fixed, applied = fix_until_stable(source)
    return fixed, [d.code for d in applied]


def test_a_number_with_another_use_is_left():
    fixed, applied = _kept("peak = x.abs().max().item()\nif peak > 1.0:\n    x = x / peak\nreturn x\n")
    assert "peak = x.abs().max().item()" in fixed and applied == []
    found = [d for d in check_source(fixed, "m.py") if d.code == "UT201"]
    assert any("this one has another use" in d.suggestion for d in found)


def test_a_number_compared_with_a_tensor_is_left():
    # `s < cap` with a Python `cap` compares in `s`'s dtype (float32 rounds `cap`); a double
    # `cap` would compare in double: the truth value could change, so `cap` stays a number
    fixed, _ = _kept("cap = float(x.abs().max())\nif s.mean() < cap:\n    x = x * 2\nreturn x\n")
    assert ".double()" not in fixed
    s = torch.tensor(1.0)
    cap = torch.tensor(1.0000000001, dtype=torch.float64)
    assert bool(s < cap.item()) != bool(s < cap)  # why


def test_a_number_bound_twice_is_left():
    fixed, _ = _kept("n = x.sum().item()\nif n > 0:\n    x = x * 2\nn = s.sum().item()\nreturn x if n > 1 else -x\n")
    assert ".double()" not in fixed


def test_an_attribute_that_may_be_a_tensor_is_not_a_number():
    # `self.tol` is a tensor here: `peak` stays a number, `count` (compared with an int) does not
    fixed, _ = fix_until_stable(GATE.replace("self.tol = tol", "self.tol = torch.tensor(tol)"))
    assert "peak = h.abs().max().item()" in fixed
    assert "count = (h > 0).sum().long().double()" in fixed
