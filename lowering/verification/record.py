"""The conversion record: what was converted, with what, and how close it came.

Tool versions, opset, dynamic axes of each export, the inputs (shape, dtype, origin),
tolerances, per-system error metrics, TracerWarnings, and the hazards ``untrace check``
finds in the model's source files.
"""

from __future__ import annotations

import inspect
import os
import platform
import sys

import torch

from lowering.verification.coverage import display_path


def versions() -> dict:
    import numpy
    import onnx
    import onnxruntime

    from analyzer import __version__

    return {
        "untrace": __version__,
        "torch": torch.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }


def model_name(module: torch.nn.Module) -> str:
    """``Class (path/to/file.py)``: the class and where it is defined."""
    cls = type(module)
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        path = None
    return f"{cls.__qualname__} ({display_path(os.path.abspath(path))})" if path else f"{cls.__module__}.{cls.__qualname__}"


def source_files(module: torch.nn.Module, extra: list[str] = ()) -> list[str]:
    """The files holding the model's own code (not torch's), display paths, in order."""
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    seen: list[str] = []
    for m in module.modules():
        try:
            path = inspect.getsourcefile(type(m))
        except (TypeError, OSError):
            continue
        if not path or os.path.abspath(path).startswith(torch_dir) or "site-packages" in path:
            continue
        shown = display_path(os.path.abspath(path))
        if shown not in seen:
            seen.append(shown)
    for path in extra:
        if path not in seen and os.path.isfile(path):
            seen.append(path)
    return seen


def hazards(paths: list[str]) -> list[dict]:
    """``untrace check`` on each file: the trace hazards, as check's JSON reports them."""
    from analyzer import check_source

    out = []
    for path in paths:
        try:
            with open(path, "rb") as fh:
                source = fh.read()
        except OSError:
            continue
        for d in check_source(source, path):
            out.append({k: v for k, v in d.to_dict().items() if k in (
                "code", "name", "message", "severity", "path", "line", "column", "function", "suggestion")})
    return out


def metrics(per_input) -> dict:
    """Worst-case error metrics of one system over the inputs it ran."""
    ran = [c for c in per_input if c.error is None]
    abs_values = [c.max_abs for c in ran if c.max_abs is not None]
    rel_values = [c.max_rel for c in ran if c.max_rel is not None]
    cos_values = [c.cosine for c in ran if c.cosine is not None]
    return {
        "matched": sum(1 for c in per_input if c.match),
        "of": len(per_input),
        "max_abs": max(abs_values) if abs_values else None,
        "max_rel": max(rel_values) if rel_values else None,
        "min_cosine": min(cos_values) if cos_values else None,
    }


def command_line() -> str:
    return " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
