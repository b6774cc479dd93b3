"""UT102 fix of a loop over ``range(n)``, ``n`` from tensor values, that grows a list and
indexes one tensor axis by its variable (``x[:, t]``): past ``x.size(1)`` the original
raises, so every iteration up to it runs, the carried values keep what the first ``n``
made (``torch.where``), and the stacked list is cut to ``n`` items (``bounded.masked_range``
with ``by_axis``). Proven eager bit for bit, with torch.export and onnxruntime, on trip
counts from one to the axis' length; the neighbours without a bound stay unfixed."""

from __future__ import annotations

import textwrap

import torch

from analyzer import check_source

from .exporting import check_fixed_model, does_not_export, fix_until_stable

UNROLLED = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 6)

    def forward(self, inputs, lengths):
        hx = inputs.new_zeros(inputs.size(0), 6)
        outputs = []
        for t in range(int(lengths.max())):
            mask = (t < lengths).unsqueeze(-1).to(inputs.dtype)
            hx = mask * self.cell(inputs[:, t], hx) + (1 - mask) * hx
            outputs.append(hx * mask)
        return torch.stack(outputs, dim=1), hx
"""


def _inputs():
    x = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(25))
    return [(x, torch.tensor([6, 3])), (x, torch.tensor([2, 1])), (x, torch.tensor([4, 4])), (x, torch.tensor([1, 1]))]


def test_a_list_grown_over_a_data_dependent_range_indexing_an_axis_is_masked_and_cut():
    fixed, applied = fix_until_stable(UNROLLED)
    assert "UT102" in [d.code for d in applied]
    assert "torch._check((loop_stop <= inputs.size(1)).item())" in fixed
    assert "torch._check((loop_stop > 0).item())" in fixed  # no items: the original's stack raises
    assert "for t in range(inputs.size(1)):" in fixed
    assert "hx = torch.where(t < loop_stop, " in fixed
    assert "torch.stack(outputs, dim=1).narrow(1, 0, loop_stop.clamp(min=0).item())" in fixed
    inputs = _inputs()
    assert does_not_export(UNROLLED, inputs)
    check_fixed_model(UNROLLED, fixed, inputs)


def test_no_trip_count_raises_as_the_original_does():
    fixed, _ = fix_until_stable(UNROLLED)
    from .exporting import build
    x = torch.randn(2, 6, 4)
    for lengths in (torch.tensor([0, 0]), torch.tensor([7, 1])):  # stack of nothing; past the axis
        for source in (UNROLLED, fixed):
            try:
                build(source)(x, lengths)
            except (RuntimeError, IndexError):
                continue
            raise AssertionError(f"{lengths} did not raise")


def _ut102(source: str):
    return [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT102"][0]


def test_without_an_axis_bound_or_with_the_counter_in_arithmetic_it_stays_unfixed():
    no_index = UNROLLED.replace("self.cell(inputs[:, t], hx)", "self.cell(inputs.mean(1), hx)")
    assert _ut102(no_index).fix is None
    arithmetic = UNROLLED.replace("outputs.append(hx * mask)", "outputs.append(hx * mask * t)")
    found = _ut102(arithmetic)
    assert found.fix is None
    assert "used other than as the index of `inputs`" in found.suggestion
