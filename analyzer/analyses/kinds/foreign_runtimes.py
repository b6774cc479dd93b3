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

So is what entering one as a context gives: `with VDevice() as target:`, and
`stack.enter_context(InferVStreams(...))` of a `contextlib.ExitStack` (whose own
`with ExitStack() as stack:` is the stack itself).

A tensor made from such an array (`torch.from_numpy(outputs[0])`), or from the NumPy
array of a torch tensor (`torch.from_numpy(im.numpy())`), is outside the graph already:
the tracer records it as a constant, the escape that put it there is reported where it
happened, and its own `.numpy()` loses nothing further. What is computed from it and
the graph's tensors (`out + im`) is back in the graph.
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


# Torch functions that make a tensor from an array without a graph input behind it.
_FROM_ARRAY = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.asarray", "torch.tensor"})


def outside_graph(qualname: str, args, ndarray_ref: str) -> bool:
    """Whether calling ``qualname`` on ``args`` makes a tensor from an array outside the
    graph: another runtime's output (an `ext` value under it), or the NumPy array of a
    torch tensor (a Python value whose `ref` is ``ndarray_ref``)."""
    if qualname not in _FROM_ARRAY or not args:
        return False
    array = args[0]
    return (array.type == "ext" and is_foreign(array.ref)) or (array.type == "python" and array.ref == ndarray_ref)


EXIT_STACK = "contextlib.ExitStack()"


def context_call(qualname: str, args):
    """What a `contextlib` call gives that this module knows (an `ext` name or the
    foreign argument entered), else None."""
    if qualname in ("contextlib.ExitStack", "contextlib.AsyncExitStack"):
        return EXIT_STACK
    if qualname == EXIT_STACK + ".enter_context" and args and args[0].type == "ext" and is_foreign(args[0].ref):
        return args[0]
    return None


def entered(value):
    """What `with value as name:` binds, when known: the stack for an `ExitStack`, the
    runtime's object for another runtime's object; else None."""
    if value.type == "ext" and (value.ref == EXIT_STACK or is_foreign(value.ref)):
        return value
    return None


def foreign_result(qualname: str) -> str:
    """The `ext` name of what calling ``qualname`` returns: an object of the same runtime."""
    return qualname + "()"


def foreign_join(a: str, b: str) -> str:
    """The `ext` name of either of two objects of other runtimes (`tflite_runtime...Interpreter`
    imported, or `tensorflow.lite.Interpreter` when that import failed): still foreign."""
    return a.split(".", 1)[0]
