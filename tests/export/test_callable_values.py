"""Callables that are values (issue 24): a call whose callee is a Python callable value —
`functools.partial`, a lambda, a bound method, a plain function — is followed like any
call, wherever the value came from: stored on the module in `__init__`, in a dict such
as transformers' `ACT2FN`, passed as an argument, or made in forward. Each exports and
matches eager on onnxruntime with a dynamic batch, also under a data-dependent `if` and
inside a data-dependent loop."""

import functools

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from transformers.activations import ACT2FN

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

DYNAMIC = {"x": {0: "batch"}}
INPUTS = [(torch.tensor([[1.0, 2.0, -0.5], [0.5, -0.25, 0.0]]),),
          (torch.tensor([[-1.0, -2.0, 0.3], [-0.5, 0.25, 1.5], [3.0, 1.0, -2.0]]),), (torch.tensor([[0.1, -0.3, 0.2]]),)]


def double(t):
    return t * 2


class PartialOnTheModule(nn.Module):
    """transformers' GELUTanh: `self.act = functools.partial(F.gelu, approximate="tanh")`."""

    def __init__(self):
        super().__init__()
        self.act = functools.partial(F.gelu, approximate="tanh")
        self.clip = functools.partial(functools.partial(torch.clamp, min=-0.5), max=0.5)  # flattened by functools

    def forward(self, x):
        return self.clip(self.act(x))


class Act2Fn(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = ACT2FN["gelu_pytorch_tanh"]  # a module holding a partial
        self.table = {"gelu": functools.partial(F.gelu, approximate="tanh"),
                      "leaky": functools.partial(F.leaky_relu, negative_slope=0.2)}
        self.name = "silu"

    def forward(self, x):
        return self.act(x) + self.table["gelu"](x) + self.table["leaky"](x) + ACT2FN[self.name](x)


def _make_scaled(k):
    return lambda t: t * k + 1  # a closure cell, read when the lambda runs


class LambdasOnTheModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = lambda t: t * 3 + 1
        self.g = lambda t, k=2: torch.relu(t) * k
        self.h = _make_scaled(0.5)

    def forward(self, x):
        return self.f(x) + self.g(x) + self.g(x, k=4) + self.h(x)


class FunctionsPassedAsValues(nn.Module):
    def __init__(self, fn=double):
        super().__init__()
        self.fn = fn
        self.bound = functools.partial(self.scale, k=3.0)  # a partial of a bound method

    def scale(self, t, k):
        return t * k

    def apply_twice(self, fn, t):
        return fn(fn(t))

    def forward(self, x):
        add = functools.partial(torch.add, x)  # made in forward, holding a tensor
        shift = lambda t: t - x.mean()  # noqa: E731 - a lambda of forward
        return (self.apply_twice(self.fn, x) + self.apply_twice(torch.tanh, x) + self.apply_twice(shift, x)
                + self.apply_twice(self.bound, x) + add(x))


class UnderADataIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.acts = {"pos": functools.partial(F.gelu, approximate="tanh"), "neg": lambda t: t * -2}

    def forward(self, x):
        if x.sum() > 0:
            y = self.acts["pos"](x)
        else:
            y = self.acts["neg"](x)
        return y


class InsideADataLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = functools.partial(torch.add, alpha=0.5)
        self.act = lambda t: torch.tanh(t) * 2

    def forward(self, x):
        total = x[0] * 0
        for row in x:
            total = self.step(total, self.act(row))
        return total


@pytest.mark.parametrize("model", [PartialOnTheModule(), Act2Fn(), LambdasOnTheModule(), FunctionsPassedAsValues(),
                                   UnderADataIf(), InsideADataLoop()], ids=lambda m: type(m).__name__)
def test_callable_values_are_followed(model):
    export_and_compare(model, INPUTS[0], INPUTS, dynamic_shapes=DYNAMIC, atol=1e-5, rtol=1e-4)


class PartialOfAForwardLambda(nn.Module):
    def forward(self, x):
        f = functools.partial(lambda t, k: t * k, k=2.0)
        return f(x)


def test_a_partial_of_a_function_made_in_forward_is_refused():
    with pytest.raises(LoweringError) as info:
        export(PartialOfAForwardLambda(), INPUTS[0])
    assert "functools.partial of a function made inside forward" in str(info.value)
    assert "wrap it in a lambda" in str(info.value)


class TwoLambdasOnALine(nn.Module):
    def __init__(self):
        super().__init__()
        self.f, self.g = (lambda t: t + 1), (lambda t: t + 2)

    def forward(self, x):
        return self.g(x)


def test_two_lambdas_on_one_line_are_refused_not_guessed():
    with pytest.raises(LoweringError) as info:
        export(TwoLambdasOnALine(), INPUTS[0])
    assert "cannot find the source of TwoLambdasOnALine.__init__.<locals>.<lambda>" in str(info.value)
    assert "write each lambda on its own line" in str(info.value)
