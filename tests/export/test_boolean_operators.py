"""`a or b` / `a and b` on tensors (issue 24): the value is one of the operands, chosen by
`bool(a)` (`a` when true for `or`, `b` otherwise), not their `logical_or`; the truth of
an `if` / `while` / `not` / ternary test on it is `bool(a) or bool(b)`. Each model
matches eager on onnxruntime on inputs that take both outcomes, or is refused by name."""

import re

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

t = torch.tensor


class OrValue(nn.Module):
    def forward(self, a, b):
        y = a or b
        return y * 2


class AndValue(nn.Module):
    def forward(self, a, b):
        return (a and b) + 1


class OrChain(nn.Module):
    def forward(self, a, b, c):
        return (a or b or c) * 3


class OrOfBools(nn.Module):
    def forward(self, a, b):
        return a or b, a and b


class OrOfPythonNumber(nn.Module):
    def forward(self, x):
        scale = x.sum() or 1.0  # 1.0 where the sum is 0, as `scale or default` in library code
        return x / scale


class OrUnderIf(nn.Module):
    def forward(self, x, a, b):
        y = a or b
        if y > 1:
            x = x + y
        return x


class OrAsPredicate(nn.Module):
    def forward(self, x, a, b):
        if a or b:
            x = x + 1
        if not (a and b):
            x = x * 2
        return x - 1 if a and not b else x


class OrOfDynamicTensors(nn.Module):
    def forward(self, x):
        # `total` has one element, `x` a dynamic number: the value has either shape, an If.
        total = x.sum(0, keepdim=True)
        return (total and x * 2) + 1


def _pairs(values, *others):
    return [(t(v), *others) for v in values]


@pytest.mark.parametrize("model, inputs", [
    (OrValue(), [(t([0.0]), t([3.0])), (t([2.0]), t([3.0]))]),  # a 1-element tensor
    (OrValue(), [(t(0.0), t(3.0)), (t(-2.0), t(3.0))]),  # 0-d
    (OrValue(), [(t([0]), t([3])), (t([5]), t([3]))]),  # integers
    (AndValue(), [(t([0.0]), t([3.0])), (t([2.0]), t([3.0]))]),
    (OrChain(), [(t(0.0), t(0.0), t(5.0)), (t(0.0), t(2.0), t(5.0)), (t(1.0), t(0.0), t(5.0))]),
    (OrOfBools(), [(t(False), t(True)), (t(True), t(False)), (t(False), t(False)), (t(True), t(True))]),
    (OrOfPythonNumber(), [(t([1.0, 2.0]),), (t([1.0, -1.0]),)]),
    (OrUnderIf(), [(torch.ones(3), t(0.0), t(5.0)), (torch.ones(3), t(0.5), t(5.0)), (torch.ones(3), t(0.0), t(0.5))]),
    (OrAsPredicate(), [(torch.ones(3), t(a), t(b)) for a in (0.0, 2.0) for b in (0.0, 3.0)]),
], ids=["or-1-element", "or-0-d", "or-int", "and", "or-chain", "bools", "or-number", "or-under-if", "predicates"])
def test_value_of_or_and_matches_eager(model, inputs):
    export_and_compare(model, inputs[0], inputs)


def test_value_of_and_over_a_dynamic_axis_matches_eager():
    inputs = [(t([1.0, -1.0]),), (t([1.0, 2.0, 3.0]),), (t([0.0]),), (t([4.0]),)]
    export_and_compare(OrOfDynamicTensors(), inputs[0], inputs, dynamic_shapes={"x": {0: "batch"}})


class OrOfRanks(nn.Module):
    def forward(self, a, b):
        return a or b


class AndOfDtypes(nn.Module):
    def forward(self, x):
        return (x.sum() > 0) and x


@pytest.mark.parametrize("model, example, construct", [
    (OrOfRanks(), (t([0.0]), t(2.0)), "or"),  # rank 1 or rank 0
    (AndOfDtypes(), (t([1.0, 2.0]),), "and"),  # a bool or a float tensor
])
def test_value_of_or_and_that_cannot_be_merged_is_refused(model, example, construct):
    with pytest.raises(LoweringError) as info:
        export(model, example)
    err = info.value
    assert err.construct == construct and err.path.endswith("test_boolean_operators.py") and err.line
    assert re.search(rf"value of this data-dependent `{construct}` is one of its operands", err.message)
    assert "one dtype and rank" in err.hint
