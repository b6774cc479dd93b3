"""The known contents of small int64 shape values (Shape / Gather / Concat / ... chains),
handed to ONNX's inference and used to name the dims of Reshape / Expand / ConstantOfShape."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from lowering.builder.dims import _broadcast_dims, _merge_shapes, _reshape_dims
from lowering.builder.protos import _tensor_to_proto
from lowering.builder.value import Dim, Shape, Value

# A constant this small is handed to ONNX's per-node inference as known data, and its
# contents are tracked for shape arithmetic.
_MAX_PROPAGATED_ELEMENTS = 64


class KnownContents:
    def _known_data(self, v: Value) -> TensorProto | None:
        root = self.root
        t = root._const_tensors.get(v.name)
        if t is not None and t.numel() <= _MAX_PROPAGATED_ELEMENTS:
            return _tensor_to_proto(v.name, t)
        content = root._content.get(v.name)
        if content is not None and all(isinstance(d, int) for d in content) and v.rank in (0, 1):
            arr = np.array(content, dtype=np.int64).reshape(() if v.rank == 0 else (len(content),))
            return numpy_helper.from_array(arr, v.name)
        return None

    def known_dims(self, v: Value) -> tuple[Dim, ...] | None:
        """What is known of the contents of a 1-d (or 0-d) int64 shape value: a tuple of
        int | str (symbolic dim) | None (unknown), or None when nothing is tracked."""
        return self.root._content.get(v.name) if isinstance(v, Value) else None

    def const_value(self, v: Any) -> torch.Tensor | None:
        """The tensor behind a constant made by ``const`` (never a parameter's)."""
        if not isinstance(v, Value):
            return None
        return self.root._const_tensors.get(v.name)

    def _propagate(self, node: onnx.NodeProto, ins: list[Value | None], outs: list[Value]) -> None:
        """Track contents of int64 shape values (Shape/Gather/Concat/... chains) and use
        them to name the output dims of Reshape/Expand/ConstantOfShape."""
        content = self.root._content
        op = node.op_type
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        known = [None if v is None else self._content_of(v) for v in ins]
        out = outs[0]
        new: tuple[Dim, ...] | None = None
        if op == "Shape" and ins[0].shape is not None:
            dims = ins[0].shape
            start = attrs.get("start", 0)
            end = attrs.get("end", len(dims))
            new = tuple(dims[slice(start, end)])
        elif op == "Identity" or (op == "Cast" and ins[0].dtype in (torch.int32, torch.int64) and out.dtype == torch.int64):
            new = known[0]
        elif op == "Gather" and known[0] is not None and known[1] is not None and attrs.get("axis", 0) == 0:
            idx = self._content_of(ins[1])
            if idx is not None and all(isinstance(i, int) for i in idx):
                try:
                    new = tuple(known[0][i] for i in idx)
                except IndexError:
                    new = None
        elif op == "Concat" and all(k is not None for k in known):
            new = tuple(d for k in known for d in k)
        elif op in ("Unsqueeze", "Squeeze", "Reshape") and known[0] is not None and out.rank in (0, 1):
            new = known[0]
        elif op == "Slice" and known[0] is not None and ins[0].rank == 1:
            params = [self._content_of(v) if v is not None else None for v in ins[1:]]
            if all(p is None or all(isinstance(e, int) for e in p) for p in params) and params and params[0] is not None:
                starts, ends = params[0], params[1] if len(params) > 1 else None
                steps = params[3] if len(params) > 3 and params[3] is not None else (1,)
                if ends is not None and len(starts) == 1:
                    n = len(known[0])
                    s, e, st = starts[0], ends[0], steps[0]
                    s = max(min(s, n), -n - 1) if st > 0 else s
                    e = max(min(e, n), -n - 1) if st > 0 else e
                    new = tuple(known[0][slice(s, e, st)])
        if new is not None and out.dtype == torch.int64 and out.rank in (0, 1):
            if out.rank == 0 and len(new) != 1:
                new = None
            if new is not None:
                content[out.name] = tuple(new)
        # Output shapes from known shape contents.
        improved: Shape = None
        if op == "ConstantOfShape" and known[0] is not None:
            improved = tuple(known[0])
        elif op == "Reshape" and len(known) > 1 and known[1] is not None:
            improved = _reshape_dims(ins[0].shape, known[1], attrs.get("allowzero", 0))
        elif op == "Expand" and len(known) > 1 and known[1] is not None:
            improved = _broadcast_dims(ins[0].shape, tuple(known[1]))
        if improved is not None:
            merged = _merge_shapes(out.shape, improved)
            if merged != out.shape:
                outs[0] = dataclasses.replace(out, shape=merged)
                # Values are frozen: callers get the improved one through _emit's list.

    def _content_of(self, v: Value) -> tuple[Dim, ...] | None:
        root = self.root
        if v.name in root._content:
            return root._content[v.name]
        t = root._const_tensors.get(v.name)
        if t is not None and t.dim() <= 1 and not t.dtype.is_floating_point and t.dtype != torch.bool and t.numel() <= _MAX_PROPAGATED_ELEMENTS:
            return tuple(int(e) for e in t.reshape(-1).tolist())
        return None

