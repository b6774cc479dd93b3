"""NumPy on tensor data, lowered into the graph (`lowering/numpy_arrays/`): every
supported function, method and operator is checked against real NumPy on random inputs of
several shapes and dtypes (values, shapes and NumPy's dtypes); what is not supported is
refused with a LoweringError naming the call."""

import numpy as np
import pytest
import torch
from torch import nn

from lowering import LoweringError, export
from tests.export.harness import export_and_compare

FLOATS = (torch.float32, torch.float64)
INTS = (torch.int32, torch.int64)
ALL = FLOATS + INTS + (torch.bool,)
SHAPES = ((4, 5), (2, 3, 4))


def _random(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, dtype=dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    return torch.randint(-5, 6, shape, generator=g, dtype=dtype)


class OnArrays(nn.Module):
    """forward(x, y) = fn(np.asarray(x), y.numpy()): the result is returned as NumPy holds it."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(np.asarray(x), y.detach().cpu().numpy())


# ---------------------------------------------------------------- the cases: fn(a, b) on NumPy arrays

def mean_all(a, b):
    return np.mean(a)


def mean_axis(a, b):
    return a.mean(axis=0)


def mean_keepdims(a, b):
    return np.mean(a, axis=-1, keepdims=True)


def sum_all(a, b):
    return a.sum()


def sum_axes(a, b):
    return np.sum(a, axis=(0, 1))


def std_default(a, b):
    return a.std(axis=0)


def std_ddof(a, b):
    return np.std(a, ddof=1)


def var_axis(a, b):
    return np.var(a, axis=1, keepdims=True)


def max_axis(a, b):
    return a.max(axis=0)


def min_all(a, b):
    return np.min(a)


def amax_keep(a, b):
    return np.amax(a, axis=-1, keepdims=True)


def argmax_flat(a, b):
    return np.argmax(a)


def argmax_axis(a, b):
    return a.argmax(axis=1)


def argmin_axis(a, b):
    return np.argmin(a, axis=0)


def abs_(a, b):
    return np.abs(a)


def exp_(a, b):
    return np.exp(a)


def log_(a, b):
    return np.log(np.abs(a) + 1)


def sqrt_(a, b):
    return np.sqrt(np.abs(a))


def square_(a, b):
    return np.square(a)


def clip_both(a, b):
    return np.clip(a, -1, 2)


def clip_method(a, b):
    return a.clip(0.5, None)


def clip_arrays(a, b):
    return np.clip(a, np.minimum(a, b), np.maximum(a, b) + 1)


def where_(a, b):
    return np.where(a > b, a, 0.5)


def concatenate_(a, b):
    return np.concatenate([a, b], axis=0)


def concatenate_flat(a, b):
    return np.concatenate((a, b), axis=None)


def stack_(a, b):
    return np.stack([a, b], axis=-1)


def reshape_fn(a, b):
    return np.reshape(a, (-1,))


def reshape_method(a, b):
    return a.reshape(2, -1)


def transpose_fn(a, b):
    return np.transpose(a)


def transpose_T(a, b):
    return a.T + 0


def transpose_method(a, b):
    return a.transpose(1, 0, *range(2, a.ndim))


def argsort_default(a, b):
    return a.argsort()


def argsort_axis0(a, b):
    return np.argsort(a, axis=0)


def argsort_stable(a, b):
    return np.argsort(a, axis=-1, kind="stable")


def sort_axis0(a, b):
    return np.sort(a, axis=0)


def maximum_(a, b):
    return np.maximum(a, b)


def minimum_(a, b):
    return np.minimum(a, 1)


def arithmetic(a, b):
    return (a + 0.5) * b - a / 3


def int_arithmetic(a, b):
    return a // 2 + a % 3 + a ** 2 - b * 2


def comparisons(a, b):
    return np.stack([a > b, a <= 0, a == b, a != 1])


def unary_minus(a, b):
    return -a + (+b)


def astype_float32(a, b):
    return a.astype(np.float32)


def astype_int(a, b):
    return (a * 2).astype(int)


def astype_bool(a, b):
    return a.astype(bool)


def asarray_dtype(a, b):
    return np.asarray(a, dtype=np.float64) + np.array(b)


def shape_arithmetic(a, b):
    return (a + 0.5) / a.shape[0] + a.ndim * a.size


def index_basic(a, b):
    return np.stack([a[0], a[-1]]) + a[:, 1:].sum() + a[..., 0].mean()


def index_scalar(a, b):
    return a[0, 1] * 2


def index_mask(a, b):
    return a[a > 0]


def rank_gauss(a, b):
    ranks = a.argsort(axis=0).argsort(axis=0).astype(np.float32)
    return (ranks + 0.5) / a.shape[0] * (b.std(axis=0).astype(np.float32) + 1e-3)


def scalar_chain(a, b):
    m = a.mean()
    return m * 2 + np.float32(1.5) + a.max() - np.sqrt(np.abs(m))


def percentile_all(a, b):
    return np.percentile(a, 30)


def percentile_axis(a, b):
    return np.percentile(a, 75.5, axis=0)


def percentile_list_keepdims(a, b):
    return np.percentile(a, [0, 12.5, 50, 100], axis=-1, keepdims=True)


def percentile_list_all(a, b):
    return np.percentile(a, (25, 90))


def quantile_axis(a, b):
    return np.quantile(a, 0.4, axis=1, keepdims=True)


def quantile_list(a, b):
    return np.quantile(b, [0.1, 0.5, 0.99], axis=0)


def quantile_int_q(a, b):
    return np.quantile(a, 1, axis=0) + np.quantile(a, 0)


def quantile_keepdims_all(a, b):
    return np.quantile(a, [0.3], keepdims=True)


def norm_default(a, b):
    return np.linalg.norm(a)


def norm_axis(a, b):
    return np.linalg.norm(a, axis=-1)


def norm_orders(a, b):
    return np.stack([np.linalg.norm(a, ord=o, axis=0) for o in (None, 1, 2, np.inf, -np.inf, 0, 3)])


def norm_keepdims(a, b):
    return a / (np.linalg.norm(a, ord=2, axis=1, keepdims=True) + 1)


def norm_flat_ord(a, b):
    return np.linalg.norm(a.reshape(-1), ord=np.inf) + np.linalg.norm(a.reshape(-1), 1)


def norm_fro_two_axes(a, b):
    return np.linalg.norm(a, axis=(0, 1), keepdims=True)


CASES = [
    (mean_all, ALL), (mean_axis, ALL), (mean_keepdims, FLOATS + INTS), (sum_all, ALL), (sum_axes, ALL),
    (std_default, FLOATS + INTS), (std_ddof, FLOATS + INTS), (var_axis, FLOATS + INTS), (max_axis, ALL),
    (min_all, ALL), (amax_keep, FLOATS + INTS), (argmax_flat, FLOATS + INTS), (argmax_axis, FLOATS + INTS),
    (argmin_axis, FLOATS + INTS), (abs_, ALL), (exp_, FLOATS + INTS), (log_, FLOATS + INTS), (sqrt_, FLOATS + INTS),
    (square_, FLOATS + INTS), (clip_both, FLOATS + INTS), (clip_method, FLOATS + INTS), (clip_arrays, FLOATS + INTS),
    (where_, FLOATS + INTS), (concatenate_, ALL), (concatenate_flat, ALL), (stack_, ALL), (reshape_fn, ALL),
    (reshape_method, ALL), (transpose_fn, ALL), (transpose_T, FLOATS + INTS), (transpose_method, ALL),
    (argsort_default, FLOATS), (argsort_axis0, FLOATS), (argsort_stable, FLOATS + INTS), (sort_axis0, FLOATS + INTS),
    (maximum_, ALL), (minimum_, FLOATS + INTS), (arithmetic, FLOATS + INTS + (torch.bool,)),
    (int_arithmetic, INTS), (comparisons, FLOATS + INTS), (unary_minus, FLOATS + INTS), (astype_float32, ALL),
    (astype_int, FLOATS + INTS), (astype_bool, ALL), (asarray_dtype, ALL), (shape_arithmetic, FLOATS + INTS),
    (index_basic, FLOATS + INTS), (index_scalar, ALL), (index_mask, FLOATS + INTS), (rank_gauss, FLOATS),
    (scalar_chain, FLOATS + INTS), (percentile_all, FLOATS + INTS), (percentile_axis, FLOATS + INTS),
    (percentile_list_keepdims, FLOATS + INTS), (percentile_list_all, FLOATS + INTS), (quantile_axis, FLOATS + INTS),
    (quantile_list, FLOATS + INTS), (quantile_int_q, FLOATS + INTS), (quantile_keepdims_all, FLOATS + INTS),
    (norm_default, ALL), (norm_axis, ALL), (norm_orders, FLOATS + INTS), (norm_keepdims, FLOATS + INTS),
    (norm_flat_ord, FLOATS + INTS), (norm_fro_two_axes, FLOATS + INTS),
]
PARAMS = [pytest.param(fn, dtype, shape, id=f"{fn.__name__}-{str(dtype)[6:]}-{'x'.join(map(str, shape))}")
          for fn, dtypes in CASES for dtype in dtypes for shape in SHAPES]


@pytest.mark.parametrize("fn, dtype, shape", PARAMS)
def test_numpy_matches_real_numpy(fn, dtype, shape):
    inputs = [(_random(shape, dtype, seed), _random(shape, dtype, seed + 100)) for seed in (1, 2)]
    export_and_compare(OnArrays(fn), inputs[0], inputs)


def test_numpy_with_a_dynamic_axis():
    inputs = [(_random((n, 3), torch.float32, n), _random((n, 3), torch.float32, n + 1)) for n in (5, 8)]
    export_and_compare(OnArrays(rank_gauss), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}, "y": {0: "n"}})


def order_statistics(a, b):
    return (np.percentile(a, [0, 33, 50, 100], axis=0), np.quantile(a, 0.75, axis=-1, keepdims=True),
            np.linalg.norm(a, axis=0), np.linalg.norm(a, ord=np.inf, axis=1))


def test_order_statistics_and_norms_with_nan_inf_and_a_dynamic_axis():
    """NaN in a slice gives NaN; inf next to the interpolated element gives NumPy's NaN
    (its `_lerp` computes `inf - inf`); the sorted axis may be a dynamic one."""
    special = torch.tensor([[1.0, float("nan"), 2.0], [float("inf"), 3.0, -1.0], [0.5, 0.25, float("-inf")],
                            [2.0, 2.0, 2.0]])
    inputs = [(_random((n, 3), torch.float32, n), _random((n, 3), torch.float32, n + 1)) for n in (5, 8)]
    inputs.append((special, special))
    export_and_compare(OnArrays(order_statistics), inputs[0], inputs, dynamic_shapes={"x": {0: "n"}, "y": {0: "n"}})


class BackToTorch(nn.Module):
    def forward(self, x):
        a = np.asarray(x)
        t1 = torch.from_numpy(a * 2)
        t2 = torch.as_tensor(a.mean(axis=0), dtype=torch.float64)
        t3 = torch.tensor(a.sum())
        t4 = torch.asarray(a.astype(np.int64))
        return t1 + 1, t2, t3, t4


def test_conversions_back_to_torch_keep_numpy_dtypes():
    x = _random((3, 4), torch.float32, 0)
    export_and_compare(BackToTorch(), (x,), [(x,), (x * 3,)])


class BranchOnNumpy(nn.Module):
    def forward(self, x):
        a = x.numpy()
        if a.mean() > 0:
            out = a * 2
        else:
            out = a - 1
        return torch.from_numpy(out)


def test_data_dependent_branch_on_a_numpy_value_becomes_an_if():
    x = _random((3, 4), torch.float32, 0)
    export_and_compare(BranchOnNumpy(), (x,), [(x.abs(),), (-x.abs(),)])


# ---------------------------------------------------------------- refusals


def median_(a, b):
    return np.median(a)


def cumsum_method(a, b):
    return a.cumsum()


def where_one_arg(a, b):
    return np.where(a > 0)


def sort_in_place(a, b):
    a.sort()
    return a


def aug_assign(a, b):
    a += 1
    return a


def index_assign(a, b):
    a[0] = 1
    return a


def out_argument(a, b):
    return np.exp(a, out=b)


def tolist_(a, b):
    return a.tolist()


def random_(a, b):
    return a + np.random.rand(*a.shape)


def argsort_order(a, b):
    return a.argsort(order="x")


def percentile_method(a, b):
    return np.percentile(a, 50, method="nearest")


def percentile_data_q(a, b):
    return np.percentile(a, b.max())


def percentile_two_axes(a, b):
    return np.percentile(a, 50, axis=(0, 1))


def quantile_out_of_range(a, b):
    return np.quantile(a, 1.5)


def norm_matrix(a, b):
    return np.linalg.norm(a, ord=2)


def norm_matrix_axes(a, b):
    return np.linalg.norm(a, ord=1, axis=(0, 1))


class RawTensorIntoNumpy(nn.Module):
    def forward(self, x):
        return np.mean(x)


class TensorPlusArray(nn.Module):
    def forward(self, x):
        return np.asarray(x) + x


class FromNumpyScalar(nn.Module):
    def forward(self, x):
        return torch.from_numpy(np.asarray(x).sum())


class ArrayIntoTorchOp(nn.Module):
    def forward(self, x):
        return torch.relu(x.numpy())


class ArraySeesTensorUpdate(nn.Module):
    def forward(self, x):
        h = x * 2
        a = np.asarray(h)
        h.add_(1)
        return torch.from_numpy(a.mean(axis=0))


REFUSED = [
    (OnArrays(median_), "NumPy function `numpy.median`"),
    (OnArrays(cumsum_method), "`ndarray.cumsum` on tensor data is not supported"),
    (OnArrays(where_one_arg), "numpy.where returns a tuple"),
    (OnArrays(sort_in_place), "`ndarray.sort` on tensor data is not supported"),
    (OnArrays(aug_assign), "in-place update of the NumPy array `a`"),
    (OnArrays(index_assign), "in-place update of the NumPy array `a`"),
    (OnArrays(out_argument), "with `out=`"),
    (OnArrays(tolist_), "`ndarray.tolist` on tensor data is not supported"),
    (OnArrays(random_), "`numpy.rand` is not supported"),
    (OnArrays(argsort_order), "ndarray.argsort fails in NumPy"),
    (OnArrays(percentile_method), "numpy.percentile with method='nearest' is not supported"),
    (OnArrays(percentile_data_q), "numpy.percentile with q computed from tensor data"),
    (OnArrays(percentile_two_axes), "numpy.percentile over several axes"),
    (OnArrays(quantile_out_of_range), "Quantiles must be in the range"),
    (OnArrays(norm_matrix), "(?s)ord=2 of a 2-d array \\(a matrix norm\\).*axis=-1"),
    (OnArrays(norm_matrix_axes), "ord=1 over two axes \\(a matrix norm\\)"),
    (RawTensorIntoNumpy(), "a torch tensor mixed with NumPy arrays"),
    (TensorPlusArray(), "a torch tensor mixed with NumPy arrays"),
    (FromNumpyScalar(), "torch.from_numpy of a NumPy scalar"),
    (ArrayIntoTorchOp(), "a NumPy array passed to a torch operation"),
    (ArraySeesTensorUpdate(), "in-place update of `h` at line"),
]


@pytest.mark.parametrize("model, message", REFUSED,
                         ids=lambda v: (getattr(v, "fn", None) or v).__class__.__name__ if isinstance(v, nn.Module)
                         and not hasattr(v, "fn") else getattr(getattr(v, "fn", None), "__name__", ""))
def test_unsupported_numpy_is_refused_with_the_call(model, message):
    x = _random((3, 4), torch.float32, 0)
    args = (x, x.clone()) if isinstance(model, OnArrays) else (x,)
    with pytest.raises(LoweringError, match=message) as info:
        export(model, args)
    assert info.value.path.endswith("test_numpy_arrays.py") and info.value.line
