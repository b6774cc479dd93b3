"""The arguments of `untrace export` / `verify` besides the TARGET: `--input`, `--opset`,
`--dynamic`, inputs the model itself cannot take, and output paths. Each mistake is a
`TargetError` (one line, exit code 2), found before any work starts where it can be."""

from __future__ import annotations

import contextlib
import inspect
import os

import torch

from analyzer.outputs import output_problem
from lowering.targets import TargetError, describe_exception, shown, user_frame

_DTYPES = {
    "float32": torch.float32, "float": torch.float32, "f32": torch.float32, "float16": torch.float16,
    "f16": torch.float16, "float64": torch.float64, "double": torch.float64, "bfloat16": torch.bfloat16,
    "int64": torch.int64, "long": torch.int64, "int32": torch.int32, "int": torch.int32, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}


# ======================================================================================
# --input, --opset, --dynamic


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


def parse_inputs(specs: list[str]) -> list[tuple[str, torch.Tensor]]:
    inputs = [parse_input(s) for s in specs]
    names = [name for name, _ in inputs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise TargetError(f"--input {', '.join(twice)} is given twice")
    return inputs


def input_text(name: str, tensor: torch.Tensor) -> str:
    """An input as `--input` spells it: `x:2x5:float32`."""
    shape = "x".join(str(d) for d in tensor.shape) or "scalar"
    return f"{name}:{shape}:{str(tensor.dtype).replace('torch.', '')}"


def check_forward_takes(model: torch.nn.Module, names: list[str]) -> None:
    """Every name is a parameter of forward, and every parameter without a default is named."""
    owner = f"{type(model).__name__}.forward"
    try:
        params = list(inspect.signature(type(model).forward).parameters.values())[1:]
    except (TypeError, ValueError):  # no Python signature: the lowering will say what it cannot read
        return
    by_name = {p.name: p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    takes = ", ".join({p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name for p in params)
    if not any(p.kind is p.VAR_KEYWORD for p in params):
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise TargetError(f"--input {', '.join(unknown)}: {owner} takes ({takes}), "
                              f"and {', '.join(unknown)} is not one of them")
    missing = [p.name for p in by_name.values() if p.default is p.empty and p.name not in names]
    if missing:
        raise TargetError(f"no --input for {', '.join(missing)}: {owner} takes ({takes}); "
                          f"give --input {missing[0]}:SHAPE:DTYPE")


def resolve_opset(target: str, given: int | None) -> int:
    """``--opset``, else the configured `[tool.untrace] opset`, else the default; one the
    lowering supports."""
    from analyzer.config import ConfigError, resolve_config
    from lowering.graph import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET

    if given is not None:
        opset, origin = given, f"--opset {given}"
    else:
        location = target.rpartition(":")[0]
        try:
            config = resolve_config([location] if os.path.exists(location) else [],
                                    instead="give the opset with --opset N (the configuration is then not read)")
        except ConfigError as exc:
            raise TargetError(str(exc)) from None
        if config.opset is None:
            return DEFAULT_OPSET
        opset, origin = config.opset, f"opset {config.opset} (from [tool.untrace] in {shown(str(config.path))})"
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise TargetError(f"{origin}: not supported; untrace lowers opsets {MIN_OPSET} to {MAX_OPSET}")
    return opset


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


def check_dynamic(dynamic: dict[str, dict[int, str]], inputs: dict[str, torch.Tensor]) -> dict[str, dict[int, str]]:
    """``dynamic`` with its axes checked against the inputs' ranks and made non-negative."""
    out: dict[str, dict[int, str]] = {}
    for name, axes in dynamic.items():
        for axis, symbol in axes.items():
            spec = f"--dynamic {name}:{axis}={symbol}"
            if name not in inputs:
                raise TargetError(f"{spec}: {name} is not an --input (given: {', '.join(inputs) or 'none'})")
            rank = inputs[name].dim()
            if not -rank <= axis < rank:
                raise TargetError(f"{spec}: axis {axis} is out of range for --input "
                                  f"{input_text(name, inputs[name])}, of rank {rank}")
            out.setdefault(name, {})[axis % rank] = symbol
    return out


# ======================================================================================
# inputs the model itself cannot take


def pytorch_refusal(model: torch.nn.Module, args: tuple = (), kwargs: dict | None = None) -> str | None:
    """What eager PyTorch raises when the model runs on these inputs (`RuntimeError: mat1
    and mat2 shapes cannot be multiplied (2x5 and 4x3) at m.py:9`), or None when it runs:
    an input the model itself refuses is the user's mistake, not the lowering's."""
    from lowering.verification.inputs import clone

    try:
        with torch.no_grad():
            model(*clone(args), **clone(kwargs or {}))
    except Exception as exc:  # noqa: BLE001 - any refusal counts; the caller only reports it
        where = user_frame(exc)
        return describe_exception(exc) + (f" at {where}" if where else "")
    return None


def misfit_message(model: torch.nn.Module, inputs: list[tuple[str, torch.Tensor]], refusal: str) -> str:
    given = " ".join(f"--input {input_text(n, t)}" for n, t in inputs)
    verb = "does" if len(inputs) == 1 else "do"
    return f"{given} {verb} not fit {type(model).__name__}.forward: PyTorch raises {refusal}"


def with_random_values(inputs: list[tuple[str, torch.Tensor]], model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The inputs with random values instead of zeros, so that what PyTorch refuses is
    their shapes or dtypes, not a value (zeros divide badly)."""
    from lowering.verification.inputs import random_inputs

    return dict(zip([n for n, _ in inputs], random_inputs(inputs, model, [n for n, _ in inputs], n=1)[0]))


# ======================================================================================
# outputs


def check_outputs(outputs: dict[str, str | None], inputs: dict[str, str | None]) -> None:
    """Before any work starts: each output (flag -> path) can be created where it is
    named, and is neither a folder, nor an input file, nor another output."""
    from analyzer.config import config_candidates

    seen: dict[str, str] = {}
    given = {f"the {flag} file": [path] for flag, path in inputs.items() if path}
    target = inputs.get("TARGET")
    given["a configuration file this run reads"] = config_candidates([target] if target else [])
    for flag, path in outputs.items():
        if path is None:
            continue
        problem = output_problem(flag, path, given)
        if problem is not None:
            raise TargetError(problem)
        key = os.path.realpath(path)
        if key in seen:
            raise TargetError(f"{seen[key]} and {flag} name the same file {path}")
        seen[key] = flag


@contextlib.contextmanager
def writing(flag: str, path: str):
    """An output that cannot be written after all (a full disk, no permission) is a usage
    error too; the writes are atomic, so nothing half-written is left."""
    try:
        yield
    except OSError as exc:
        raise TargetError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
