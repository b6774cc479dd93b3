"""The systems verify runs, each on every input:

- ``eager``: the module itself (ground truth), on cloned inputs, under ``no_grad``;
- ``untrace``: ``lowering.exporter`` (with probe outputs when the exporter offers them)
  on onnxruntime; one export per input *signature* (dtypes, ranks, constants), with the
  axes whose size varies between inputs made dynamic;
- ``trace``: ``torch.onnx.export(dynamo=False)``, traced on the first input;
- ``dynamo``: ``torch.export.export(strict=False)`` then ``torch.onnx.export`` of the
  exported program, on the first input.

Exporter chatter (warnings, log records, prints) is swallowed; TracerWarnings are
counted, because each one marks a place where the trace froze a value.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import onnx
import torch

from lowering.verification import inputs as inp
from lowering.verification.compare import flatten
from lowering.verification.coverage import Probe, display_path, parse_probe


@dataclass
class Export:
    """One export attempt of one system."""

    system: str
    model: onnx.ModelProto | None = None
    error: str | None = None
    seconds: float = 0.0
    tracer_warnings: int = 0
    dynamic_axes: dict = field(default_factory=dict)
    indices: list[int] = field(default_factory=list)  # the inputs it serves (untrace: one group)


@contextlib.contextmanager
def quiet():
    """Swallow warnings, log records and prints; yields the list of caught warnings."""
    out, err = io.StringIO(), io.StringIO()
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            warnings.simplefilter("always")
            yield caught
    finally:
        logging.disable(previous)


def count_tracer_warnings(caught) -> int:
    return sum(1 for w in caught if issubclass(w.category, torch.jit.TracerWarning))


def describe_error(exc: BaseException, limit: int = 400) -> str:
    """One or two lines: the exception's first line and the user's source line."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    where = _user_frame(text)
    if where:
        message += f" (at {where})"
    return message if len(message) <= limit else message[: limit - 3] + "..."


_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')


def _user_frame(text: str) -> str | None:
    for m in _FRAME.finditer(text):
        path = m["path"]
        if "site-packages" not in path and "/torch/" not in path and not path.startswith("<"):
            return f"{display_path(path)}:{m['line']}"
    return None


# ----------------------------------------------------------------------------- eager


def run_eager(module: torch.nn.Module, args) -> list[np.ndarray]:
    with torch.no_grad():
        return flatten(module(*inp.clone(args)))


# ----------------------------------------------------------------------------- ONNX


