"""UT102 fixes (`analyzer.fixes.loops`): a data-dependent loop as
``torch._higher_order_ops.while_loop``, its exact text, the reason when there is none, and
the fixed models proven (eager bit for bit, torch.export and onnxruntime against eager)
on inputs that take every trip count."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source

from .exporting import check_fixed_model, does_not_export, fix_until_stable

HEAD = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = nn.Linear(4, 4)
        self.max_iter = 12
        self.tol = 1e-3
"""

BREAK_AT_END = HEAD + """
    def forward(self, x):
        z = torch.zeros_like(x)
        for _ in range(self.max_iter):
            z_next = torch.tanh(self.step(z) + x)
            delta = z_next - z
            z = z_next
            if delta.abs().max() < self.tol:  # converged
                break
        return z
"""

WHILE = HEAD + """
    def forward(self, block):
        exponent = torch.zeros((), dtype=torch.long)
        while block.abs().max() > 4.0 and exponent < 30:
            block = block * 0.5
            exponent = exponent + 1
        return block, exponent
"""

BREAK_AT_START = HEAD + """
    def forward(self, points):
        spread = points.norm(dim=-1)
        for _ in range(self.max_iter):
            if spread.max() <= 1.0:
                break
            points = points * 0.5
            spread = points.norm(dim=-1)
        return points
"""

TIME_LOOP = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 5)

    def forward(self, x, lengths):
        steps = int(lengths.max())
        h = x.new_zeros(x.shape[0], 5)
        for t in range(steps):
            alive = (lengths > t).to(x.dtype).unsqueeze(-1)
            h = alive * self.cell(x[:, t], h) + (1.0 - alive) * h
        return h
"""


def _inputs_fixed_point():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 4, generator=g)
    return [(x,), (0.01 * x,), (30.0 * x,)]


def test_a_for_loop_with_a_break_at_its_end_becomes_a_while_loop_with_a_flag():
    fixed, applied = fix_until_stable(BREAK_AT_END)
    assert [d.code for d in applied] == ["UT102"]
    assert fixed.endswith(textwrap.indent(textwrap.dedent("""\
        def forward(self, x):
            z = torch.zeros_like(x)
            def loop_cond(_, broke, z):
                return torch.logical_and(_ < self.max_iter, torch.logical_not(broke))
            def loop_body(_, broke, z):
                z_next = torch.tanh(self.step(z) + x)
                delta = z_next - z
                z = z_next
                broke = delta.abs().max() < self.tol  # converged
                return _ + 1, broke, z.clone()
            _, _, z = torch._higher_order_ops.while_loop(loop_cond, loop_body, (torch.tensor(0), torch.tensor(False), z.clone()))
            return z
    """), "    "))
    assert [d.code for d in check_source(fixed, "m.py")] == []


def test_the_break_at_end_fix_exports_and_matches_eager_on_every_trip_count():
    assert does_not_export(BREAK_AT_END, _inputs_fixed_point())
    fixed, _ = fix_until_stable(BREAK_AT_END)
    check_fixed_model(BREAK_AT_END, fixed, _inputs_fixed_point())


def test_a_while_on_a_tensor_becomes_a_while_loop():
    fixed, _ = fix_until_stable(WHILE)
    assert "def loop_cond(block, exponent):\n            return torch.logical_and(block.abs().max() > 4.0, exponent < 30)" in fixed
    g = torch.Generator().manual_seed(4)
    b = torch.randn(3, 3, generator=g)
    inputs = [(0.5 * b,), (20.0 * b,), (300.0 * b,)]
    assert does_not_export(WHILE, inputs)
    check_fixed_model(WHILE, fixed, inputs)


def test_a_break_that_opens_the_body_joins_the_condition():
    fixed, _ = fix_until_stable(BREAK_AT_START)
    assert "torch.logical_and(_ < self.max_iter, torch.logical_not(spread.max() <= 1.0))" in fixed
    assert "broke" not in fixed
    g = torch.Generator().manual_seed(5)
    p = torch.randn(6, 2, generator=g)
    inputs = [(0.1 * p,), (p,), (100.0 * p,)]
    check_fixed_model(BREAK_AT_START, fixed, inputs)


def test_a_time_loop_bounded_by_int_of_a_tensor_is_fixed_with_its_escape():
    fixed, applied = fix_until_stable(TIME_LOOP)
    assert sorted(d.code for d in applied) == ["UT102", "UT201"]
    assert "steps = torch.sym_int(lengths.max().item())" in fixed
    assert "loop_stop = torch.scalar_tensor(steps, dtype=torch.long)" in fixed
    assert "self.cell(x.index_select(1, t.reshape(1)).squeeze(1), h)" in fixed
    g = torch.Generator().manual_seed(6)
    x = torch.randn(2, 5, 3, generator=g)
    inputs = [(x, torch.tensor([2, 1])), (x, torch.tensor([5, 3])), (x, torch.tensor([0, 0]))]
    assert does_not_export(TIME_LOOP, inputs)
    check_fixed_model(TIME_LOOP, fixed, inputs)


def _refusal(source: str) -> str:
    found = [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT102"]
    assert found and found[0].fix is None, found
    return found[0].suggestion.split("not rewritten automatically: ", 1)[1]


@pytest.mark.parametrize("body,why", [
    ("""
    def forward(self, x):
        outs = []
        while x.abs().max() > self.tol:
            x = x * 0.5
            outs.append(x)
        return torch.stack(outs)
