"""np.floor / ceil / trunc, np.unique and np.histogram on tensor data (`.numpy()`,
`.cpu().numpy()`), lowered into the graph and compared with real NumPy on onnxruntime:
values, NumPy's dtypes and shapes, on random inputs of several shapes and dtypes, with
ties, NaN, values on the bin edges and outside the range, a dynamic axis, and the
refusals."""

import numpy as np
import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare


class OnArray(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x.detach().cpu().numpy())


def _random(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 2).round(decimals=1).to(dtype)  # ties
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    return torch.randint(-4, 5, shape, generator=g, dtype=dtype)


def floor_(a):
    return np.floor(a * 1.5)


def floor_ceil_trunc(a):
    return np.stack([np.floor(a), np.ceil(a), np.trunc(a)])


def unique_(a):
    return np.unique(a)


def unique_counts(a):
    return np.unique(a, return_counts=True)


def unique_inverse_counts(a):
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    return values, inverse, counts, values[inverse]


def unique_nan_apart(a):
    return np.unique(a, return_counts=True, equal_nan=False)


def histogram_default(a):
    return np.histogram(a)


def histogram_bins(a):
    return np.histogram(a, bins=7)


def histogram_one_bin(a):
    return np.histogram(a, 1)


def histogram_range(a):
    return np.histogram(a, bins=4, range=(-1, 1.5))


def histogram_int_range(a):
    return np.histogram(a, bins=3, range=(0, 3))


def histogram_point_range(a):
    return np.histogram(a, bins=2, range=(0.0, 0.0))


def histogram_counts_to_torch(a):
    hist, edges = np.histogram(a, bins=6)
    return torch.from_numpy(hist).float() / a.size, torch.as_tensor(edges)


FLOATS = (torch.float32, torch.float64)
INTS = (torch.int32, torch.int64)
CASES = [
    (floor_, FLOATS + INTS), (floor_ceil_trunc, FLOATS + INTS + (torch.bool,)),
    (unique_, FLOATS + INTS + (torch.bool,)),
    (unique_counts, FLOATS + INTS), (unique_inverse_counts, FLOATS + INTS), (unique_nan_apart, FLOATS),
    (histogram_default, FLOATS + INTS), (histogram_bins, FLOATS + INTS), (histogram_one_bin, FLOATS + INTS),
    (histogram_range, FLOATS + INTS), (histogram_int_range, FLOATS + INTS), (histogram_point_range, FLOATS + INTS),
    (histogram_counts_to_torch, FLOATS),
]
SHAPES = ((9,), (4, 5))
PARAMS = [pytest.param(fn, dtype, shape, id=f"{fn.__name__}-{str(dtype)[6:]}-{'x'.join(map(str, shape))}")
          for fn, dtypes in CASES for dtype in dtypes for shape in SHAPES]


@pytest.mark.parametrize("fn, dtype, shape", PARAMS)
def test_matches_real_numpy(fn, dtype, shape):
    inputs = [(_random(shape, dtype, seed),) for seed in (1, 2)]
    inputs.append((torch.full(shape, 3).to(dtype),))  # one value: a widened histogram range, one unique value
    export_and_compare(OnArray(fn), inputs[0], inputs)


SPECIAL = torch.tensor([[1.5, -0.25, 1.5, float("nan")], [float("nan"), 3.0, -1.0, float("inf")]])


@pytest.mark.parametrize("fn", [unique_, unique_counts, unique_inverse_counts, unique_nan_apart, histogram_range,
                                floor_ceil_trunc])
def test_nan_and_inf(fn):
    """np.unique merges NaNs (equal_nan) unless told not to; a histogram with a range drops NaN and inf."""
    export_and_compare(OnArray(fn), (SPECIAL,))


def test_values_on_the_bin_edges():
    edges = torch.linspace(-1, 1.5, 5)
    x = torch.cat([edges, edges[1:] - 1e-7, torch.tensor([-1.5, 2.0, 1.5])])
    for fn in (histogram_range, histogram_default, histogram_bins):
        for dtype in FLOATS:
            export_and_compare(OnArray(fn), (x.to(dtype),))


def test_dynamic_axis():
    inputs = [(_random((n, 3), torch.float32, n),) for n in (4, 1, 11)]
    for fn in (unique_inverse_counts, histogram_bins, histogram_range, floor_):
        export_and_compare(OnArray(fn), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}})


def unique_axis(a):
    return np.unique(a, axis=0)


def unique_index(a):
    return np.unique(a, return_index=True)


def unique_unsorted(a):
    return np.unique(a, sorted=False)


def histogram_edges(a):
    return np.histogram(a, bins=[0, 1, 2])


def histogram_density(a):
    return np.histogram(a, density=True)


def histogram_weights(a):
    return np.histogram(a, weights=a)


def histogram_data_range(a):
    return np.histogram(a, range=(0, a.max()))


def histogram_reversed_range(a):
    return np.histogram(a, range=(1, 0))


def histogram_bool(a):
    return np.histogram(a > 0)


@pytest.mark.parametrize("fn, message", [
    (unique_axis, "axis= \\(unique slices\\)"),
    (unique_index, "return_index=True"),
    (unique_unsorted, "sorted=False"),
    (histogram_edges, "only a number of equal bins"),
    (histogram_density, "density= or weights="),
    (histogram_weights, "density= or weights="),
    (histogram_data_range, "computed from tensor data"),
    (histogram_reversed_range, "max must be larger than min"),
    (histogram_bool, "torch.bool array"),
])
def test_refusals(fn, message):
    with pytest.raises(LoweringError, match=message):
        export(OnArray(fn), (torch.randn(3, 4),))
