"""Where an escaped number goes (`analyzer.fixes.escapes`, UT201): `a, b = t.tolist()` ->
the rows of `t.unbind(0)`, and the builtin `max`/`min` of an `.item()` number ->
`torch.sym_max`/`sym_min`. The exact text, the same eager results, and the fixed model
exported with torch.export (strict=False) and run on onnxruntime."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import build, check_fixed_model, does_not_export, fix_until_stable

QUANT = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4, bias=False)

    def forward(self, x):
        h = self.fc(x)
        amax = h.abs().max().item()
        scale = max(amax, 1e-8) / 127
        q = torch.clamp(torch.round(h / scale), -127, 127)
        lo, hi = torch.stack([q.min(), q.max()]).tolist()
        floor = min(amax, 0.5)
        return q * scale, torch.tensor([lo, hi]), h - floor
"""


def _inputs():
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    return [(x * 0.01,), (x * 1e-12,), (x * 40,)]  # amax below 1e-8, below and above 0.5


def test_the_escapes_uses_are_rewritten():
    fixed, applied = fix_until_stable(QUANT)
    assert "scale = torch.sym_max(amax, 1e-8) / 127" in fixed
    assert "floor = torch.sym_min(amax, 0.5)" in fixed
    assert "lo, hi = [v.tolist() for v in torch.stack([q.min(), q.max()]).unbind(0)]" in fixed
    assert {d.code for d in applied} == {"UT201"}


def test_the_inputs_take_both_sides_of_max_and_min():
    model = build(QUANT)
    with torch.no_grad():
        amaxes = [model.fc(x).abs().max().item() for (x,) in _inputs()]
    assert any(a < 1e-8 for a in amaxes) and any(1e-8 < a < 0.5 for a in amaxes) and any(a > 0.5 for a in amaxes)


def test_the_fixed_model_exports_and_matches_eager_on_onnxruntime():
    assert does_not_export(QUANT, _inputs())
    fixed, _ = fix_until_stable(QUANT)
    check_fixed_model(QUANT, fixed, _inputs())


def test_tolist_of_rows_gives_the_same_nested_lists():
    t = torch.arange(6.0).reshape(2, 3)
    a, b = [v.tolist() for v in t.unbind(0)]
    assert [a, b] == t.tolist()


@pytest.mark.parametrize("body,why", [
    ("        sizes = x.long().tolist()\n        return torch.split(x, sizes)\n", "a list of sizes has no symbolic form"),
    ("        n = x.sum().item()\n        n = n + 1\n        return x * max(n, 1.0)\n", "already what torch.export keeps"),
])
def test_escapes_left_say_why(body, why):
    source = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n" + body
    found = [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT201"]
    assert found and all(d.fix is None for d in found)
    assert any(why in d.suggestion for d in found), [d.suggestion for d in found]


TRIM = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)

    def forward(self, ids, mask):
        max_len = int(mask.sum(dim=1).max().item())
        scale = float(mask.float().mean().item())
        ids = ids[:, :max_len]
        mask = mask[:, :max_len]
        h = self.embed(ids) * mask.unsqueeze(-1) * scale
        return h.sum(dim=1)
"""


def test_a_cast_of_item_becomes_the_symbolic_cast_and_exports():
    fixed, applied = fix_until_stable(TRIM)
    assert [d.code for d in applied] == ["UT201", "UT201"]
    assert "max_len = torch.sym_int(mask.sum(dim=1).max().item())" in fixed
    assert "scale = torch.sym_float(mask.float().mean().item())" in fixed
    ids = torch.arange(12).reshape(2, 6) % 10
    inputs = [(ids, torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0]])),  # the widest first: the example
              (ids, torch.tensor([[1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]])),
              (ids, torch.tensor([[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]))]
    assert does_not_export(TRIM, inputs)
    check_fixed_model(TRIM, fixed, inputs)


def test_a_cast_that_is_another_function_in_the_module_is_left():
    shadowed = TRIM.replace("import torch\n", "import torch\nint = round\n", 1)
    found = [d for d in check_source(shadowed, "m.py") if d.code == "UT201" and "max()" in d.message]
    assert found and found[0].fix is None
