"""Order statistics and norms: percentile, quantile, linalg.norm."""

from __future__ import annotations

import numpy as np
import torch

from lowering.numpy_arrays.reductions import reduce_axes
from lowering.numpy_arrays.table import lowers, refuse_given
from lowering.numpy_arrays.values import EAGER_RAISES, USE_TORCH, array_value, compute_dtype, has_graph, operand, wrap


def _known_q(interp, q, name: str) -> np.ndarray:
    if has_graph([q], {}):
        raise interp.error(f"{name} with q computed from tensor data is not supported by untrace",
                           "q must be a Python number or a list of them, known at export time", construct=name)
    qa = np.asarray(q)
    if qa.ndim > 1 or qa.dtype.kind not in "iuf":
        raise interp.error(f"{name} with q of shape {qa.shape} / dtype {qa.dtype} is not supported by untrace "
                           "(a number or a flat list of numbers)", construct=name, hint=USE_TORCH)
    return qa


def _quantile_impl(interp, like, name: str, a, q, axis, out, overwrite_input, method, keepdims, weights,
                   percent: bool):
    """NumPy's default `method="linear"` quantile, as `numpy.lib._function_base_impl._quantile`
    computes it: sort along the axis, virtual index `(n - 1) * q` in float64, its floor and
    the next index (both the last one when the index is at or past `n - 1`), gamma =
    index - floor, and `_lerp`: `a + (b - a) * g`, or `b - (b - a) * (1 - g)` where
    g >= 0.5 (so inf and NaN propagate as NumPy's do). A slice holding a NaN gives NaN. An
    integer q to `quantile` takes the element without interpolation, as NumPy does."""
    refuse_given(interp, name, out=out, weights=weights)
    if method != "linear":
        raise interp.error(f"{name} with method={method!r} is not supported by untrace (only the default "
                           "'linear')", construct=name, hint=USE_TORCH)
    qa = _known_q(interp, q, name)
    qs = np.true_divide(qa, 100) if percent else qa  # what NumPy interpolates with
    x = array_value(interp, a, name)
    rank = x.rank
    if axis is not None and isinstance(axis, tuple):
        if len(axis) != 1:
            raise interp.error(f"{name} over several axes is not supported by untrace (one axis or None)",
                               construct=name, hint=USE_TORCH)
        axis = axis[0]
    dt = like.dtype if np.issubdtype(like.dtype, np.floating) else np.dtype(np.float64)
    compute = compute_dtype(interp, dt, name)
    g = interp.g
    v = g.cast(x, compute)
    if axis is None:
        v, d = interp.call_op("Tensor.reshape", [v, [-1]], {}), 0
    else:
        (d,) = reduce_axes(interp, axis, rank, name)
    srt = interp.call_op("torch.sort", [v], {"dim": d})[0]
    n = g.size(srt, d)
    n64 = g.const(n, torch.int64) if isinstance(n, int) else g.cast(n, torch.int64)
    last = g.op("Sub", n64, g.const(1, torch.int64))
    qv = g.const(np.asarray(qs, dtype=np.float64 if qs.dtype.kind == "f" else np.int64).reshape(-1))
    count = qv.static_shape[0]
    if qs.dtype.kind in "iu":  # NumPy's `supports_integers` path: take, no interpolation
        index = g.op("Mul", last, qv)
        result = interp.call_op("torch.index_select", [srt, d, index], {})
    else:
        virtual = g.op("Mul", g.cast(last, torch.float64), qv)
        above = g.op("GreaterOrEqual", virtual, g.cast(last, torch.float64))
        below = g.op("Less", virtual, g.const(0.0, torch.float64))
        floor = g.op("Floor", virtual)
        prev = g.op("Where", above, g.const(-1.0, torch.float64), g.op("Where", below, g.const(0.0, torch.float64),
                                                                            floor))
        nxt = g.op("Where", above, g.const(-1.0, torch.float64), g.op("Where", below, g.const(0.0, torch.float64),
                                                                           g.op("Add", floor,
                                                                                g.const(1.0, torch.float64))))
        gamma = g.op("Sub", virtual, prev)  # NumPy subtracts the index it adjusted (-1 past the end)

        def position(i):
            i = g.cast(i, torch.int64)
            return g.op("Where", g.op("Less", i, g.const(0, torch.int64)), g.op("Add", i, n64), i)

        lo = interp.call_op("torch.index_select", [srt, d, position(prev)], {})
        hi = interp.call_op("torch.index_select", [srt, d, position(nxt)], {})
        t = interp.call_op("Tensor.reshape", [g.cast(gamma, compute), [-1 if i == d else 1 for i in range(srt.rank)]],
                           {})
        diff = g.op("Sub", hi, lo)
        near_lo = g.op("Add", lo, g.op("Mul", diff, t))
        near_hi = g.op("Sub", hi, g.op("Mul", diff, g.op("Sub", g.const(1.0, compute), t)))
        half = g.op("GreaterOrEqual", t, g.const(0.5, compute))
        result = g.op("Where", half, near_hi, near_lo)
    if compute.is_floating_point and x.dtype.is_floating_point:
        has_nan = interp.call_op("torch.any", [interp.call_op("torch.isnan", [v], {})], {"dim": d, "keepdim": True})
        result = g.op("Where", has_nan, g.const(float("nan"), compute), result)
    if qa.ndim == 0:
        if axis is None:
            result = interp.call_op("Tensor.reshape", [result, [1] * rank if keepdims else []], {})
        elif not keepdims:
            result = g.squeeze(result, [d])
    else:
        if axis is None:
            result = interp.call_op("Tensor.reshape", [result, [count] + [1] * rank if keepdims else [count]], {})
        else:
            result = interp.call_op("torch.movedim", [result, d, 0], {})
            if keepdims:
                result = g.unsqueeze(result, [d + 1])
    return wrap(interp, result, like)


