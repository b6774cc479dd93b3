"""What the exporter-and-compiler guards return while untrace exports.

Libraries branch on "is something capturing a graph now?" to pick a path. untrace
lowers the path eager PyTorch runs, unless a guard's contract is that its path computes
the same result for every input without specializing on the example one:

- `torch.jit.is_scripting()` -> False: untrace reads Python, not TorchScript; the
  scripted branches exist for TorchScript's type system;
- `torch.jit.is_tracing()`, `torch._C._get_tracing_state()` -> False / None, and
  `torch.onnx.is_in_onnx_export()` -> False: untrace is not a tracer. It keeps sizes
  symbolic and data-dependent branches as `If`, so the eager path needs none of the
  tracer's workarounds, and paths taken only inside `torch.onnx.export` may compute
  something else (a deployment shortcut);
- `torch.compiler.is_compiling()`, `torch._dynamo.is_compiling()`,
  `torch.compiler.is_dynamo_compiling()` -> False: their paths serve dynamo (graph
  breaks, globals instead of context variables);
- `torch.cuda.is_current_stream_capturing()` (and xpu's) -> False: no accelerator
  graph is being captured;
- `torch.overrides.has_torch_function(...)` (and `_unary`, `_variadic`) and
  `torch._C._is_torch_function_mode_enabled()` -> False: what forward receives are plain
  tensors and parameters, and no `TorchFunctionMode` is active in eager; torch's own
  pure-Python code read from source (`torch.distributions`, `torch.functional`) then
  takes the path eager takes;
- `torch.compiler.is_exporting()` -> True: code under it avoids Python branches on the
  example input's shapes or values so that one exported graph serves every input, and
  must compute what the other path computes (timm's position-embedding resampling,
  transformers' attention-mask creation). That is what an untrace export is.

Guards defined in Python (transformers' `is_torchdynamo_compiling`, `is_tracing`,
timm's `is_exporting`) are read from their source and follow from these.
"""

from __future__ import annotations

# By where each function is defined (`__module__` and `__name__`), so that reading the
# table imports nothing: `torch._dynamo` is slow to import.
_GUARDS = {
    "torch._jit_internal.is_scripting": False,  # torch.jit.is_scripting
    "torch.jit._trace.is_tracing": False,  # torch.jit.is_tracing
    "torch._C._get_tracing_state": None,
    "torch.onnx.is_in_onnx_export": False,
    "torch.compiler.is_compiling": False,
    "torch.compiler.is_dynamo_compiling": False,
    "torch._dynamo.external_utils.is_compiling": False,  # torch._dynamo.is_compiling
    "torch.compiler.is_exporting": True,
    "torch._C._has_torch_function": False,  # torch.overrides.has_torch_function
    "torch._C._has_torch_function_unary": False,
    "torch._C._has_torch_function_variadic": False,
    "torch._C._is_torch_function_mode_enabled": False,
    "torch.cuda.graphs.is_current_stream_capturing": False,  # no accelerator graph is being captured
    "torch.xpu.graphs.is_current_stream_capturing": False,
}


def _where_defined(func) -> str | None:
    module, name = getattr(func, "__module__", None), getattr(func, "__name__", None)
    return f"{module}.{name}" if isinstance(module, str) and isinstance(name, str) else None


def is_guard(func) -> bool:
    return callable(func) and _where_defined(func) in _GUARDS


def guard_value(func):
    return _GUARDS[_where_defined(func)]
