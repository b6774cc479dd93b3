"""`untrace export` (and the target loading and argument checks `untrace verify` shares).

TARGET is `package.module:callable` or `path/to/file.py:callable`; the callable returns
the module (a class is instantiated with no arguments). `--weights CKPT` loads a
state dict with `torch.load(weights_only=True)`.

A mistake in the command line, or in the user's code that untrace runs (the target's
import and factory, the checkpoint, inputs that forward cannot take), is a `TargetError`:
one line naming what is wrong, with the file:line of the user's code where there is one,
exit code 2. What else escapes is an untrace bug, and `analyzer.cli.main` says so. A
construct the lowering refuses (`LoweringError`) is neither: exit code 1, as before.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import pickle
import re
import site
import sys
import sysconfig
import traceback
from collections.abc import Mapping

import torch

from analyzer.cli import UsageError
from analyzer.outputs import output_problem
from lowering.errors import LoweringError

_DTYPES = {
    "float32": torch.float32, "float": torch.float32, "f32": torch.float32, "float16": torch.float16,
    "f16": torch.float16, "float64": torch.float64, "double": torch.float64, "bfloat16": torch.bfloat16,
    "int64": torch.int64, "long": torch.int64, "int32": torch.int32, "int": torch.int32, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}

EXIT_CANNOT_LOWER = 1
EXIT_USAGE = 2


class TargetError(UsageError):
    """A TARGET, argument or output path that cannot be used, or the user's code failing
    while untrace runs it: a usage error (exit 2), reported in one line."""


# ======================================================================================
# the user's code: where an exception it raised comes from


def shown(path: str) -> str:
    """A path as messages show it: relative to the working directory when under it."""
    from lowering.verification.coverage import display_path

    return display_path(os.path.abspath(path))


@functools.cache
def _not_user_code() -> tuple[str, ...]:
    """Folders whose frames are not the user's: untrace, the standard library, installed
    packages (torch raising on the user's behalf is reported where the user called it)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = {os.path.join(root, package) for package in ("lowering", "analyzer")}
    folders |= {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders |= set(site.getsitepackages()) | {site.getusersitepackages()}
    return tuple(os.path.realpath(f) + os.sep for f in folders if f)


def user_frame(exc: BaseException, own_file: str | None = None) -> str | None:
    """`path:line` of the deepest frame of ``exc``'s traceback in the user's code: in
    ``own_file`` (the target's file, even when it is installed) or in no folder of
    :func:`_not_user_code`."""
    own = os.path.realpath(own_file) if own_file else None
    excluded = _not_user_code()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
            continue
        real = os.path.realpath(frame.filename)
        if real == own or not real.startswith(excluded):
            return f"{shown(frame.filename)}:{frame.lineno}"
    return None


def describe_exception(exc: BaseException) -> str:
    """`Type: first line of the message` (torch's messages go on for paragraphs)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


@contextlib.contextmanager
def running_user_code(what: str, own_file: str | None = None):
    """Turn what the user's code raises while ``what`` runs ("importing m.py", "calling
    build()") into a TargetError that says where. SystemExit too: a module that calls
    sys.exit() must not end untrace with no word."""
    try:
        yield
    except TargetError:
        raise
    except SyntaxError as exc:
        raise TargetError(f"{_syntax_error_position(exc, own_file)}: syntax error: {exc.msg} (while {what})") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the user's code raises is theirs
        where = user_frame(exc, own_file)
        raise TargetError(f"{where + ': ' if where else ''}{what} raised {describe_exception(exc)}") from None


def _syntax_error_position(exc: SyntaxError, own_file: str | None) -> str:
    """`path:line:column` of the error in a file; for source compiled from a string
    (`<string>`), where the user's code compiled it."""
    if exc.filename and not exc.filename.startswith("<"):
        return f"{shown(exc.filename)}:{exc.lineno}" + (f":{exc.offset}" if exc.offset else "")
    return user_frame(exc, own_file) or f"line {exc.lineno}"


# ======================================================================================
# TARGET


def _is_file_target(location: str) -> bool:
    return location.endswith(".py") or os.sep in location or (os.altsep or os.sep) in location


def target_file(target: str) -> str | None:
    """The file of a `file.py:callable` TARGET (None for a module TARGET)."""
    location = target.rpartition(":")[0]
    return location if location and _is_file_target(location) else None


def load_target(target: str, weights: str | None = None) -> torch.nn.Module:
    location, sep, attr = target.rpartition(":")
    if not sep or not location or not attr:
        raise TargetError(f"TARGET must be `package.module:callable` or `file.py:callable`, got {target!r}")
    if _is_file_target(location):
        module, own_file = _import_file(location), location
    else:
        module = _import_module(location)
        own_file = getattr(module, "__file__", None)
    if not hasattr(module, attr):
        raise TargetError(f"{location} has no attribute {attr!r}")
    model = _build(getattr(module, attr), attr, own_file)
    if not isinstance(model, torch.nn.Module):
        raise TargetError(f"{target} returned {type(model).__name__}, not an nn.Module")
    _check_has_python_forward(model, target)
    if weights:
        load_weights(model, weights)
    return model


def _import_file(location: str):
    if os.path.isdir(location):
        raise TargetError(f"{location}: is a folder; TARGET names a Python file and a callable in it")
    if not os.path.isfile(location):
        raise TargetError(f"{location}: no such file")
    name = "_untrace_target_" + os.path.splitext(os.path.basename(location))[0]
    # an explicit source loader: the file is Python whatever its name ends with
    loader = importlib.machinery.SourceFileLoader(name, location)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    sys.modules[name] = module
    directory = os.path.dirname(os.path.abspath(location))
    sys.path.insert(0, directory)
    try:
        with running_user_code(f"importing {location}", location):
            loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # as `import` does: no half-initialised module left
        raise
    finally:
        sys.path.remove(directory)
    return module


def _import_module(location: str):
    with running_user_code(f"importing {location}"):
        try:
            return importlib.import_module(location)
        except ModuleNotFoundError as exc:
            if exc.name and (location == exc.name or location.startswith(exc.name + ".")):
                raise TargetError(f"cannot import {location}: {exc}") from None
            raise  # a module the target imports is missing: the target's own mistake


def _build(factory, attr: str, own_file: str | None):
    """The module TARGET names: the object itself, or what calling it with no arguments gives."""
    if isinstance(factory, torch.nn.Module) or not callable(factory):
        return factory
    _check_takes_no_arguments(factory, attr)
    with running_user_code(f"calling {attr}()", own_file):
        return factory()


def _check_has_python_forward(model: torch.nn.Module, target: str) -> None:
    """untrace reads forward's Python source: a TorchScript module, or torch.compile's
    wrapper (whose forward takes *args), has none of the user's to read."""
    if isinstance(model, torch.jit.ScriptModule):
        wrapper = "a TorchScript module (from torch.jit.script or torch.jit.trace)"
    elif type(model).__name__ == "OptimizedModule" and hasattr(model, "_orig_mod"):
        wrapper = "a torch.compile wrapper"
    else:
        return
    raise TargetError(f"{target} returned {wrapper}; untrace lowers forward from its Python source: "
                      "return the nn.Module itself")


def _check_takes_no_arguments(factory, attr: str) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call say
        return
    try:
        signature.bind()
    except TypeError:
        needed = [p.name for p in signature.parameters.values()
                  if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        where = _definition(factory)
        raise TargetError(
            f"{where + ': ' if where else ''}{attr} takes required arguments ({', '.join(needed)}), but untrace "
            "calls TARGET with none: name a function that builds the module with no arguments") from None


def _definition(obj) -> str | None:
    """`path:line` of the def of a function, or of a class's __init__."""
    function = obj.__init__ if isinstance(obj, type) else obj
    try:
        function = inspect.unwrap(function)
        return f"{shown(inspect.getsourcefile(function))}:{inspect.getsourcelines(function)[1]}"
    except (TypeError, OSError):
        return None


# ======================================================================================
# --weights


_SAVE_ONE = "untrace loads only those, saved with torch.save(model.state_dict(), PATH)"


def load_weights(model: torch.nn.Module, weights: str) -> None:
    state = read_state_dict(weights)
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError) as exc:
        raise TargetError(f"--weights {weights}: does not fit {type(model).__name__}: {_state_dict_errors(exc)}") from None


def read_state_dict(path: str) -> Mapping:
    """The state dict of the checkpoint at ``path``, read with weights_only=True. When torch
    refuses the file, its advice to retry with weights_only=False is not passed on: that
    runs arbitrary code, which untrace never does for a checkpoint."""
    if os.path.isdir(path):
        raise TargetError(f"--weights {path}: is a folder, not a checkpoint file")
    if not os.path.exists(path):
        raise TargetError(f"--weights {path}: no such file")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except OSError as exc:
        raise TargetError(f"--weights {path}: cannot read it: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - whatever torch.load refuses is the file's fault
        raise TargetError(f"--weights {path}: not a plain state dict ({_why_refused(exc)}); {_SAVE_ONE}") from None
    if isinstance(state, Mapping) and isinstance(state.get("state_dict"), Mapping):
        state = state["state_dict"]
    if not isinstance(state, Mapping):
        raise TargetError(f"--weights {path}: holds a {type(state).__name__}, not a state dict; {_SAVE_ONE}")
    return state


def _why_refused(exc: Exception) -> str:
    if isinstance(exc, pickle.UnpicklingError):
        held = re.search(r"Unsupported global: GLOBAL (\S+)", str(exc))
        return f"it holds a pickled {held[1]}" if held else "it is not a PyTorch checkpoint"
    if isinstance(exc, EOFError):
        return "the file is empty or cut short"
    if isinstance(exc, RuntimeError) and "zip archive" in str(exc):
        return "it is not a PyTorch checkpoint, or one cut short"
    return f"torch.load raised {type(exc).__name__}"


def _state_dict_errors(exc: Exception) -> str:
    """Every missing, unexpected and mis-sized key of load_state_dict's message, on one line."""
    lines = [line.strip().rstrip(".").strip() for line in str(exc).splitlines()]
    lines = [line for line in lines if line and not line.startswith("Error(s) in loading state_dict")]
    return "; ".join(lines)


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
            config = resolve_config([location] if os.path.exists(location) else [])
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


def _with_random_values(inputs: list[tuple[str, torch.Tensor]], model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The inputs with random values instead of zeros, so that what PyTorch refuses is
    their shapes or dtypes, not a value (zeros divide badly)."""
    from lowering.verification.inputs import random_inputs

    return dict(zip([n for n, _ in inputs], random_inputs(inputs, model, [n for n, _ in inputs], n=1)[0]))


# ======================================================================================
# outputs


def check_outputs(outputs: dict[str, str | None], inputs: dict[str, str | None]) -> None:
    """Before any work starts: each output (flag -> path) can be created where it is
    named, and is neither a folder, nor an input file, nor another output."""
    seen: dict[str, str] = {}
    given = {f"the {flag} file": [path] for flag, path in inputs.items() if path}
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


# ======================================================================================
# untrace export


def run_export(args) -> int:
    try:
        return _export(args)
    except TargetError as exc:
        print(f"untrace export: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _export(args) -> int:
    from lowering.exporter import export, save

    output = args.output if args.output is not None else (args.target.rpartition(":")[2] or "model") + ".onnx"
    inputs = parse_inputs(args.input)
    dynamic = parse_dynamic(args.dynamic or [])
    opset = resolve_opset(args.target, args.opset)
    check_outputs({"-o": output}, {"TARGET": target_file(args.target), "--weights": args.weights})

    model = load_target(args.target, args.weights).eval()
    check_forward_takes(model, [n for n, _ in inputs])
    dynamic = check_dynamic(dynamic, dict(inputs))
    try:
        proto = export(model, (), kwargs=dict(inputs), opset=opset, dynamic_shapes=dynamic)
    except Exception as exc:
        _blame_the_inputs(exc, model, inputs)
        if isinstance(exc, LoweringError):
            print(f"untrace export: cannot lower {args.target}:\n{exc}", file=sys.stderr)
            return EXIT_CANNOT_LOWER
        raise
    with writing("-o", output):
        save(proto, output)
    n_if = sum(1 for n in _walk(proto.graph) if n.op_type == "If")
    n_loop = sum(1 for n in _walk(proto.graph) if n.op_type == "Loop")
    print(f"wrote {output}: {sum(1 for _ in _walk(proto.graph))} nodes ({n_if} If, {n_loop} Loop), opset {opset}")
    return 0


def _blame_the_inputs(exc: Exception, model: torch.nn.Module, inputs: list[tuple[str, torch.Tensor]]) -> None:
    """A TargetError when the export failed because the inputs do not fit the model: when
    PyTorch itself cannot run the model on them. Asked after a failure of the lowering (a
    bug, or a shape an ONNX node rejects) and after a LoweringError that mirrors a torch
    error ("... (torch raises)", the lowerings' convention); any other LoweringError is a
    construct that cannot be lowered, reported as it always was, without running forward."""
    if isinstance(exc, LoweringError) and "(torch raises)" not in exc.message:
        return
    refusal = pytorch_refusal(model, kwargs=_with_random_values(inputs, model))
    if refusal is not None:
        raise TargetError(misfit_message(model, inputs, refusal)) from None


def _walk(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.g.node:
                yield from _walk(attr.g)
            for sub in attr.graphs:
                yield from _walk(sub)
