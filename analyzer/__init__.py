"""untrace's static side: find trace hazards in PyTorch ``forward`` methods.

    from analyzer import check_source, check_paths   # -> list[Diagnostic]

This module stays import-light (``untrace check`` runs in pre-commit, and ``lowering``
imports analyzer's IR): the re-exports below are resolved lazily on first use, and
nothing here imports torch or onnx.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Diagnostic", "__version__", "check_paths", "check_source"]

_LAZY = {
    "check_source": "analyzer.runner",
    "check_paths": "analyzer.runner",
    "Diagnostic": "analyzer.diagnostics",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'analyzer' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
