"""untrace lowering: an `nn.Module`'s forward source -> ONNX with real If and Loop nodes.

    from lowering import export, verify, register_lowering, LoweringError
    proto = export(module, (x,), dynamic_shapes={"x": {0: "batch"}})
    report = verify(module, [(x1,), (x2,)])

Names are imported on first use, so that `untrace check` (which builds the whole command
line, `verify`'s arguments included) never imports torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "LoweringError": "lowering.errors",
    "export": "lowering.export",
    "save": "lowering.export",
    "register_lowering": "lowering.ops.registry",
    "verify": "lowering.verify",
    "VerifyReport": "lowering.verify",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'lowering' has no attribute {name!r}")
