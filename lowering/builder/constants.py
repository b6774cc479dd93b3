"""Constants (deduplicated; small ones local to an If branch or Loop body) and
initializers (parameters and buffers, by name)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lowering.builder.dtypes import onnx_dtype
from lowering.builder.protos import _tensor_key, _tensor_to_proto
from lowering.builder.value import Value
from lowering.errors import GraphConstructionError, LoweringError

_LOCAL_CONST_ELEMENTS = 64


class Constants:
    def const(self, value: Any, dtype: torch.dtype | None = None) -> Value:
        """A constant, with ``torch.tensor(value, dtype=dtype)`` semantics for Python
        values (``1.5`` -> float32, ``2`` -> int64, ``True`` -> bool); numpy arrays and
        torch tensors keep their dtype unless ``dtype`` is given.  Deduplicated."""
        if isinstance(value, Value):
            raise GraphConstructionError(f"const() of a graph value {value!r}")
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu()
        elif isinstance(value, (np.ndarray, np.generic)):
            t = torch.from_numpy(np.ascontiguousarray(value))
        else:
            try:
                t = torch.tensor(value, dtype=dtype)
            except (TypeError, ValueError, RuntimeError, OverflowError) as e:
                raise LoweringError(f"cannot make a constant of {value!r}: {e}") from None
        if dtype is not None and t.dtype != dtype:
            t = t.to(dtype)
        onnx_dtype(t.dtype)
        root = self.root
        key = _tensor_key(t)
        if self.parent is not None and t.numel() <= _LOCAL_CONST_ELEMENTS:
            # Inside an If branch or Loop body, small constants are local Constant nodes:
            # ONNX's subgraph shape inference mis-reads outer initializers that feed shape
            # inputs (a Resize's `sizes` built by Concat is seen with 0 elements).
            hit = self._local_consts.get(key)
            if hit is not None:
                return hit
            name = self.fresh("const")
            root._const_tensors[name] = t.clone()
            v = self._emit("Constant", [], [name], {"value": _tensor_to_proto(name + "_value", t)}, "",
                           dtypes=[t.dtype], shapes=[tuple(t.shape)])[0]
            self._local_consts[key] = v
            return v
        hit = root._consts.get(key)
        if hit is not None:
            return hit
        name = self.fresh("const")
        root._initializers[name] = _tensor_to_proto(name, t)
        root._const_tensors[name] = t.clone()
        v = Value(name, t.dtype, tuple(t.shape))
        root._consts[key] = v
        return v

    def initializer(self, name: str, tensor: torch.Tensor) -> Value:
        """A parameter or buffer as an initializer that keeps ``name``; the same name
        twice gives the same Value (and must be the same tensor)."""
        root = self.root
        if name in root._init_values:
            old = root._init_tensors[name]
            same = old is tensor or (
                old.shape == tensor.shape and old.dtype == tensor.dtype and torch.equal(old, tensor.detach().cpu())
            )
            if not same:
                raise GraphConstructionError(f"initializer {name!r} defined twice with different tensors")
            return root._init_values[name]
        if not self._claim(name):
            raise GraphConstructionError(f"initializer name {name!r} is already used by another value")
        t = tensor.detach().cpu()
        root._initializers[name] = _tensor_to_proto(name, t)
        root._init_tensors[name] = t
        v = Value(name, t.dtype, tuple(t.shape))
        root._init_values[name] = v
        return v

