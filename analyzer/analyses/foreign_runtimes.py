"""Other runtimes' objects: what a call into TensorFlow, TFLite, ONNX Runtime, OpenVINO,
ncnn, Core ML, Paddle, TensorRT... returns is that runtime's object (an interpreter, a
compiled model, its output arrays), never a torch tensor.

Such a result stays an `ext` value named under its runtime (`tensorflow.saved_model.load()`),
so that what is read from it and called on it is too: in

    self.interpreter = tflite_runtime.interpreter.Interpreter(model_path=...)  # in __init__
    x = self.interpreter.get_tensor(output["index"])                           # in forward
    return x.numpy()

`x` is TFLite's array and `x.numpy()` no escape of a torch tensor. (The escape is where
the torch input became NumPy for the runtime, `im.cpu().numpy()`, reported there.)
ExecuTorch is not here: its runtime returns torch tensors.
"""

from __future__ import annotations

FOREIGN_RUNTIMES = frozenset({
    "tensorflow", "tflite_runtime", "ai_edge_litert", "keras",
    "onnxruntime", "openvino", "ncnn", "MNN", "coremltools", "coreai",
    "paddle", "tensorrt", "pycuda", "rknn", "rknnlite", "hailo_platform", "dx_engine",
    "ais_bench", "axelera", "tritonclient", "jax", "mlx",
})


def is_foreign(qualname) -> bool:
    """Whether ``qualname`` (an `ext` value's name) is under another runtime."""
    return isinstance(qualname, str) and qualname.split(".", 1)[0] in FOREIGN_RUNTIMES


def foreign_result(qualname: str) -> str:
    """The `ext` name of what calling ``qualname`` returns: an object of the same runtime."""
    return qualname + "()"


def foreign_join(a: str, b: str) -> str:
    """The `ext` name of either of two objects of other runtimes (`tflite_runtime...Interpreter`
    imported, or `tensorflow.lite.Interpreter` when that import failed): still foreign."""
    return a.split(".", 1)[0]
