"""Pure-Python library code called from forward is interpreted like the model's own, when
no lowering is registered for it: torch's own (`torch.distributions`, `torch.functional`),
which is no torch operator, included (`lowering.interp.functions._is_library_python`). Only
real operators need lowerings; `torch.overrides.has_torch_function*` and the scripting and
tracing guards answer as in eager. What reaches I/O or a C function with no lowering is
refused by its name."""

import io
import math

import pytest
import torch
from torch import nn
from torch.distributions import Independent, Normal, Transform, constraints

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class ShiftAndScale(Transform):
    """A transform of the model's own code on torch's pure-Python base class (zuko's are)."""

    domain = constraints.real
    codomain = constraints.real
    bijective = True

    def __init__(self, shift, log_scale):
        super().__init__()
        self.shift, self.log_scale = shift, log_scale

    def _call(self, x):
        return x * self.log_scale.exp() + self.shift

    def _inverse(self, y):
        return (y - self.shift) * (-self.log_scale).exp()

    def log_abs_det_jacobian(self, x, y):
        return self.log_scale.expand_as(x)


class ConditionalFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 6)

    def forward(self, x, c):
        shift, log_scale = self.net(c).chunk(2, dim=-1)
        t = ShiftAndScale(shift, torch.tanh(log_scale))
        y = t(x)  # Transform.__call__, from torch's source
        back = t.inv(y)  # the `inv` property: an _InverseTransform of torch's
        base = Independent(Normal(torch.zeros_like(y), torch.ones_like(y)), 1)
        return y, back, base.log_prob(y) + t.log_abs_det_jacobian(x, y).sum(-1)


class BroadcastsItsArguments(nn.Module):
    def forward(self, x, y):
        a, b = torch.broadcast_tensors(x, y)
        shape = torch.broadcast_shapes(x.shape, (1, 1))
        if torch.overrides.has_torch_function_variadic(x, y) or torch.jit.is_scripting():
            return a - b  # not taken in eager
        return a + b, b.new_zeros(shape) + 1


@pytest.mark.parametrize("model, inputs, dynamic", [
    (ConditionalFlow(), [(torch.randn(b, 3), torch.randn(b, 2)) for b in (4, 1, 7)],
     {"x": {0: "b"}, "c": {0: "b"}}),
    (BroadcastsItsArguments(), [(torch.randn(b, 1), torch.randn(1, 5)) for b in (3, 1, 6)], {"x": {0: "b"}}),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_library_python_matches_eager(model, inputs, dynamic):
    export_and_compare(model.eval(), inputs[0], inputs, dynamic_shapes=dynamic)


class SavesItsInput(nn.Module):
    def forward(self, x):
        torch.save(x, io.BytesIO())  # pure Python down to the file it writes
        return x


def test_library_python_that_reaches_io_is_refused_by_name():
    with pytest.raises(LoweringError) as info:
        export(SavesItsInput(), (torch.randn(2, 3),))
    assert info.value.path.endswith("torch/serialization.py"), info.value  # where torch.save's source stops
    assert info.value.message.endswith("(inside `torch.save`, library Python read from source)")


# ---------------------------------------------------------------- Python on sizes the graph decides
# (what the libraries read from source above do with a dynamic length)


def pad_to_multiple(t, multiple):
    """local-attention's `pad_to_multiple`: `(n / multiple).is_integer()` of a dynamic length."""
    m = t.shape[-1] / multiple
    if m.is_integer():
        return t
    return torch.nn.functional.pad(t, (0, math.ceil(m) * multiple - t.shape[-1]))


class SizesAsPythonNumbers(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x):
        n = x.shape[-1]
        scale = 1 / math.sqrt(n)  # a Python float of a size
        head = x[..., slice(0, n // 2)]  # a slice object with a graph bound
        none_test = n != self.cached and x.dim() != None  # noqa: E711 - a number and a tensor against None
        empty = x[:, :0]
        grows = torch.is_floating_point(x) and empty.numel() == 0
        return pad_to_multiple(x, 4) * scale, head.sum(-1) * none_test * grows


@torch.autocast("cpu", enabled=False)
def autocast_free(x):
    return x * 2


class DecoratedForward(nn.Module):
    """rotary-embedding-torch: a forward wrapped by `@autocast(...)`, whose wrapper is torch's Python."""

    @torch.autocast("cpu", enabled=False)
    def forward(self, x):
        return autocast_free(x) + 1


@pytest.mark.parametrize("model", [SizesAsPythonNumbers(), DecoratedForward()], ids=lambda m: type(m).__name__)
def test_python_on_dynamic_sizes_matches_eager(model):
    inputs = [(torch.randn(2, n),) for n in (8, 6, 13, 1)]
    export_and_compare(model.eval(), inputs[0], inputs, dynamic_shapes={"x": {1: "n"}})