@lowers(np.percentile)
def _percentile(interp, like, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None):
    return _quantile_impl(interp, like, "numpy.percentile", a, q, axis, out, overwrite_input, method, keepdims,
                          weights, percent=True)


@lowers(np.quantile)
def _quantile(interp, like, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
              weights=None):
    return _quantile_impl(interp, like, "numpy.quantile", a, q, axis, out, overwrite_input, method, keepdims,
                          weights, percent=False)


@lowers(np.linalg.norm)
def _norm(interp, like, x, ord=None, axis=None, keepdims=False):
    """`numpy.linalg.norm` in its vector forms, as NumPy computes them: integer and bool
    arrays in float64; ord None/2 `sqrt(sum(x * x))`, 1 `sum(|x|)`, inf/-inf `max`/`min` of
    `|x|`, 0 the count of nonzeros, another number p `sum(|x| ** p) ** (1 / p)`. With
    `axis=None` and `ord=None` over the flattened array (the Frobenius norm of a matrix);
    over two axes only the Frobenius norm (`ord=None` or `"fro"`). Other matrix norms are
    refused."""
    name = "numpy.linalg.norm"
    v = array_value(interp, x, name)
    rank = v.rank
    compute = compute_dtype(interp, like.dtype, name)
    value = operand(interp, x, compute)
    if axis is None:
        if ord is None:
            dims, square = None, True
        elif rank == 1:
            dims, square = [0], ord == 2
        else:
            raise interp.error(f"{name} with ord={ord!r} of a {rank}-d array (a matrix norm) is not supported by "
                               "untrace", "give the axis of a vector norm (axis=-1), or use torch.linalg.matrix_norm "
                               "on the tensor", construct=name)
    else:
        dims = reduce_axes(interp, axis, rank, name)
        if len(dims) == 2:
            if ord not in (None, "fro"):
                raise interp.error(f"{name} with ord={ord!r} over two axes (a matrix norm) is not supported by untrace "
                                   "(only the Frobenius norm)", "use torch.linalg.matrix_norm on the tensor",
                                   construct=name)
            square = True
        elif len(dims) == 1:
            square = ord is None or ord == 2
        else:
            raise interp.error(f"{name} over {len(dims)} axes (eager raises)", construct=name, hint=EAGER_RAISES)
    if not isinstance(ord, (int, float, type(None), str)) or isinstance(ord, bool):
        raise interp.error(f"{name} with ord={ord!r} is not supported by untrace", construct=name, hint=USE_TORCH)

    def reduce(op, t):
        args = {} if dims is None and not keepdims else {"dim": list(range(rank)) if dims is None else dims,
                                                          "keepdim": bool(keepdims)}
        if rank == 0:
            args = {}
        return interp.call_op(op, [t], args)

    g = interp.g
    if square:
        result = interp.call_op("torch.sqrt", [reduce("torch.sum", g.op("Mul", value, value))], {})
    elif ord == float("inf"):
        result = reduce("torch.amax", interp.call_op("torch.abs", [value], {}))
    elif ord == float("-inf"):
        result = reduce("torch.amin", interp.call_op("torch.abs", [value], {}))
    elif ord == 0:
        result = reduce("torch.sum", g.cast(g.op("Not", g.op("Equal", value, g.const(0, compute))), compute))
    elif ord == 1:
        result = reduce("torch.sum", interp.call_op("torch.abs", [value], {}))
    elif isinstance(ord, (int, float)):
        powered = g.op("Pow", interp.call_op("torch.abs", [value], {}), g.const(float(ord), compute))
        result = g.op("Pow", reduce("torch.sum", powered), g.const(1.0 / ord, compute))
    else:
        raise interp.error(f"{name} with ord={ord!r} is not supported by untrace", construct=name, hint=USE_TORCH)
    if rank == 0 and keepdims:
        result = interp.call_op("Tensor.reshape", [result, []], {})
    return wrap(interp, result, like)
