"""untrace lowering: an `nn.Module`'s forward source -> ONNX with real If and Loop nodes.

    from lowering import export, register_lowering, LoweringError
    proto = export(module, (x,), dynamic_shapes={"x": {0: "batch"}})
"""

from lowering.errors import LoweringError
from lowering.export import export, save
from lowering.ops.registry import register_lowering

__all__ = ["LoweringError", "export", "register_lowering", "save"]
