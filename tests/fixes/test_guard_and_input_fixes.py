"""Two rewrites that drop what only torch.export cannot take, proven as the other fix tests
(the exact text, the same eager results, the fixed model exported with torch.export
(strict=False) and run on onnxruntime, on inputs that take every branch):

- `if m.any():` guarding only writes through `m` (`analyzer.fixes.guards`, UT101) -> the
  writes alone (a write through an empty mask writes nothing);
- a write into a `forward` input (`analyzer.fixes.inputs`, UT301) -> the input copied at
  the top of `forward`.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import _quiet, build, check_fixed_model, does_not_export, fix_until_stable

MOE = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 3)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4)) for _ in range(3)])

    def forward(self, x):
        weight, idx = torch.softmax(self.router(x), dim=-1).max(dim=-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            mask = idx == i
            if mask.any():  # skip idle experts
                out[mask] = weight[mask, None] * expert(x[mask])
        return out
"""

WRITES = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, valid):
        \"\"\"Zero the padding, then scale.\"\"\"
        x[~valid] = 0.0
        x.mul_(0.5)
        return self.fc(x)
"""


def _ut(source, code):
    return [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == code]


def _moe_inputs():
    model = build(MOE)
    chosen = []
    for seed in range(200):
        x = torch.randn(6, 4, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            used = set(torch.softmax(model.router(x), dim=-1).argmax(-1).tolist())
        if len(used) < 3 and not chosen or len(used) == 3 and len(chosen) == 1:
            chosen.append((x,))
        if len(chosen) == 2:
            return chosen
    raise AssertionError("no inputs that leave an expert idle and use every expert")


def test_the_guard_of_a_masked_write_is_dropped_and_its_comment_kept():
    fixed, applied = fix_until_stable(MOE)
    assert ("            mask = idx == i\n            # skip idle experts\n"
            "            out[mask] = weight[mask, None] * expert(x[mask])\n") in fixed
    assert {d.code for d in applied} == {"UT101"}


def test_the_unguarded_model_exports_and_matches_eager_with_an_idle_expert_and_without():
    inputs = _moe_inputs()
    assert does_not_export(MOE, inputs)
    fixed, _ = fix_until_stable(MOE)
    check_fixed_model(MOE, fixed, inputs)


@pytest.mark.parametrize("body,why", [
    ("        if m.any():\n            x[m] = x.sum()\n        return x\n", "reads `x` other than through `[m]`"),
    ("        if m.any():\n            x[m] = 0.0\n        else:\n            x[0] = 1.0\n        return x\n",
     "has an `else`"),
    ("        if m.any():\n            x[~m] = 0.0\n        return x\n", "is not written through the mask `m`"),
])
def test_guards_kept_say_why(body, why):
    source = ("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
              "        x = x.clone()\n        m = x > 0\n" + body)
    found = _ut(source, "UT101")
    assert found and found[0].fix is None
    assert why in found[0].suggestion, found[0].suggestion


def test_a_written_input_is_copied_once_after_the_docstring():
    fixed, applied = fix_until_stable(WRITES)
    assert ('        """Zero the padding, then scale."""\n        x = x.clone()\n        x[~valid] = 0.0\n'
            "        x.mul_(0.5)\n") in fixed
    assert [d.code for d in applied] == ["UT301", "UT301"]  # one fix shared by both sites
    assert fixed.count(".clone()") == 1


def test_the_copying_model_exports_matches_eager_and_leaves_the_callers_tensor_alone():
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    cases = [(x, torch.tensor([True, False, True])), (x * 2, torch.ones(3, dtype=torch.bool))]
    fixed, _ = fix_until_stable(WRITES)
    before, after = build(WRITES), build(fixed)
    after.load_state_dict(before.state_dict())
    with torch.no_grad():
        expected = [before(a.clone(), v) for a, v in cases]  # the original writes into its argument
        for (a, v), want in zip(cases, expected):
            mine = a.clone()
            assert torch.equal(after(mine, v), want)
            assert torch.equal(mine, a)  # the caller's tensor is left alone
    with _quiet():
        program = torch.export.export(after, (cases[0][0].clone(), cases[0][1]), strict=False).module()
        onnx_program = torch.onnx.export(after, (cases[0][0].clone(), cases[0][1]), dynamo=True, verbose=False)
    for (a, v), want in zip(cases, expected):
        torch.testing.assert_close(program(a.clone(), v), want, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(onnx_program(a.clone(), v)[0], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("source,why", [
    ("    def forward(self, x: torch.Tensor = None):\n        x[0] = 1.0\n        return x\n", "has a default"),
    ("    def forward(self, x):\n        y = x.view(-1)\n        y[0] = 1.0\n        return x\n",
     "not a plain argument of `forward`"),
])
def test_writes_kept_say_why(source, why):
    found = _ut("import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n" + source, "UT301")
    assert found and found[0].fix is None, found
    assert why in found[0].suggestion, found[0].suggestion
