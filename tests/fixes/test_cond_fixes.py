"""UT101 fixes beyond one `if` (`analyzer.fixes.branches`, `cond`): an `elif` chain
assigning several tensors (nested `torch.cond`), a return from the middle of a function
with a tuple, a `not` of a tensor, and early returns in a helper; the fixed models proven
(eager bit for bit, torch.export and onnxruntime against eager) on inputs taking every branch."""

from __future__ import annotations

import torch

from analyzer import check_source

from .exporting import check_fixed_model, does_not_export, fix_until_stable

ELIF = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.tensor([0.5, 1.0, 2.0]))

    def forward(self, x):
        e = x.abs().mean()
        if e > 2.0:
            a = self.table[2]
            b = x * 2
        elif e < 0.5:  # quiet
            a = self.table[0]
            b = x * 3
        else:
            a = self.table[1]
            b = x
        return x * a + b
"""

MID_RETURN = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
        self.fallback = nn.Linear(4, 2)

    def forward(self, x):
        h = self.enc(x)
        score = h.sigmoid().mean()
        if score < 0.5:
            out = self.fallback(h)
            return out, score
        h = h + self.enc(h)
        out = self.head(h)
        return out, score
"""

NOT_GUARD = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        if not torch.isfinite(y).all():
            y = torch.nan_to_num(y, nan=0.0, posinf=1e4, neginf=-1e4)
        return y.softmax(-1)
"""


def test_an_elif_chain_becomes_nested_conds_over_several_passes():
    fixed, applied = fix_until_stable(ELIF)
    assert [d.code for d in applied] == ["UT101", "UT101", "UT101"]  # elif -> else/if, inner cond, outer cond
    assert "a, b = torch.cond(e > 2.0, true_fn, false_fn, (e, x))" in fixed
    assert "a, b = torch.cond(e < 0.5, true_fn_16, false_fn_16, (x,))  # quiet" in fixed
    assert check_source(fixed, "m.py") == []
    inputs = [(torch.full((2, 3), 3.0),), (torch.full((2, 3), 0.1),), (torch.full((2, 3), -1.0),)]
    assert does_not_export(ELIF, inputs)
    check_fixed_model(ELIF, fixed, inputs)


def test_a_return_from_the_middle_with_a_tuple_becomes_one_cond_returning_the_tuple():
    fixed, _ = fix_until_stable(MID_RETURN)
    assert "return out.clone(), score.clone()" in fixed
    assert "return torch.cond(score < 0.5, true_fn, false_fn, (h, score))" in fixed
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 4, generator=g)
    model_inputs = [(x,), (-x,), (5 * x,), (-5 * x,)]
    check_fixed_model(MID_RETURN, fixed, model_inputs)


def test_a_not_of_a_tensor_becomes_logical_not():
    fixed, _ = fix_until_stable(NOT_GUARD)
    assert "torch.cond(torch.logical_not(torch.isfinite(y).all()), true_fn, false_fn, (y,))" in fixed
    x = torch.randn(2, 4)
    bad = x.clone()
    bad[0, 1] = float("inf")
    check_fixed_model(NOT_GUARD, fixed, [(x,), (bad,)])


def test_an_elif_chain_with_a_branch_that_cannot_be_a_cond_is_left_as_it_is():
    source = ELIF.replace("            b = x * 3\n", "            b = x * 3\n            print(b)\n")
    found = [d for d in check_source(source, "m.py") if d.code == "UT101"]
    assert found[0].fix is None
    assert "a branch of the `elif` chain evaluates `print(b)` for its side effects" in found[0].suggestion


def test_a_result_that_may_be_none_is_not_rewritten():
    """fsmt's `make_padding_mask`: `if not mask.any(): mask = None` (a torch.cond cannot
    return None; the fix once returned `None.clone()`)."""
    source = """\
import torch
from torch import nn


def make_padding_mask(input_ids, padding_idx=1):
    padding_mask = input_ids.eq(padding_idx)
    if not padding_mask.any():
        padding_mask = None
    return padding_mask


class M(nn.Module):
    def forward(self, x):
        return make_padding_mask(x)
"""
    found = [d for d in check_source(source, "m.py") if d.code == "UT101"]
    assert found and found[0].fix is None
    assert "`padding_mask` is not a tensor after the `if`" in found[0].suggestion
