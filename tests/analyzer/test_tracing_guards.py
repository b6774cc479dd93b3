"""The tracing guards `untrace check` models (`torch_api.TRUE_WHEN_TRACING` /
`FALSE_WHEN_TRACING`), checked against the real functions while
`torch.onnx.export(dynamo=False)` traces a module that calls them. The check itself
never imports torch; these tests do (slow). The library guards (transformers, timm,
torchvision) are read from the unpacked wheels of issue 12 under `.real-trees/`
(`make real-trees`, which `make test` runs): each function's source is
taken from the file and run, with the helpers it calls, without importing the package."""

from __future__ import annotations

import ast
import io
import warnings
from pathlib import Path

import pytest

from analyzer.analyses.kinds import torch_api as api

REAL = Path(__file__).resolve().parents[2] / ".real-trees"
MISSING = "needs the unpacked wheels under .real-trees (make real-trees)"


def _from_file(path: str, names: list[str], extra: dict | None = None):
    """The function ``names[-1]`` of a library file, defined with the others it calls
    (decorators dropped), in a namespace holding torch."""
    import typing

    import torch

    source = (REAL / path).read_text()
    tree = ast.parse(source)
    namespace = {"torch": torch, "Any": typing.Any, **(extra or {})}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.decorator_list = []
            exec(compile(ast.Module([node], []), path, "exec"), namespace)  # noqa: S102 - the library's own code
    missing = [n for n in names if n not in namespace]
    assert not missing, f"{path}: no {missing}"
    return namespace[names[-1]]


def _torch(dotted: str):
    def load():
        import torch  # noqa: F401 - the root of `dotted`

        obj = __import__(dotted.rsplit(".", 1)[0].split(".")[0])
        for part in dotted.split(".")[1:]:
            obj = getattr(obj, part)
        return obj
    return load


_TRANSFORMERS = "transformers/transformers/utils/import_utils.py"
_TF_HELPERS = ["is_torchdynamo_compiling", "is_torchdynamo_exporting", "is_torch_fx_proxy", "is_fake_tensor",
               "is_jax_jitting", "is_jit_tracing", "is_cuda_stream_capturing", "is_xpu_stream_capturing"]

# (name as matched, where the real function comes from, loader)
GUARDS = [
    ("is_tracing", "torch.jit.is_tracing", _torch("torch.jit.is_tracing")),
    ("is_tracing", "transformers.utils.is_tracing", lambda: _from_file(_TRANSFORMERS, _TF_HELPERS + ["is_tracing"])),
    ("_get_tracing_state", "torch._C._get_tracing_state", _torch("torch._C._get_tracing_state")),
    ("is_in_onnx_export", "torch.onnx.is_in_onnx_export", _torch("torch.onnx.is_in_onnx_export")),
    ("is_jit_tracing", "transformers.utils.import_utils.is_jit_tracing", lambda: _from_file(_TRANSFORMERS, ["is_jit_tracing"])),
    ("_is_tracing", "torchvision._is_tracing", lambda: _from_file("torchvision/torchvision/__init__.py", ["_is_tracing"])),
    ("is_scripting", "torch.jit.is_scripting", _torch("torch.jit.is_scripting")),
    ("is_compiling", "torch.compiler.is_compiling", _torch("torch.compiler.is_compiling")),
    ("is_compiling", "torch._dynamo.is_compiling", _torch("torch._dynamo.is_compiling")),
    ("is_dynamo_compiling", "torch.compiler.is_dynamo_compiling", _torch("torch.compiler.is_dynamo_compiling")),
    ("is_exporting", "torch.compiler.is_exporting", _torch("torch.compiler.is_exporting")),
    ("is_exporting", "timm.layers.is_exporting", lambda: _from_file(
        "timm/timm/layers/helpers.py", ["_compiler_is_exporting", "is_exporting"],
        {"_HAS_COMPILER_IS_EXPORTING": True})),
    ("is_torchdynamo_compiling", "transformers.utils.import_utils.is_torchdynamo_compiling", lambda: _from_file(_TRANSFORMERS, ["is_torchdynamo_compiling"])),
    ("is_torchdynamo_exporting", "transformers.utils.import_utils.is_torchdynamo_exporting", lambda: _from_file(_TRANSFORMERS, ["is_torchdynamo_exporting"])),
    ("is_fx_tracing", "torch.fx._symbolic_trace.is_fx_tracing", _torch("torch.fx._symbolic_trace.is_fx_tracing")),
]


def _values_under_legacy_export(guard) -> set[bool]:
    """What ``guard`` returns in forward while `torch.onnx.export(dynamo=False)` traces it."""
    import torch

    seen: set[bool] = set()

    class Probe(torch.nn.Module):
        def forward(self, x):
            try:
                seen.add(bool(guard(x)))
            except TypeError:  # takes no argument
                seen.add(bool(guard()))
            return x + 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Probe().eval(), (torch.zeros(2),), io.BytesIO(), dynamo=False)
    return seen


def test_every_modelled_guard_is_checked():
    assert {g[0] for g in GUARDS} == api.TRUE_WHEN_TRACING | api.FALSE_WHEN_TRACING


@pytest.mark.slow
@pytest.mark.parametrize("name,where,load", [
    pytest.param(*g, marks=pytest.mark.xfail(not g[1].startswith("torch.") and not (REAL / g[1].split(".")[0]).exists(),
                                               reason=MISSING, run=False))
    for g in GUARDS], ids=[f"{g[0]}-{g[1]}" for g in GUARDS])
def test_guard_value_under_the_legacy_tracer(name, where, load):
    pytest.importorskip("torch")
    modelled = name in api.TRUE_WHEN_TRACING
    assert _values_under_legacy_export(load()) == {modelled}, f"{where}() under the legacy tracer"


@pytest.mark.slow
def test_jit_unused_runs_under_the_tracer_and_script_if_tracing_keeps_branches():
    """`@torch.jit.unused` is traced as written (its branch is a trace hazard: reported);
    `@torch.jit._script_if_tracing` is scripted (its branch is kept: not reported)."""
    import torch

    @torch.jit._script_if_tracing
    def scripted(x):
        if x.sum() > 0:
            return x * 2
        return -x

    class M(torch.nn.Module):
        @torch.jit.unused
        def plain(self, x):
            if x.sum() > 0:
                return x * 2
            return -x

        def forward(self, x, which: int):
            return scripted(x) if which else self.plain(x)

    pos, neg = torch.ones(3), -torch.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced_scripted = torch.jit.trace(lambda x: M()(x, 1), (pos,))
        traced_plain = torch.jit.trace(lambda x: M()(x, 0), (pos,))
    assert torch.equal(traced_scripted(neg), -neg)  # the other branch, kept
    assert torch.equal(traced_plain(neg), neg * 2)  # frozen to the example's branch
