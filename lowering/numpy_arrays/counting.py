"""Counting: unique and histogram. Both return several arrays, so their dtypes come from
real NumPy run on the dummy operand, one result at a time (`_dummy_results`)."""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import torch

from lowering.numpy_arrays.table import lowers
from lowering.numpy_arrays.values import EAGER_RAISES, USE_TORCH, array_value, dummy, has_graph, wrap


def _dummy_results(interp, name: str, run_numpy, a) -> tuple:
    """The results of `run_numpy` on the dummy of `a` (see `values.dummy`): their dtypes,
    ranks and kinds are the real call's."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            results = run_numpy(dummy(interp, a, name))
        except Exception as exc:  # noqa: BLE001 - eager raises on these arguments too
            raise interp.error(f"{name} fails in NumPy for these arguments: {exc}", EAGER_RAISES,
                               construct=name) from None
    return results if isinstance(results, tuple) else (results,)


@lowers(np.unique, layout=True)
def _unique(interp, like, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    """`np.unique` of the flattened array: ascending, NaN last, `equal_nan` (the default)
    merging every NaN into one value, as NumPy does (torch keeps each NaN apart: the
    lowering of `torch.unique` is used and its NaN groups merged). `return_inverse` has
    the input's shape (NumPy 2). `axis=`, `return_index=` and `sorted=False` (whose order
    NumPy does not promise) are refused."""
    name = "numpy.unique"
    x = array_value(interp, ar, name)
    for flag, value in (("return_inverse", return_inverse), ("return_counts", return_counts),
                        ("equal_nan", equal_nan), ("sorted", sorted)):
        if has_graph([value], {}) or not isinstance(value, (bool, np.bool_)):
            raise interp.error(f"{name}: {flag} must be a bool known at export time", construct=name, hint=USE_TORCH)
    if axis is not None:
        raise interp.error(f"{name} with axis= (unique slices) is not supported by untrace",
                           "use torch.unique(t, dim=...) on the tensor", construct=name)
    if return_index:
        raise interp.error(f"{name} with return_index=True is not supported by untrace", construct=name,
                           hint=USE_TORCH)
    if not sorted:
        raise interp.error(f"{name} with sorted=False is not supported by untrace: NumPy does not promise an order",
                           "drop sorted=False (the default sorts)", construct=name)
    likes = _dummy_results(interp, name, lambda d: np.unique(d, return_inverse=bool(return_inverse),
                                                             return_counts=bool(return_counts),
                                                             equal_nan=bool(equal_nan)), ar)
    g = interp.g
    results = interp.call_op("torch.unique", [x], {"sorted": True, "return_inverse": bool(return_inverse),
                                                   "return_counts": bool(return_counts)})
    results = list(results) if isinstance(results, tuple) else [results]
    values = results[0]
    inverse = results[1] if return_inverse else None
    counts = results[-1] if return_counts else None
    if equal_nan and x.dtype.is_floating_point:
        # NaNs sort last, one group each: keep the first, fold the others' counts into it.
        nan = g.op("IsNaN", values)
        prev = g.op("Concat", g.const([False]), g.op("Slice", nan, g.const([0], torch.int64),
                                                     g.const([-1], torch.int64)), axis=0)
        keep = g.op("Not", g.op("And", nan, prev))
        values = g.op("Compress", values, keep, axis=0)
        if inverse is not None:
            group = g.op("Sub", g.op("CumSum", g.cast(keep, torch.int64), g.const(0, torch.int64)),
                         g.const(1, torch.int64))
            inverse = g.op("Gather", group, inverse, axis=0)
        if counts is not None:
            nan_total = g.op("ReduceSum", g.op("Where", nan, counts, g.const(0, torch.int64)), keepdims=0)
            counts = g.op("Where", g.op("IsNaN", values), nan_total, g.op("Compress", counts, keep, axis=0))
    out = [values] + ([inverse] if inverse is not None else []) + ([counts] if counts is not None else [])
    wrapped = tuple(wrap(interp, v, lk) for v, lk in zip(out, likes))
    return wrapped if len(wrapped) > 1 else wrapped[0]


_HISTOGRAM_DTYPES = (torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


@lowers(np.histogram, layout=True)
def _histogram(interp, like, a, bins=10, range=None, density=None, weights=None):
    """`np.histogram(a, bins=<int>, range=None | (lo, hi))` as NumPy's equal-bins path
    computes it (`numpy/lib/_histograms_impl.py`): the edges are `np.linspace(first,
    last, bins + 1)` (first/last from `range`, else the array's min and max, widened by
    0.5 each way when equal, (0, 1) for an empty array), in NumPy's dtypes; values outside
    [first, last] (and NaN) are dropped; a value's bin is `int((v - first) / (last -
    first) * bins)` corrected by one against the edges, the last bin closed. Counts are
    int64. With `range=None` NumPy raises on NaN or inf data; the graph cannot, and gives
    counts over a non-finite range. Refused: `bins` as edges or a string, `density=`,
    `weights=`."""
    name = "numpy.histogram"
    x = array_value(interp, a, name)
    if density is not None or weights is not None:
        raise interp.error(f"{name} with density= or weights= is not supported by untrace", construct=name,
                           hint=USE_TORCH)
    if has_graph([bins, range], {}):
        raise interp.error(f"{name} with bins or range computed from tensor data is not supported by untrace",
                           "bins must be a Python int and range a pair of Python numbers", construct=name)
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)):
        raise interp.error(f"{name} with bins={bins!r} is not supported by untrace (only a number of equal bins)",
                           construct=name, hint=USE_TORCH)
    bins = operator.index(bins)
    if bins < 1:
        raise interp.error(f"{name}: `bins` must be positive, when an integer (eager raises)", construct=name,
                           hint=EAGER_RAISES)
    if x.dtype not in _HISTOGRAM_DTYPES:
        raise interp.error(f"{name} of a {x.dtype} array is not supported by untrace", construct=name,
                           hint="convert the array to float32, float64 or an integer dtype first")
    if range is not None:
        first, last = range
        if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                   for v in (first, last)):
            raise interp.error(f"{name} with range={range!r} is not supported by untrace (a pair of numbers)",
                               construct=name, hint=USE_TORCH)
        if first > last:
            raise interp.error(f"{name}: max must be larger than min in range parameter (eager raises)",
                               construct=name, hint=EAGER_RAISES)
        if not (math.isfinite(first) and math.isfinite(last)):
            raise interp.error(f"{name}: supplied range of [{first}, {last}] is not finite (eager raises)",
                               construct=name, hint=EAGER_RAISES)
    hist_like, edges_like = _dummy_results(interp, name, lambda d: np.histogram(d, bins, range), a)
    g = interp.g
    edge_dtype = torch.float64 if edges_like.dtype == np.float64 else torch.float32  # NumPy's bin_type
    flat = interp.call_op("Tensor.reshape", [x, [-1]], {})
    values = g.cast(flat, edge_dtype)  # tmp_a.astype(bin_edges.dtype); compared in it too
    if range is not None:
        if first == last:
            first, last = first - 0.5, last + 0.5
        # NumPy: linspace of Python numbers runs in float64; `last - first` is a float64 (uint64 for ints)
        # NumPy scalar, which makes the index arithmetic float64.
        lo64, hi64 = g.const(float(first), torch.float64), g.const(float(last), torch.float64)
        edges = _linspace(g, lo64, hi64, bins, torch.float64)
        lo, hi = g.cast(lo64, edge_dtype), g.cast(hi64, edge_dtype)
        index_dtype = torch.float64
        span = g.op("Sub", hi64, lo64)
    else:
        # NumPy scalars of the array's dtype (float64 once widened, or for integer arrays).
        lo = g.cast(interp.call_op("torch.min", [flat], {}), edge_dtype)
        hi = g.cast(interp.call_op("torch.max", [flat], {}), edge_dtype)
        size = g.numel(flat)
        empty = g.op("Equal", g.const(size, torch.int64) if isinstance(size, int) else size, g.const(0, torch.int64))
        lo = g.op("Where", empty, g.const(0.0, edge_dtype), lo)
        hi = g.op("Where", empty, g.const(1.0, edge_dtype), hi)
        same = g.op("Equal", lo, hi)
        half = g.const(0.5, edge_dtype)
        lo = g.op("Where", same, g.op("Sub", lo, half), lo)
        hi = g.op("Where", same, g.op("Add", hi, half), hi)
        edges = _linspace(g, lo, hi, bins, edge_dtype)
        index_dtype = edge_dtype
        span = g.op("Sub", hi, lo)
    edges = g.cast(edges, edge_dtype)
    keep = g.op("And", g.op("GreaterOrEqual", values, lo), g.op("LessOrEqual", values, hi))
    scaled = g.op("Mul", g.op("Div", g.cast(g.op("Sub", values, lo), index_dtype), g.cast(span, index_dtype)),
                  g.const(float(bins), index_dtype))
    n = g.const(bins, torch.int64)
    one = g.const(1, torch.int64)
    # Dropped values (and NaN) get index 0 here and bin `bins` (a spill slot) below.
    index = g.cast(g.op("Where", keep, scaled, g.const(0.0, index_dtype)), torch.int64)
    index = g.op("Where", g.op("Equal", index, n), g.op("Sub", n, one), index)
    index = g.op("Sub", index, g.cast(g.op("Less", values, g.op("Gather", edges, index, axis=0)), torch.int64))
    above = g.op("GreaterOrEqual", values, g.op("Gather", edges, g.op("Add", index, one), axis=0))
    index = g.op("Add", index, g.cast(g.op("And", above, g.op("Not", g.op("Equal", index, g.op("Sub", n, one)))),
                                      torch.int64))
    index = g.op("Where", keep, index, n)
    slots = g.const(np.zeros(bins + 1, dtype=np.int64))
    ones = g.op("Expand", g.const(1, torch.int64), g.shape_of(index))
    counts = g.op("ScatterElements", slots, index, ones, axis=0, reduction="add")
    hist = g.op("Slice", counts, g.const([0], torch.int64), g.const([bins], torch.int64))
    return wrap(interp, hist, hist_like), wrap(interp, edges, edges_like)


def _linspace(g, lo, hi, bins: int, dtype: torch.dtype):
    """`np.linspace(lo, hi, bins + 1)` in `dtype`: `arange(bins + 1) * ((hi - lo) / bins) + lo`, the last
    element `hi` exactly."""
    step = g.op("Div", g.op("Sub", hi, lo), g.const(float(bins), dtype))
    y = g.op("Add", g.op("Mul", g.cast(g.const(np.arange(bins + 1, dtype=np.float64)), dtype), step), lo)
    head = g.op("Slice", y, g.const([0], torch.int64), g.const([bins], torch.int64))
    return g.op("Concat", head, g.unsqueeze(hi, [0]), axis=0)