""", "the loop grows the list `outs`"),
    ("""
    def forward(self, x):
        steps = 0
        while x.norm() > 1:
            x = x / 2
            steps = steps + 1
        return x, steps
""", "`steps` is not a tensor before the loop"),
    ("""
    def forward(self, x):
        for t in range(self.max_iter):
            x = x * (t / self.max_iter)
            if x.abs().max() < self.tol:
                break
        return x
""", "the loop variable `t` is used as a Python int"),
    ("""
    def forward(self, x):
        while x.abs().max() > self.tol:
            x = self.step(x)
            if x.sum() < 0:
                return x
        return -x
""", "the loop body returns"),
    ("""
    def forward(self, x):
        for _ in range(self.max_iter):
            y = self.step(x)
            if y.abs().max() < self.tol:
                break
            x = x + y
        return x
""", "the `break` is not in an `if` that opens or closes the loop body"),
    ("""
    def forward(self, x):
        while x.sum().item() > 0:
            x = x - 1
        return x
""", "the `while` condition is not a tensor"),
])
def test_loops_without_a_sound_rewrite_say_why(body, why):
    assert why in _refusal(HEAD + body)


EARLY_EXIT = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.heads = nn.ModuleList([nn.Linear(4, 3) for _ in range(3)])

    def forward(self, x):
        for layer, head in zip(self.layers, self.heads):
            x = torch.relu(layer(x))
            logits = head(x)
            if logits.softmax(-1).max(-1).values.min() > 0.392:  # confident
                return logits
        return logits * 2
"""


def test_a_return_from_a_loop_of_fixed_length_becomes_a_masked_selection():
    fixed, applied = fix_until_stable(EARLY_EXIT)
    assert [d.code for d in applied] == ["UT102"]
    assert textwrap.dedent("""\
            exit_value, exited = None, None
            for layer, head in zip(self.layers, self.heads):
                x = torch.relu(layer(x))
                logits = head(x)
                if exit_value is None:  # confident
                    exit_value, exited = logits, logits.softmax(-1).max(-1).values.min() > 0.392
                else:
                    exit_value = torch.where(exited, exit_value, logits)
                    exited = torch.logical_or(exited, logits.softmax(-1).max(-1).values.min() > 0.392)
            return logits * 2 if exit_value is None else torch.where(exited, exit_value, logits * 2)
    """) in textwrap.dedent(fixed.split("def forward(self, x):\n", 1)[1])
    assert check_source(fixed, "m.py") == []
    model_inputs = []
    g = torch.Generator().manual_seed(9)
    for scale in (0.01, 1.0, 30.0, 300.0):
        model_inputs.append((scale * torch.randn(2, 4, generator=g),))
    assert does_not_export(EARLY_EXIT, model_inputs)
    check_fixed_model(EARLY_EXIT, fixed, model_inputs)


SINGLE = HEAD + """
    def forward(self, x):
        while x.norm() > 1:
            x = x / 2
        return x
"""


