"""What exporter and compiler guards return while untrace exports (`lowering.interp.guards`):
the graph holds the side the guard picks, for every input. transformers' and timm's
guards are read from their source and follow from torch's."""

import importlib

import onnxruntime as ort
import pytest
import torch
from torch import nn

from lowering import export


def _guarded(guard):
    class Guarded(nn.Module):
        def forward(self, x):
            if guard():
                return x + 1
            return x - 1

    return Guarded()


def _library_guard(module: str, name: str):
    from benchmarks.zoo import torchvision_ops

    torchvision_ops.install()  # timm imports torchvision
    return getattr(importlib.import_module(module), name)


GUARDS = [
    ("torch.jit.is_scripting", lambda: torch.jit.is_scripting, False),
    ("torch.jit.is_tracing", lambda: torch.jit.is_tracing, False),
    ("torch._C._get_tracing_state", lambda: torch._C._get_tracing_state, False),
    ("torch.onnx.is_in_onnx_export", lambda: torch.onnx.is_in_onnx_export, False),
    ("torch.compiler.is_compiling", lambda: torch.compiler.is_compiling, False),
    ("torch.compiler.is_dynamo_compiling", lambda: torch.compiler.is_dynamo_compiling, False),
    ("torch._dynamo.is_compiling", lambda: importlib.import_module("torch._dynamo").is_compiling, False),
    ("torch.cuda.is_current_stream_capturing", lambda: torch.cuda.is_current_stream_capturing, False),
    ("torch.compiler.is_exporting", lambda: torch.compiler.is_exporting, True),
    ("transformers is_torchdynamo_compiling",
     lambda: _library_guard("transformers.utils.import_utils", "is_torchdynamo_compiling"), False),
    ("transformers is_jit_tracing", lambda: _library_guard("transformers.utils.import_utils", "is_jit_tracing"), False),
    ("transformers is_tracing", lambda: _library_guard("transformers.utils.import_utils", "is_tracing"), False),
    ("transformers is_torchdynamo_exporting",
     lambda: _library_guard("transformers.utils.import_utils", "is_torchdynamo_exporting"), True),
    ("timm is_exporting", lambda: _library_guard("timm.layers", "is_exporting"), True),
]


@pytest.mark.parametrize("get_guard, value", [g[1:] for g in GUARDS], ids=[g[0] for g in GUARDS])
def test_the_graph_takes_the_side_the_guard_picks(get_guard, value):
    proto = export(_guarded(get_guard()), (torch.randn(2, 3),), dynamic_shapes={"x": {0: "batch"}})
    assert not [n for n in proto.graph.node if n.op_type == "If"]  # decided at export time
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in (torch.randn(2, 3), torch.randn(5, 3)):
        (got,) = session.run(None, {"x": x.numpy()})
        torch.testing.assert_close(torch.from_numpy(got), x + 1 if value else x - 1)


class TracingIdiom(nn.Module):
    """transformers' `torch_int`: a size as a tensor under the tracer, a Python int in eager."""

    def forward(self, x):
        n = x.shape[0]
        n = n.to(torch.int64) if torch.jit.is_tracing() and isinstance(n, torch.Tensor) else int(n)
        return x * n


def test_eager_side_of_a_tracing_idiom_matches_eager():
    from tests.export.harness import export_and_compare

    inputs = [(torch.randn(b, 3),) for b in (2, 5, 1)]
    export_and_compare(TracingIdiom(), inputs[0], inputs, dynamic_shapes={"x": {0: "batch"}})
