"""Write ``analyzer/data/onnx_ops.py``: the op table as the UT3xx/UT4xx rules read it.

    python -m lowering.optable > analyzer/data/onnx_ops.py      # make optable

``untrace check`` may not import torch, onnx or ``lowering``, so what it needs to know
about ONNX lowerings is generated here, once, as Python literals, from

- untrace's op registry (``lowering.ops.registry``) and the names the interpreter
  answers itself (``Tensor.size``, ``torch.cond``, runtime checks): ``LOWERED`` maps every
  public PyTorch callable, *spelled as in source* (``torch.conv2d``,
  ``torch.nn.functional.conv2d``, ``Tensor.sort``, ``torch.nn.MaxUnpool2d``), to the
  (first, last) opset at which ``untrace export`` lowers it, or None when it has no
  lowering at any opset;
- torch.onnx's TorchScript-based exporter (its symbolic registry): ``TORCH_ONNX_FIRST``
  maps a name to the first opset at which that exporter lowers the aten op the name
  binds (``torch.tril`` -> 14, ``torch.nn.functional.grid_sample`` -> 16). Only names
  whose aten op is certain are listed: builtins named after their aten op, and Python
  ``F`` functions whose scripted graph calls aten ops unconditionally (the opset the
  function needs is then at least the highest of theirs).

A test (``tests/analyzer/test_op_table.py``) regenerates the text in memory and fails
when the committed file is stale.
"""

from __future__ import annotations

import importlib
import inspect
import io
import sys
import warnings

import torch
import torch.nn.functional as F

from lowering import interpreter, numpy_arrays
from lowering.graph import MAX_OPSET, MIN_OPSET
from lowering.ops import registry

# Tensor methods the interpreter answers without the op table (`Interpreter.tensor_method`):
# sizes and ranks come from the graph's shapes, `item` becomes a Reshape, `tolist` an unbind.
_INTERPRETER_TENSOR_METHODS = ("size", "dim", "ndimension", "numel", "nelement", "item", "tolist",
                               "is_floating_point", "get_device")
# Functions it evaluates or drops itself: torch.cond becomes an If; runtime checks are
# dropped as torch.onnx drops them; pure queries run in Python at export time.
# NumPy arrays made from tensor data return to tensors through `numpy_arrays.TO_TORCH`.
_INTERPRETER_FUNCTIONS = ({"torch.cond"} | set(interpreter._RUNTIME_CHECKS) | set(interpreter._PURE_TORCH)
                          | set(numpy_arrays.TO_TORCH))

# Namespaces whose public callables are listed, as the analyzer names them.
_FUNCTION_NAMESPACES = (
    ("torch", torch),
    ("torch.nn.functional", F),
    ("torch.linalg", torch.linalg),
    ("torch.special", torch.special),
    ("torch.fft", torch.fft),
)
# Python operators the analyzer reports as ops (only `//`, see `OpFact`).
_OPERATORS = ("floordiv",)


def _untrace_range(name: str) -> tuple[int, int] | None:
    """(first, last) opset of untrace's built-in lowering of ``name``, None if it has none."""
    regs = [r for r in registry.registrations(name) if not r.user and not r.refuses]
    if not regs:
        return None
    spans = sorted(r.opsets for r in regs)
    for (_, hi), (lo, _) in zip(spans, spans[1:]):
        assert lo <= hi + 1, f"{name}: a gap in its opsets {spans}; the table format assumes none"
    return max(MIN_OPSET, spans[0][0]), min(MAX_OPSET, max(hi for _, hi in spans))


def _public(namespace) -> list[tuple[str, object]]:
    out = []
    for attr in sorted(dir(namespace)):
        if attr.startswith("_"):
            continue
        try:
            obj = getattr(namespace, attr)
        except Exception:  # noqa: BLE001 - lazy attributes may fail
            continue
        if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
            out.append((attr, obj))
    return out