def test_a_loop_carrying_one_value_unpacks_the_one_tuple_while_loop_returns():
    fixed, _ = fix_until_stable(SINGLE)
    assert "            return x,\n        x, = torch._higher_order_ops.while_loop(loop_cond, loop_body, (x.clone(),))" in fixed
    g = torch.Generator().manual_seed(11)
    x = torch.randn(3, generator=g)
    check_fixed_model(SINGLE, fixed, [(0.1 * x,), (10 * x,), (1000 * x,)])


DECODE = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)
        self.out = nn.Linear(4, 3)
        self.max_len = 6

    def forward(self, h):
        tokens = []
        for _ in range(self.max_len):
            h = self.cell(torch.tanh(h), h)
            tok = self.out(h).argmax(-1)
            tokens.append(tok)
            if (tok == 2).all():
                break
        return torch.stack(tokens, dim=1)
"""

STAGES = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])

    def forward(self, x):
        for layer in self.layers:
            if x.abs().max() > 5:
                break
            x = layer(x) * 2
        return x
"""


def test_a_list_grown_in_a_loop_of_fixed_length_with_a_break_is_cut_to_the_iterations_that_ran():
    fixed, applied = fix_until_stable(DECODE)
    assert [d.code for d in applied] == ["UT102"]
    assert "            h = torch.where(stopped, h, self.cell(torch.tanh(h), h))\n" in fixed
    assert "        return torch.stack(tokens, dim=1).narrow(1, 0, kept.item())\n" in fixed
    assert [d.code for d in check_source(fixed, "m.py")] == ["UT201"]  # kept.item(): a SymInt to torch.export
    trips = set()
    model_inputs = []
    for seed in range(40):
        h = torch.randn(2, 4, generator=torch.Generator().manual_seed(seed))
        from .exporting import build
        with torch.no_grad():
            n = build(DECODE)(h).shape[1]
        if n not in trips:
            trips.add(n)
            model_inputs.append((h,))
    assert len(trips) >= 2, trips  # a break and a run to the end, at least
    model_inputs.sort(key=lambda args: -build(DECODE)(*args).shape[1])  # the example: the longest
    assert does_not_export(DECODE, model_inputs)
    check_fixed_model(DECODE, fixed, model_inputs)


def test_a_break_in_a_module_list_loop_keeps_the_value_it_had():
    fixed, _ = fix_until_stable(STAGES)
    assert "            stopped = torch.logical_or(stopped, x.abs().max() > 5)\n            x = torch.where(stopped, x, layer(x) * 2)\n" in fixed
    g = torch.Generator().manual_seed(12)
    x = torch.randn(2, 4, generator=g)
    model_inputs = [(0.1 * x,), (3 * x,), (10 * x,)]
    assert does_not_export(STAGES, model_inputs)
    check_fixed_model(STAGES, fixed, model_inputs)


FOREVER = HEAD + """
    def forward(self, x):
        while True:
            x = torch.tanh(self.step(x)) * 1.5
            if x.abs().max() < self.tol * 100:
                break
        return x
"""


def test_while_true_with_a_break_closing_it_is_a_while_loop_on_the_flag():
    fixed, _ = fix_until_stable(FOREVER)
    assert "        def loop_cond(broke, x):\n            return torch.logical_not(broke)\n" in fixed
    # Without a bias the map contracts towards 0 for these weights: one step, or several.
    source = FOREVER.replace("self.step = nn.Linear(4, 4)", "self.step = nn.Linear(4, 4, bias=False)")
    fixed = fixed.replace("self.step = nn.Linear(4, 4)", "self.step = nn.Linear(4, 4, bias=False)")
    model_inputs = [(torch.full((2, 4), v),) for v in (0.01, 1.0)]
    check_fixed_model(source, fixed, model_inputs, onnx=False)


def test_a_for_loop_that_breaks_is_never_run_past_its_bound_and_while_true_is_never_masked():
    why = _refusal(HEAD + """
    def forward(self, x):
        while True:
            if x.abs().max() < self.tol:
                break
            x = x * 0.5
        return x
""")
    assert "`while True` leaves only by a `break` that closes its body here" in why
