"""Exporting a corpus model on all of its inputs: shared by the export tests and the
benchmarks. Inputs whose shapes differ make those axes dynamic; inputs of another rank
need a graph of their own (ONNX fixes ranks), so inputs are grouped by signature."""

from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path

import onnxruntime as ort
import torch

from lowering import export

from .harness import assert_session_matches

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"


def corpus_names() -> list[str]:
    names = sorted(p.stem for p in CORPORA.glob("*.py") if p.stem != "__init__")
    return names + ["multi_file"]


def load(name: str):
    module = importlib.import_module("corpora.multi_file.model" if name == "multi_file" else f"corpora.{name}")
    path = Path(module.__file__)
    return module, path


def has_data_dependent_control_flow(path: Path) -> bool:
    text = path.read_text()
    if path.parent.name == "multi_file":
        text += (path.parent / "blocks.py").read_text()
    # Asserts on data are runtime checks (dropped from the graph, as torch.onnx does),
    # not branches: only if/elif/while/for/ternary sites need an If or Loop.
    return any(re.search(r"#\s*expect:.*UT10[12]", line) and not line.strip().startswith("assert")
               for line in text.splitlines())


def signature(args) -> tuple:
    return tuple((a.dim(), a.dtype) if isinstance(a, torch.Tensor) else ("py", repr(a)) for a in args)


def groups(inputs: list[tuple]) -> list[list[tuple]]:
    by_sig: dict[tuple, list[tuple]] = {}
    for args in inputs:
        by_sig.setdefault(signature(args), []).append(args)
    return list(by_sig.values())


def dynamic_axes(forward_params: list[str], group: list[tuple]) -> dict:
    out = {}
    for i, name in enumerate(forward_params):
        tensors = [args[i] for args in group if i < len(args) and isinstance(args[i], torch.Tensor)]
        if len(tensors) < 2:
            continue
        axes = {d: f"{name}_{d}" for d in range(tensors[0].dim()) if len({t.shape[d] for t in tensors}) > 1}
        if axes:
            out[name] = axes
    return out


def export_and_compare(model: torch.nn.Module, inputs: list[tuple], *, static: bool = False, **export_kwargs):
    """Export per input group and compare with eager on every input; returns the
    op-type counts of all graphs (If/Loop included, subgraphs counted)."""
    import inspect

    params = list(inspect.signature(type(model).forward).parameters)[1:]
    counts: dict[str, int] = {}
    for group in ([[args] for args in inputs] if static else groups(inputs)):
        first = copy.deepcopy(group[0])
        proto = export(model, first, dynamic_shapes=dynamic_axes(params, group) or None, **export_kwargs)
        node_types(proto.graph, counts)
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        for args in group:
            assert_session_matches(session, model, args, dtypes=False)
    return counts


def node_types(graph, acc: dict) -> dict:
    for node in graph.node:
        acc[node.op_type] = acc.get(node.op_type, 0) + 1
        for attr in node.attribute:
            if attr.g.node:
                node_types(attr.g, acc)
    return acc
