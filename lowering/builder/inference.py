"""Output dtypes and shapes of a node: ONNX's per-node inference with known input data;
If and Loop from their subgraphs' outputs."""

from __future__ import annotations

from typing import Any

import onnx
import onnx.defs
import onnx.shape_inference
import torch
from onnx import helper

from lowering.builder.dims import _join_dims
from lowering.builder.dtypes import torch_dtype
from lowering.builder.protos import _subgraphs
from lowering.builder.value import Shape, Value, _shape_from_type, _type_proto
from lowering.errors import GraphConstructionError


class TypeInference:
    def _infer(self, node: onnx.NodeProto, in_vals: list[Value | None], domain: str) -> list[tuple[Any, Shape]]:
        op_type = node.op_type
        if op_type == "If":
            return self._infer_if(node)
        if op_type == "Loop":
            return self._infer_loop(node, in_vals)
        if any(True for _ in _subgraphs(node)):
            return []
        version = self.root._domains.get(domain or "", 1)
        try:
            schema = onnx.defs.get_schema(op_type, version, domain or "")
        except Exception:  # unknown op: the caller must say what comes out
            return []
        input_types = {}
        input_data = {}
        for v in in_vals:
            if v is None:
                continue
            input_types[v.name] = _type_proto(v)
            data = self._known_data(v)
            if data is not None:
                input_data[v.name] = data
        try:
            out = onnx.shape_inference.infer_node_outputs(
                schema,
                node,
                input_types,
                input_data,
                opset_imports=[helper.make_opsetid(d, ver) for d, ver in self.root._domains.items()],
            )
        except Exception as e:
            sig = ", ".join("None" if v is None else repr(v) for v in in_vals)
            raise GraphConstructionError(f"{op_type}({sig}) {dict((a.name, helper.get_attribute_value(a)) for a in node.attribute)}: {e}") from None
        result = []
        for name in node.output:
            tp = out.get(name)
            if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.elem_type:
                result.append((None, None))
            else:
                result.append((torch_dtype(tp.tensor_type.elem_type), _shape_from_type(tp)))
        return result

    @staticmethod
    def _graph_output_types(graph: onnx.GraphProto) -> list[tuple[torch.dtype, Shape]]:
        return [(torch_dtype(o.type.tensor_type.elem_type), _shape_from_type(o.type)) for o in graph.output]

    def _infer_if(self, node):
        branches = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
        then_t = self._graph_output_types(branches["then_branch"])
        else_t = self._graph_output_types(branches["else_branch"])
        result = []
        for (dt1, s1), (dt2, s2) in zip(then_t, else_t):
            if dt1 != dt2:
                raise GraphConstructionError(f"If: branch outputs disagree on dtype ({dt1} vs {dt2})")
            if s1 is None or s2 is None or len(s1) != len(s2):
                result.append((dt1, None))
            else:
                result.append((dt1, tuple(_join_dims(a, b) for a, b in zip(s1, s2))))
        return result

    def _infer_loop(self, node, in_vals):
        body = next(a.g for a in node.attribute if a.name == "body")
        outs = self._graph_output_types(body)
        n_carried = len(node.input) - 2
        result = []
        for i, (dt, s) in enumerate(outs[1:]):
            if i < n_carried:
                init = in_vals[2 + i] if 2 + i < len(in_vals) else None
                if init is not None and s is not None and init.shape is not None and len(s) == len(init.shape):
                    s = tuple(_join_dims(a, b) for a, b in zip(s, init.shape))
                result.append((dt, s))
            else:
                result.append((dt, None if s is None else (None, *s)))
        return result

