"""A `while` that also stops when a counter reaches a static bound, growing a list that is
concatenated after it (`analyzer.fixes.bounded.counted_while`, then the masked-break fix
of `analyzer.fixes.loops`, which now cuts a `torch.cat` too): the exact text, the same
eager results, and the fixed model exported with torch.export (strict=False) and run on
onnxruntime, on inputs that stop at once, after a few steps, and at the bound."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import build, check_fixed_model, does_not_export, fix_until_stable

DECODER = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.cell = nn.GRUCell(8, 8)
        self.out = nn.Linear(8, 10)
        self.eos_id = 5
        self.max_len = 5

    def forward(self, memory):
        h = torch.tanh(memory)
        token = torch.full((1,), 0, dtype=torch.long)
        tokens = [token, token]
        steps = 0
        while token.item() != self.eos_id:
            if steps == self.max_len:
                break
            h = self.cell(self.embed(token), h)
            token = self.out(h).argmax(dim=-1)
            tokens.append(token)
            steps += 1
        return torch.cat(tokens), h
"""


def _lengths():
    model = build(DECODER)
    found = {}
    for seed in range(300):
        memory = 3 * torch.randn(1, 8, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            n = model(memory)[0].shape[0]
        found.setdefault(n, (memory,))
    return found


def _inputs():
    found = _lengths()
    shortest, longest = min(found), max(found)
    middle = next((n for n in sorted(found) if shortest < n < longest), None)
    return [found[n] for n in (shortest, middle, longest) if n is not None]


def test_the_while_becomes_a_bounded_for_then_a_masked_loop():
    fixed, applied = fix_until_stable(DECODER)
    assert ("        for steps in range(0, self.max_len):\n"
            "            stopped = torch.logical_or(stopped, torch.logical_not(token.double() != self.eos_id))\n"
            "            h = torch.where(stopped, h, self.cell(self.embed(token), h))\n"
            "            token = torch.where(stopped, token, self.out(h).argmax(dim=-1))\n"
            "            tokens.append(token)\n") in fixed
    assert ("return torch.cat(tokens).narrow(0, 0, torch.tensor([0] + [item.shape[0] for item in tokens])"
            ".cumsum(0)[kept + 2].item()), h") in fixed
    assert [d.code for d in applied] == ["UT102", "UT102"]


def test_the_inputs_stop_at_once_midway_and_at_the_bound():
    lengths = sorted(_lengths())
    assert lengths[0] == 2 + 1 and lengths[-1] == 2 + 5 and len(lengths) >= 3, lengths


def test_the_fixed_model_exports_and_matches_eager_on_onnxruntime():
    inputs = _inputs()
    assert does_not_export(DECODER, inputs)
    fixed, _ = fix_until_stable(DECODER)
    check_fixed_model(DECODER, fixed, inputs)


@pytest.mark.parametrize("change,why", [
    (("        return torch.cat(tokens), h\n", "        return torch.cat(tokens), h, steps\n"),
     "the counter `steps` is used after the loop"),
    (("        steps = 0\n", "        steps = len(tokens)\n"), "does not start at an int literal"),
    (("            tokens.append(token)\n", "            tokens.append(token)\n            steps = steps * 1\n"),
     "is assigned in the loop body"),
])
def test_refusals_say_why(change, why):
    source = DECODER.replace(*change)
    found = [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT102"]
    assert found and found[0].fix is None
    assert why in found[0].suggestion, found[0].suggestion
