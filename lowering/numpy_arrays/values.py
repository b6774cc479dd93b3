"""NumPy arrays held as graph values: the `NDArray` tag, NumPy <-> torch dtypes, and the
dummy-operand machinery that lets real NumPy decide every result's dtype and kind."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import torch

from lowering.errors import GraphConstructionError
from lowering.graph import Value

# torch functions that turn an NDArray back into a tensor.
TO_TORCH = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.asarray", "torch.tensor"})

EAGER_RAISES = 'eager PyTorch raises here too for these inputs: fix the call'
USE_TORCH = 'do this step with torch on the tensor (untrace lowers torch ops), or with NumPy outside forward'


@dataclasses.dataclass(frozen=True)
class NDArray:
    """A graph value that eager code holds as a NumPy array (or, `scalar`, a NumPy scalar)."""

    value: Value
    scalar: bool = False

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(NUMPY_OF_TORCH[self.value.dtype])

    def __bool__(self) -> bool:
        raise TypeError("an NDArray has no truth value at export time (the interpreter emits an If)")


@dataclasses.dataclass(frozen=True)
class NumpyMethod:
    array: NDArray
    name: str


NUMPY_OF_TORCH = {
    torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64,
    torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
    torch.uint8: np.uint8, torch.bool: np.bool_,
}
TORCH_OF_NUMPY = {np.dtype(v): k for k, v in NUMPY_OF_TORCH.items()}


def torch_dtype(interp, dtype: np.dtype, what: str) -> torch.dtype:
    try:
        return TORCH_OF_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise interp.error(f"{what} gives a NumPy {dtype} array, which untrace does not lower",
                           "convert to float32/float64/int64/bool first", construct="numpy") from None


def compute_dtype(interp, dtype: np.dtype, what: str) -> torch.dtype:
    """The dtype the graph computes in: NumPy's result dtype, float16 widened to float32
    (NumPy's float16 loops compute in float32 and round once)."""
    t = torch_dtype(interp, dtype, what)
    return torch.float32 if t == torch.float16 else t

HINT = "compute it with torch on the tensor (torch.std(..., correction=0) for np.std), or keep NumPy outside forward"


def has_graph(args, kwargs) -> bool:
    def walk(v):
        if isinstance(v, (NDArray, Value)):
            return True
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        if isinstance(v, dict):
            return any(walk(x) for x in v.values())
        return False

    return walk(list(args)) or walk(dict(kwargs))


def dummy(interp, v, what: str, converts: bool = False):
    """A stand-in NumPy argument with `v`'s dtype and rank (see the module docstring)."""
    if isinstance(v, NDArray):
        if v.value.rank is None:
            raise interp.error(f"{what} of an array of unknown rank", construct="numpy",
                               hint="reshape it to a known rank first")
        d = np.ones((1,) * v.value.rank, dtype=v.dtype)
        return d[()] if v.scalar else d
    if isinstance(v, Value):
        if v in interp.python_numbers and v.rank == 0:
            return 1.0 if v.dtype.is_floating_point else True if v.dtype == torch.bool else 1
        if converts and v.dtype in NUMPY_OF_TORCH and v.rank is not None:
            return np.ones((1,) * v.rank, dtype=NUMPY_OF_TORCH[v.dtype])
        raise interp.error(f"{what}: a torch tensor mixed with NumPy arrays (eager hands that to torch, with torch's "
                           "rules) is not supported by untrace",
                           "convert one side explicitly: torch.from_numpy(a) or np.asarray(t)", construct="numpy")
    if isinstance(v, (list, tuple)):
        return type(v)(dummy(interp, x, what, converts) for x in v)
    if isinstance(v, dict):
        return {k: dummy(interp, x, what, converts) for k, x in v.items()}
    if isinstance(v, (torch.Tensor, torch.dtype)):
        raise interp.error(f"{what} with a torch {type(v).__name__} argument is not supported by untrace",
                           construct="numpy", hint=USE_TORCH)
    return v


def dummy_result(interp, what: str, run_numpy, args, kwargs, converts: bool = False):
    dargs = [dummy(interp, a, what, converts) for a in args]
    dkwargs = {k: dummy(interp, v, what, converts) for k, v in kwargs.items()}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = run_numpy(*dargs, **dkwargs)
        except Exception as exc:  # noqa: BLE001 - eager raises on these arguments too
            raise interp.error(f"{what} fails in NumPy for these argument types: {exc}", HINT,
                               construct="numpy") from None
    if not isinstance(result, (np.ndarray, np.generic)):
        raise interp.error(f"{what} returns a {type(result).__name__}, which untrace does not lower", HINT,
                           construct="numpy")
    return result


def like_dtype(like, dtype):
    return like.astype(dtype)


def wrap(interp, value: Value, like) -> NDArray:
    """The graph result as NumPy holds it: the dummy's dtype, rank and array/scalar kind."""
    if isinstance(value, NDArray):
        return value
    if value.rank is not None and value.rank != like.ndim:
        raise GraphConstructionError(f"NumPy lowering gave rank {value.rank}, NumPy gives {like.ndim}")
    value = interp.g.cast(value, torch_dtype(interp, like.dtype, "this NumPy operation"))
    return NDArray(value, scalar=isinstance(like, np.generic))


def array_value(interp, a, name: str) -> Value:
    if isinstance(a, NDArray):
        return a.value
    raise interp.error(f"{name} of a {type(a).__name__} mixed with tensor data is not supported by untrace",
                       construct=name, hint=USE_TORCH)


def operand(interp, v, dtype: torch.dtype) -> Value:
    """An operand as a graph value of `dtype` (NumPy has already decided the dtype)."""
    if isinstance(v, NDArray):
        return interp.g.cast(v.value, dtype)
    if isinstance(v, Value):  # a Python number of eager code (a size, len())
        if dtype not in (torch.int64, torch.float32, torch.float64, torch.float16, torch.bool):
            raise interp.error(f"a run-time Python int mixed with a NumPy {dtype} array: NumPy checks its range, "
                               "which untrace cannot do at export time", construct="numpy",
                               hint="convert the Python int with np.int64(...) / a tensor first")
        return interp.g.cast(v, dtype)
    if isinstance(v, bool) or isinstance(v, (int, float)):
        if isinstance(v, int) and not isinstance(v, bool) and not dtype.is_floating_point and dtype != torch.bool:
            info = torch.iinfo(dtype)
            if not info.min <= v <= info.max:
                raise interp.error(f"the Python int {v} does not fit the NumPy {dtype} array it is used with",
                                   construct="numpy", hint=EAGER_RAISES)
        return interp.g.const(v, dtype)
    if isinstance(v, (np.ndarray, np.generic, list, tuple)):
        arr = np.asarray(v)
        if arr.dtype == object:
            raise interp.error("a list mixing tensor data and Python values in NumPy is not supported by untrace",
                               construct="numpy", hint=USE_TORCH)
        return interp.g.cast(interp.g.const(torch.from_numpy(np.array(arr))), dtype)  # 0-d stays 0-d
    raise interp.error(f"a {type(v).__name__} in NumPy arithmetic is not supported by untrace", construct="numpy",
                       hint=USE_TORCH)