def lowered_table() -> dict[str, tuple[int, int] | None]:
    table: dict[str, tuple[int, int] | None] = {}
    full = (MIN_OPSET, MAX_OPSET)
    for prefix, namespace in _FUNCTION_NAMESPACES:
        for attr, obj in _public(namespace):
            source = f"{prefix}.{attr}"
            if source in table:
                continue
            name = registry.canonical_name(obj) or source
            table[source] = full if source in _INTERPRETER_FUNCTIONS or name in _INTERPRETER_FUNCTIONS \
                else _untrace_range(name)
    for attr, _ in _public(torch.Tensor):
        name = f"Tensor.{attr}"  # the interpreter looks methods up by this name, not by object
        table[name] = full if attr in _INTERPRETER_TENSOR_METHODS else _untrace_range(name)
    for attr in sorted(dir(torch.nn)):
        cls = getattr(torch.nn, attr)
        if inspect.isclass(cls) and issubclass(cls, torch.nn.Module) and not attr.startswith("_"):
            name = f"torch.nn.{attr}"
            # Sequential is unrolled by the interpreter; other containers are never called.
            table[name] = full if cls is torch.nn.Sequential else _untrace_range(name)
    for attr in _OPERATORS:
        table[f"operator.{attr}"] = _untrace_range(f"operator.{attr}")
    return dict(sorted(table.items()))


def _legacy_first_opsets() -> dict[str, int]:
    """aten op name -> first opset of torch.onnx's TorchScript exporter's symbolic."""
    from torch.onnx._internal.torchscript_exporter import registration

    for version in range(7, 30):
        try:
            importlib.import_module(f"torch.onnx._internal.torchscript_exporter.symbolic_opset{version}")
        except ImportError:
            break
    out = {}
    for name, group in registration.registry._registry.items():
        opsets = sorted(group._functions._base)
        if opsets and name.startswith("aten::"):
            out[name[len("aten::"):]] = opsets[0]
    return out


def _unconditional_aten_ops(fn) -> list[str] | None:
    """The aten ops a Python function calls on every path (top-level nodes of its
    TorchScript graph), or None when it cannot be scripted."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = torch.jit.script(fn).graph
    except Exception:  # noqa: BLE001 - not scriptable: no answer
        return None
    return [n.kind()[len("aten::"):] for n in graph.nodes() if n.kind().startswith("aten::")]


def torch_onnx_table() -> dict[str, int]:
    first = _legacy_first_opsets()
    table: dict[str, int] = {}

    def builtin_op(obj) -> str | None:
        name = getattr(obj, "__name__", None)
        if (inspect.isbuiltin(obj) or inspect.ismethoddescriptor(obj)) and name and hasattr(torch.ops.aten, name):
            return name
        return None

    for prefix, namespace in _FUNCTION_NAMESPACES:
        for attr, obj in _public(namespace):
            source = f"{prefix}.{attr}"
            op = builtin_op(obj)
            if op is not None:
                if op in first:
                    table[source] = first[op]
            elif prefix == "torch.nn.functional" and inspect.isfunction(obj):
                called = _unconditional_aten_ops(obj)
                floors = [first[op] for op in called or () if op in first]
                if floors:
                    table[source] = max(floors)
    for attr, obj in _public(torch.Tensor):
        op = builtin_op(obj)
        if op is not None and op in first:
            table[f"Tensor.{attr}"] = first[op]
    return dict(sorted(table.items()))


def render(out: io.TextIOBase) -> None:
    lowered = lowered_table()
    first = torch_onnx_table()
    w = out.write
    w('"""The ONNX op table of the UT3xx/UT4xx rules: generated by `python -m lowering.optable`\n')
    w("(`make optable`) from untrace's op registry and torch.onnx's exporter; do not edit by hand.\n\n")
    w(f"Generated with torch {torch.__version__.split('+')[0]}. See `lowering/optable.py` for what each table means.\n")
    w('"""\n\n')
    w(f"UNTRACE_OPSETS = ({MIN_OPSET}, {MAX_OPSET})\n\n")
    w("# name as written in source -> (first, last) opset untrace lowers it at, or None: no lowering\n")
    w("LOWERED: dict[str, tuple[int, int] | None] = {\n")
    for name, span in lowered.items():
        w(f"    {name!r}: {span!r},\n")
    w("}\n\n")
    w("# name as written in source -> first opset torch.onnx's TorchScript exporter lowers its aten op at\n")
    w("TORCH_ONNX_FIRST: dict[str, int] = {\n")
    for name, opset in first.items():
        w(f"    {name!r}: {opset},\n")
    w("}\n")


def generate() -> str:
    buf = io.StringIO()
    render(buf)
    return buf.getvalue()


def main() -> int:
    sys.stdout.write(generate())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
