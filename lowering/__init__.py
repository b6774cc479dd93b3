"""untrace lowering: an `nn.Module`'s forward source -> ONNX with real If and Loop nodes.

    from lowering import export, verify, register_lowering, LoweringError
    proto = export(module, (x,), dynamic_shapes={"x": {0: "batch"}})
    report = verify(module, [(x1,), (x2,)])

`untrace check` never imports this package (it would bring in torch and onnx).
"""

from lowering.errors import LoweringError
from lowering.exporter import export, save
from lowering.ops.registry import register_lowering
from lowering.verification import VerifyReport, verify

__all__ = ["LoweringError", "VerifyReport", "export", "register_lowering", "save", "verify"]
