"""Appending one node: inputs checked, attributes in ONNX's terms, source location, output
types from inference or the caller."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from onnx import helper

from lowering.builder.dtypes import onnx_dtype
from lowering.builder.value import Value
from lowering.errors import GraphConstructionError


class NodeEmission:
    def op(
        self,
        op_type: str,
        *inputs: Value | None,
        outputs: int = 1,
        domain: str = "",
        out_dtype: torch.dtype | Sequence[torch.dtype] | None = None,
        out_shape: Any = None,
        **attrs: Any,
    ) -> Value | tuple[Value, ...]:
        """Append one node; returns its output Value (a tuple when ``outputs > 1``)."""
        out_names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        dtypes = _per_output(out_dtype, outputs, "out_dtype")
        shapes = _per_output(out_shape, outputs, "out_shape")
        vals = self._emit(op_type, list(inputs), out_names, attrs, domain, dtypes, shapes)
        return vals[0] if outputs == 1 else tuple(vals)

    def _emit(self, op_type, inputs, out_names, attrs, domain, dtypes=None, shapes=None) -> list[Value]:
        in_vals: list[Value | None] = []
        for x in inputs:
            if x is None or isinstance(x, Value):
                in_vals.append(x)
            elif isinstance(x, (np.ndarray, np.generic, torch.Tensor)):
                in_vals.append(self.const(x))
            else:
                raise GraphConstructionError(
                    f"{op_type}: input {x!r} is not a Value (use g.as_value / g.const for Python scalars)"
                )
        while in_vals and in_vals[-1] is None:
            in_vals.pop()
        in_names = ["" if v is None else v.name for v in in_vals]
        onnx_attrs = {}
        for k, a in attrs.items():
            if a is None:
                continue
            if isinstance(a, torch.dtype):
                a = onnx_dtype(a)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(e, torch.dtype) for e in a):
                a = [onnx_dtype(e) for e in a]
            onnx_attrs[k] = a
        node = helper.make_node(op_type, in_names, out_names, name=self.fresh(op_type), domain=domain or None, **onnx_attrs)
        if domain:
            self.use_domain(domain)
        loc = self.current_location
        if loc is not None:
            path, line = loc
            node.metadata_props.add(key="source", value=f"{path}:{line}" if line is not None else path)
        inferred = self._infer(node, in_vals, domain)
        results: list[Value] = []
        for i, name in enumerate(out_names):
            dt, shp = inferred[i] if i < len(inferred) else (None, None)
            want_dt = dtypes[i] if dtypes else None
            if want_dt is not None:
                if dt is not None and dt != want_dt:
                    raise GraphConstructionError(
                        f"{op_type}: output {i} is {dt} by ONNX inference, caller said {want_dt}"
                    )
                dt = want_dt
            if dt is None:
                raise GraphConstructionError(
                    f"{op_type}: cannot infer the dtype of output {i}; pass out_dtype="
                )
            if shapes and shapes[i] is not None:
                shp = tuple(shapes[i])
            results.append(Value(name, dt, shp))
        self.nodes.append(node)
        self._defined.update(out_names)
        self._propagate(node, in_vals, results)
        return results


def _per_output(x: Any, n: int, what: str) -> list | None:
    if x is None:
        return None
    if n == 1:
        if what == "out_shape" and isinstance(x, tuple) and (not x or not isinstance(x[0], (tuple, list))):
            return [x]
        if what == "out_dtype" and isinstance(x, torch.dtype):
            return [x]
        if isinstance(x, list) and len(x) == 1:
            return x
        return [x]
    if not isinstance(x, (list, tuple)) or len(x) != n:
        raise GraphConstructionError(f"{what} must give one entry per output ({n})")
    return list(x)

