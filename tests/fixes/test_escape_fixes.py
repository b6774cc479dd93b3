"""UT201 fixes (`analyzer.fixes.escapes`): ``int(t)`` / ``float(t)`` as
``torch.sym_int(t.item())`` / ``torch.sym_float(t.item())``, the unbacked-SymInt form
torch.export keeps symbolic; the fixed models proven (eager bit for bit, torch.export and
onnxruntime against eager) on inputs that give other sizes than the example's."""

from __future__ import annotations

import textwrap

import torch

from analyzer import check_source

from .exporting import check_fixed_model, does_not_export, fix_until_stable

SLICE = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, scores):
        cut = int(scores.argmax()) + 1
        return x[:cut] * 2
"""

SIZES = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)
        self.max_keep = 4

    def forward(self, x, lengths, scores):
        total = int(lengths.sum())
        out = x.new_zeros(total, 3)
        k = min(int((scores > 0).sum()), self.max_keep)
        top, idx = scores.topk(k)
        start = int(lengths.min())
        window = x.narrow(0, start, 2)
        return out + self.proj(x).sum(), top, idx, self.proj(window)
"""

FLOAT = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x):
        peak = float(x.abs().max())
        steps = int(x.sum() * 0.5)
        return x / peak, x[: max(steps, 0)]
"""


def test_int_of_a_tensor_becomes_sym_int_of_item():
    fixed, applied = fix_until_stable(SLICE)
    assert [d.code for d in applied] == ["UT201"]
    assert "cut = torch.sym_int(scores.argmax().item()) + 1" in fixed
    remaining = check_source(fixed, "m.py")
    assert [(d.code, d.line) for d in remaining] == [("UT201", 7)]  # still a Python number for the legacy tracer
    assert remaining[0].fix is None


def test_a_slice_bound_from_int_exports_and_matches_eager():
    inputs = [(torch.randn(6, 2), torch.tensor([0.1, 0.9, 0.3, 0.0, 0.2, 0.5])),
              (torch.randn(6, 2), torch.tensor([0.9, 0.1, 0.3, 0.0, 0.2, 0.5])),
              (torch.randn(6, 2), torch.tensor([0.1, 0.1, 0.3, 0.0, 0.2, 0.9]))]
    assert does_not_export(SLICE, inputs)
    fixed, _ = fix_until_stable(SLICE)
    check_fixed_model(SLICE, fixed, inputs)


def test_sizes_from_int_export_and_match_eager():
    fixed, applied = fix_until_stable(SIZES)
    assert len(applied) == 3
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 4, generator=g)
    inputs = [(x, torch.tensor([2, 3]), torch.randn(6, generator=g)),
              (x, torch.tensor([5, 1]), -torch.rand(6, generator=g)),
              (x, torch.tensor([0, 7]), torch.rand(6, generator=g))]
    assert does_not_export(SIZES, inputs)
    check_fixed_model(SIZES, fixed, inputs)


def test_float_becomes_sym_float_and_int_of_a_float_tensor_truncates_as_before():
    fixed, _ = fix_until_stable(FLOAT)
    assert "peak = torch.sym_float(x.abs().max().item())" in fixed
    assert "steps = torch.sym_int((x.sum() * 0.5).item())" in fixed
    g = torch.Generator().manual_seed(2)
    x = torch.randn(5, generator=g)
    inputs = [(x.abs() + 1.0,), (-x.abs() - 0.4,), (x.abs() * 0.3,)]
    check_fixed_model(FLOAT, fixed, inputs, onnx=False)


def test_bool_and_tolist_are_not_rewritten():
    source = textwrap.dedent("""\
        import torch
        from torch import nn


        class M(nn.Module):
            def forward(self, x):
                sizes = x.sum(-1).long().tolist()
                flag = bool(x.any())
                return x, sizes, flag
    """)
    found = [d for d in check_source(source, "m.py") if d.code == "UT201"]
    assert len(found) == 2 and all(d.fix is None for d in found)


FLAG = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad_id = 0

    def forward(self, tokens, logits):
        has_padding = bool((tokens == self.pad_id).any())
        if has_padding:
            logits = logits.masked_fill(tokens == self.pad_id, -1e4)
        return logits.softmax(-1)
"""


def test_a_bool_only_tested_for_truth_stays_a_tensor_and_its_if_becomes_a_cond():
    fixed, applied = fix_until_stable(FLAG)
    assert [d.code for d in applied] == ["UT201", "UT101"]
    assert "has_padding = (tokens == self.pad_id).any()" in fixed
    assert "logits = torch.cond(has_padding, true_fn, false_fn, (logits, tokens))" in fixed
    logits = torch.randn(2, 4)
    inputs = [(torch.tensor([[1, 2, 0, 0], [3, 0, 0, 0]]), logits), (torch.tensor([[1, 2, 3, 4], [4, 3, 2, 1]]), logits)]
    assert does_not_export(FLAG, inputs)
    check_fixed_model(FLAG, fixed, inputs)


def test_a_bool_used_as_a_value_is_left_as_it_is():
    source = FLAG.replace("return logits.softmax(-1)", "return logits.softmax(-1), has_padding")
    found = [d for d in check_source(source, "m.py") if d.code == "UT201"]
    assert found[0].fix is None
    assert "`has_padding` is used as more than a truth test" in found[0].suggestion
