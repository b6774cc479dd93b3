"""`untrace export` (and the target loading `untrace verify` shares).

TARGET is `package.module:callable` or `path/to/file.py:callable`; the callable returns
the module (a class is instantiated with no arguments). `--weights CKPT` loads a
state dict with `torch.load(weights_only=True)`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import torch

from lowering.errors import LoweringError

_DTYPES = {
    "float32": torch.float32, "float": torch.float32, "f32": torch.float32, "float16": torch.float16,
    "f16": torch.float16, "float64": torch.float64, "double": torch.float64, "bfloat16": torch.bfloat16,
    "int64": torch.int64, "long": torch.int64, "int32": torch.int32, "int": torch.int32, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}


class TargetError(Exception):
    """A TARGET, --input or --dynamic that cannot be used: a usage error (exit 2)."""


def load_target(target: str, weights: str | None = None) -> torch.nn.Module:
    location, sep, attr = target.rpartition(":")
    if not sep or not location or not attr:
        raise TargetError(f"TARGET must be `package.module:callable` or `file.py:callable`, got {target!r}")
    if location.endswith(".py") or os.sep in location:
        if not os.path.isfile(location):
            raise TargetError(f"{location}: no such file")
        name = "_untrace_target_" + os.path.splitext(os.path.basename(location))[0]
        spec = importlib.util.spec_from_file_location(name, location)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        directory = os.path.dirname(os.path.abspath(location))
        sys.path.insert(0, directory)
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(directory)
    else:
        try:
            module = importlib.import_module(location)
        except ImportError as exc:
            raise TargetError(f"cannot import {location}: {exc}") from None
    if not hasattr(module, attr):
        raise TargetError(f"{location} has no attribute {attr!r}")
    factory = getattr(module, attr)
    model = factory() if callable(factory) and not isinstance(factory, torch.nn.Module) else factory
    if not isinstance(model, torch.nn.Module):
        raise TargetError(f"{target} returned {type(model).__name__}, not an nn.Module")
    if weights:
        try:
            state = torch.load(weights, map_location="cpu", weights_only=True)
        except (OSError, RuntimeError) as exc:
            raise TargetError(f"{weights}: cannot load weights: {exc}") from None
        if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
            state = state["state_dict"]
        try:
            model.load_state_dict(state)
        except RuntimeError as exc:
            raise TargetError(f"{weights}: does not fit {type(model).__name__}: {str(exc).splitlines()[0]}") from None
    return model


def parse_input(spec: str) -> tuple[str, torch.Tensor]:
    """`x:1x3x224x224:float32` (or `x:1,3,224,224`) -> ("x", a tensor of that shape).
    Only the shape and dtype are used by export; the values are zeros."""
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise TargetError(f"--input must be NAME:SHAPE[:DTYPE], got {spec!r}")
    name, shape_text = parts[0], parts[1]
    dtype_name = parts[2] if len(parts) == 3 else "float32"
    if dtype_name not in _DTYPES:
        raise TargetError(f"--input {spec!r}: unknown dtype {dtype_name!r} (one of {', '.join(sorted(_DTYPES))})")
    try:
        shape = [int(d) for d in shape_text.replace(",", "x").split("x")] if shape_text not in ("", "scalar") else []
    except ValueError:
        raise TargetError(f"--input {spec!r}: SHAPE must be sizes separated by x, e.g. 1x3x224x224") from None
    if any(d < 0 for d in shape):
        raise TargetError(f"--input {spec!r}: negative size")
    return name, torch.zeros(shape, dtype=_DTYPES[dtype_name])


def parse_dynamic(specs: list[str]) -> dict[str, dict[int, str]]:
    """`x:0=batch` -> {"x": {0: "batch"}}."""
    out: dict[str, dict[int, str]] = {}
    for spec in specs:
        name, sep, rest = spec.partition(":")
        axis, eq, symbol = rest.partition("=")
        if not sep or not eq or not axis.lstrip("-").isdigit() or not symbol:
            raise TargetError(f"--dynamic must be NAME:AXIS=SYMBOL, got {spec!r}")
        out.setdefault(name, {})[int(axis)] = symbol
    return out


def run_export(args) -> int:
    from lowering.exporter import export, save

    try:
        model = load_target(args.target, args.weights).eval()
        inputs = [parse_input(s) for s in args.input]
        dynamic = parse_dynamic(args.dynamic or [])
    except TargetError as exc:
        print(f"untrace export: {exc}", file=sys.stderr)
        return 2
    names = [n for n, _ in inputs]
    unknown = set(dynamic) - set(names)
    if unknown:
        print(f"untrace export: --dynamic names {', '.join(sorted(unknown))}, which is not an --input", file=sys.stderr)
        return 2
    try:
        proto = export(model, (), kwargs=dict(inputs), opset=args.opset, dynamic_shapes=dynamic)
    except LoweringError as exc:
        print(f"untrace export: cannot lower {args.target}:\n{exc}", file=sys.stderr)
        return 1
    save(proto, args.output)
    n_if = sum(1 for n in _walk(proto.graph) if n.op_type == "If")
    n_loop = sum(1 for n in _walk(proto.graph) if n.op_type == "Loop")
    print(f"wrote {args.output}: {sum(1 for _ in _walk(proto.graph))} nodes ({n_if} If, {n_loop} Loop), opset {args.opset}")
    return 0


def _walk(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.g.node:
                yield from _walk(attr.g)
            for sub in attr.graphs:
                yield from _walk(sub)