class OnnxRunner:
    """An onnxruntime session; ``run`` feeds an input's tensor leaves and splits the
    probe outputs from the real ones."""

    def __init__(self, model: onnx.ModelProto | bytes):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        data = model if isinstance(model, bytes) else model.SerializeToString()
        self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        self.run_options = ort.RunOptions()
        self.run_options.log_severity_level = 4
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.probes: list[Probe] = []
        self.real: list[int] = []
        self.probe_index: list[int] = []
        for i, name in enumerate(self.output_names):
            probe = parse_probe(name)
            if probe is None:
                self.real.append(i)
            else:
                self.probes.append(probe)
                self.probe_index.append(i)

    def feeds(self, args, names: list[str]) -> dict[str, np.ndarray]:
        leaves = [t.detach().cpu().numpy() for t in inp.tensor_leaves(args)]
        if len(leaves) == len(self.input_names):
            return dict(zip(self.input_names, leaves))
        by_name = dict(zip(leaf_names(args, names), leaves))
        if all(n in by_name for n in self.input_names):
            return {n: by_name[n] for n in self.input_names}
        raise ValueError(f"the ONNX model takes {len(self.input_names)} inputs ({', '.join(self.input_names)}), "
                         f"the input has {len(leaves)} tensors")

    def run(self, args, names: list[str]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        values = self.session.run(None, self.feeds(args, names), self.run_options)
        return [values[i] for i in self.real], [values[i] for i in self.probe_index]


def leaf_names(args, names: list[str]) -> list[str]:
    """Graph input names as ``lowering.exporter`` gives them (``x``, ``pair_0``, ``d_key``)."""
    out: list[str] = []

    def visit(v, name):
        if isinstance(v, torch.Tensor):
            out.append(name)
        elif isinstance(v, (tuple, list)):
            for i, item in enumerate(v):
                visit(item, f"{name}_{i}")
        elif isinstance(v, dict):
            for k, item in v.items():
                visit(item, f"{name}_{k}")

    for i, a in enumerate(args):
        visit(a, names[i] if i < len(names) else f"arg{i}")
    return out


def _named_dynamic(varying: dict[int, list[int]], names: list[str]) -> dict[str, dict[int, str]]:
    return {names[pos]: {axis: f"{names[pos]}_dim{axis}" for axis in axes}
            for pos, axes in varying.items() if pos < len(names)}


def probes_supported() -> bool:
    from lowering.exporter import export

    return "probes" in inspect.signature(export).parameters


def export_untrace(module, inputs: list[tuple], names: list[str], opset: int) -> list[Export]:
    """One untrace export per input signature."""
    from lowering.exporter import export

    with_probes = probes_supported()
    out = []
    for indices in inp.group_by_signature(inputs):
        group = [inputs[i] for i in indices]
        dynamic = _named_dynamic(inp.varying_axes(group), names)
        start = time.perf_counter()
        result = Export("untrace", dynamic_axes=dynamic, indices=indices)
        kwargs = {"opset": opset, "dynamic_shapes": dynamic or None}
        if with_probes:
            kwargs["probes"] = True
        try:
            with quiet():
                result.model = export(module, inp.clone(group[0]), **kwargs)
        except Exception as exc:  # LoweringError, and bugs of the lowering alike
            result.error = describe_error(exc) if type(exc).__name__ != "LoweringError" else str(exc).strip()
        result.seconds = time.perf_counter() - start
        out.append(result)
    return out


def export_trace(module, inputs: list[tuple], names: list[str], opset: int) -> Export:
    """The legacy TorchScript-trace exporter, traced on the first input."""
    first = inputs[0]
    same_rank = [a for a in inputs if inp.signature(a) == inp.signature(first)]
    dynamic = _named_dynamic(inp.varying_axes(same_rank), names)
    result = Export("trace", dynamic_axes=dynamic, indices=list(range(len(inputs))))
    start = time.perf_counter()
    buffer = io.BytesIO()
    caught = []
    try:
        with quiet() as caught:
            torch.onnx.export(module, inp.clone(first), buffer, dynamo=False, opset_version=opset,
                              input_names=leaf_names(first, names), dynamic_axes=dynamic or None)
        result.model = onnx.load_from_string(buffer.getvalue())
    except Exception as exc:
        result.error = describe_error(exc)
    result.tracer_warnings = count_tracer_warnings(caught)
    result.seconds = time.perf_counter() - start
    return result


def export_dynamo(module, inputs: list[tuple], names: list[str], opset: int) -> Export:
    """torch.export (non-strict), then the ONNX translation of the exported program."""
    first = inputs[0]
    same_rank = [a for a in inputs if inp.signature(a) == inp.signature(first)]
    varying = inp.varying_axes(same_rank)
    result = Export("dynamo", dynamic_axes=_named_dynamic(varying, names), indices=list(range(len(inputs))))
    start = time.perf_counter()
    dynamic_shapes = None
    if varying:
        dynamic_shapes = tuple(
            {axis: torch.export.Dim.AUTO for axis in varying.get(pos, [])} if isinstance(a, torch.Tensor) else None
            for pos, a in enumerate(first))
    try:
        with quiet():
            program = torch.export.export(module, inp.clone(first), strict=False, dynamic_shapes=dynamic_shapes)
            onnx_program = torch.onnx.export(program, inp.clone(first), dynamo=True, opset_version=opset,
                                             verbose=False, optimize=True)
        result.model = onnx_program.model_proto
    except Exception as exc:
        result.error = describe_error(exc)
    result.seconds = time.perf_counter() - start
    return result
