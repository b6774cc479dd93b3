"""Tensors as ONNX protos, a node's subgraphs, and a top-level graph made a checked model
(dead nodes and unused initializers pruned)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from lowering.builder.dtypes import onnx_dtype
from lowering.model_checking import infer_and_check


def _tensor_to_proto(name: str, t: torch.Tensor) -> TensorProto:
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        proto = TensorProto()
        proto.name = name
        proto.data_type = TensorProto.BFLOAT16
        proto.dims.extend(t.shape)
        proto.raw_data = t.view(torch.int16).numpy().tobytes()
        return proto
    onnx_dtype(t.dtype)  # refuses dtypes ONNX lacks
    return numpy_helper.from_array(t.numpy(), name)


def _tensor_key(t: torch.Tensor) -> tuple:
    t = t.detach().cpu().contiguous()
    raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t
    return (t.dtype, tuple(t.shape), raw.numpy().tobytes())


def _subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            yield from attr.graphs


def _prune_graph(graph: onnx.GraphProto) -> set[str]:
    """Drop the nodes (and initializers) no graph output depends on, subgraphs included.

    Returns the names the graph reads from enclosing scopes.
    """
    needed = {o.name for o in graph.output}
    live: list[onnx.NodeProto] = []
    for node in reversed(graph.node):
        if not any(o and o in needed for o in node.output):
            continue
        live.append(node)
        needed.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            needed.update(_prune_graph(sub))
    live.reverse()
    del graph.node[:]
    graph.node.extend(live)
    kept = [init for init in graph.initializer if init.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    defined = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    defined.update(o for n in graph.node for o in n.output)
    return needed - defined


def model_of(graph: onnx.GraphProto, opset: int, domains: dict[str, int],
             initializers: Iterable[TensorProto]) -> onnx.ModelProto:
    """The model of a top-level graph (without its initializers) and its initializers:
    dead nodes and unused initializers removed, shapes inferred, and
    ``onnx.checker.check_model(full_check=True)`` passed."""
    read = _prune_graph(graph)  # the initializers any kept node reads among them
    ir = max(10, helper.find_min_ir_version_for([helper.make_opsetid("", opset)]))
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in domains.items()],
        ir_version=ir,
        producer_name="untrace",
    )
    kept = [init for init in initializers if init.name in read]
    return infer_and_check(model, kept)  # without shipping the weights to C++ and back

