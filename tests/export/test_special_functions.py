"""lgamma / digamma (no ONNX op: computed from Stirling's series, the recurrence and the
reflection formula), erfinv (Giles' approximation, float32-accurate) and `torch.is_same_size` (issue 24), against eager on onnxruntime:
the poles, the signed zeros, infinities and NaN, both sides of the reflection at 1/2,
large and tiny arguments, int and float64 inputs."""

import math

import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

SPECIAL = [0.0, -0.0, -1.0, -2.0, -2.5, -7.5, -3.1, -0.3, -1e-6, 1e-6, 0.3, 0.5, 0.7, 1.0, 2.0, 3.7, 12.5, 100.0,
           5e5, 1e30, math.inf, -math.inf, math.nan]


class Gamma(nn.Module):
    def forward(self, x):
        return torch.lgamma(x), x.digamma(), torch.special.gammaln(x) - torch.special.psi(x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lgamma_and_digamma_match_eager(dtype):
    x = torch.tensor(SPECIAL, dtype=dtype)
    grid = torch.linspace(-6.0, 6.0, 97, dtype=dtype)  # every branch, between the poles
    export_and_compare(Gamma(), (x,), [(x,), (grid,)], dynamic_shapes={"x": {0: "n"}})


class InverseErf(nn.Module):
    def forward(self, x):
        return torch.erfinv(x), torch.special.erfinv(x * 0.5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_erfinv_matches_eager(dtype):
    edges = torch.tensor([0.0, -0.0, 1.0, -1.0, 1.5, -2.0, math.nan, 0.999999, -0.9999999, 1e-8], dtype=dtype)
    grid = torch.linspace(-1, 1, 2001, dtype=dtype)[1:-1]  # both pieces of the approximation
    export_and_compare(InverseErf(), (edges,), [(edges,), (grid,)], dynamic_shapes={"x": {0: "n"}}, rtol=2e-6, atol=1e-6)


def test_an_integer_input_gives_float32():
    export_and_compare(Gamma(), (torch.tensor([1, 2, 5, 0, -3]),))


class SameSize(nn.Module):
    def forward(self, x, y):
        z = x[: y.shape[0]]
        same = torch.is_same_size(x, z)
        return x * 2 if torch.is_same_size(x, y) else x - 1, x + 1 if same else x, x.is_same_size(x[None])


def test_is_same_size_static_and_at_run_time():
    dynamic = {"x": {0: "n"}, "y": {0: "m"}}
    a, b = torch.randn(3, 2), torch.randn(4, 2)
    export_and_compare(SameSize(), (a, a + 1), [(a, a + 1), (a, b), (b, a)], dynamic_shapes=dynamic)


def test_a_complex_input_is_refused():
    with pytest.raises(LoweringError, match="lgamma of a complex tensor"):
        export(Gamma(), (torch.randn(3, dtype=torch.complex64),))
