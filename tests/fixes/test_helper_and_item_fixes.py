"""Three causes that kept a branch or loop rewrite from applying, each with the fixed model
proven (eager bit for bit, torch.export and onnxruntime against eager) on inputs that take
every branch and trip count, and its true-positive neighbour still refused:

- a ``break`` test ``r.item() < c`` is kept a tensor as ``r.double() < c``
  (``predicates.item_comparison``: the same truth value, Python compares in double);
- a helper method of the class that only computes its result may be called in the
  rewritten body (``pure_methods``); one that writes an attribute may not;
- a name the rest of a function binds after an early ``return`` is a local, not an
  unknown global (``direction.norm()`` was refused as a call of a builtin).
"""

from __future__ import annotations

import textwrap

import libcst as cst
import torch

from analyzer import check_source
from analyzer.fixes.predicates import item_comparison

from .exporting import check_fixed_model, does_not_export, fix_until_stable

SINKHORN = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 0.1
        self.max_iter = 40
        self.thresh = 1e-3

    def _scaled(self, cost, u, v):
        return (-cost + u.unsqueeze(-1) + v.unsqueeze(-2)) / self.eps

    def forward(self, x, y):
        cost = ((x.unsqueeze(1) - y.unsqueeze(0)) ** 2).sum(-1)
        u = torch.zeros(x.shape[0])
        v = torch.zeros(y.shape[0])
        for _ in range(self.max_iter):
            u_prev = u
            u = self.eps * (-torch.logsumexp(self._scaled(cost, u, v), dim=-1)) + u
            v = self.eps * (-torch.logsumexp(self._scaled(cost, u, v).transpose(-2, -1), dim=-1)) + v
            err = (u - u_prev).abs().sum()
            if err.item() < self.thresh:
                break
        return torch.exp(self._scaled(cost, u, v))
"""


def _sinkhorn_inputs():
    g = torch.Generator().manual_seed(15)
    x, y = torch.randn(5, 2, generator=g), torch.randn(4, 2, generator=g)
    return [(x, y), (0.01 * x, 0.01 * y)]  # converges late / at once


def test_an_item_break_and_a_pure_helper_make_a_while_loop_that_exports():
    fixed, applied = fix_until_stable(SINKHORN)
    assert "UT102" in [d.code for d in applied]
    assert "broke = err.double() < self.thresh" in fixed
    assert "torch._higher_order_ops.while_loop(" in fixed
    compile(fixed, "m.py", "exec")
    inputs = _sinkhorn_inputs()
    assert does_not_export(SINKHORN, inputs)
    check_fixed_model(SINKHORN, fixed, inputs)


def test_a_helper_that_writes_an_attribute_is_not_called_in_a_rewritten_loop():
    impure = SINKHORN.replace("    def _scaled(self, cost, u, v):\n",
                              "    def _scaled(self, cost, u, v):\n        self.last_cost = cost\n")
    found = [d for d in check_source(impure, "m.py") if d.code == "UT102"]
    assert found and found[0].fix is None
    assert "calls `self._scaled()`" in found[0].suggestion


def _compare(text: str, types: dict) -> str | None:
    found = item_comparison(cst.parse_expression(text), types, "torch")
    return None if found is None else cst.Module([]).code_for_node(found)


def test_item_comparisons_become_double_comparisons_only_of_tensors():
    tensor = {"err": "tensor", "n": "python"}
    assert _compare("err.item() < self.thresh", tensor) == "err.double() < self.thresh"
    assert _compare("0.5 >= torch.sigmoid(err).min().item()", tensor) == "0.5 >= torch.sigmoid(err).min().double()"
    assert _compare("n.item() < 3", tensor) is None  # not a tensor: `.double()` may not exist
    assert _compare("err.item() < 3 < 4", tensor) is None
    assert _compare("err.item() < self.step(err)", tensor) is None  # the other side may have side effects


def test_the_double_comparison_keeps_the_truth_value_where_float32_would_not():
    value = torch.tensor(0.1, dtype=torch.float32)  # 0.100000001..., above the double 0.1
    assert (value.item() <= 0.1) is False
    assert bool(value <= 0.1) is True  # the float32 comparison rounds 0.1 first: another answer
    assert bool(value.double() <= 0.1) is False  # the rewrite's: the same as `.item()`
    big = torch.tensor(2**40 + 1)
    assert bool(big.double() > 2**40) is (big.item() > 2**40)


REFINER = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.operator = nn.Linear(6, 6, bias=False)
        self.preconditioner = nn.Linear(6, 6)
        self.eps = 0.5

    def forward(self, x, target):
        residual = target - self.operator(x)
        if residual.norm() < self.eps:
            return x
        direction = self.preconditioner(residual)
        direction = direction / direction.norm(dim=-1, keepdim=True).clamp(min=1e-6)
        return x + 0.3 * direction
"""


def test_names_bound_after_an_early_return_are_locals_and_the_tail_becomes_a_branch():
    fixed, applied = fix_until_stable(REFINER)
    assert [d.code for d in applied] == ["UT101"]
    assert "return torch.cond(residual.norm() < self.eps, true_fn, false_fn, (residual, x))" in fixed
    g = torch.Generator().manual_seed(18)
    x = torch.randn(2, 6, generator=g)
    torch.manual_seed(0)
    from .exporting import build
    model = build(REFINER)
    with torch.no_grad():
        close = model.operator(x) + 0.01
    inputs = [(x, close), (x, torch.randn(2, 6, generator=g) * 3.0)]  # returns early / runs the tail
    check_fixed_model(REFINER, fixed, inputs)


def test_a_tail_that_calls_an_unknown_global_is_still_refused():
    source = REFINER.replace("direction = self.preconditioner(residual)",
                             "direction = project(residual)")
    found = [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT101"]
    assert found and found[0].fix is None
    assert "calls `project()`" in found[0].suggestion


def test_max_of_values_in_the_tail_is_refused_abs_is_not():
    # `max(a, b)` of tensors takes bool() of one, which no torch.cond branch can (even in eager)
    with_max = REFINER.replace("return x + 0.3 * direction", "return max(x, 0.3 * direction)")
    found = [d for d in check_source(with_max, "m.py") if d.code == "UT101"]
    assert found and found[0].fix is None and "calls `max()`" in found[0].suggestion
    with_abs = REFINER.replace("return x + 0.3 * direction", "return x + abs(0.3 * direction)")
    assert [d for d in check_source(with_abs, "m.py") if d.code == "UT101"][0].fix is not None
