"""The op table `untrace check` reads (analyzer/data/onnx_ops.py) is generated from the
lowering registry and torch.onnx; it must not go stale, and what it says must hold."""

from pathlib import Path

import pytest

from analyzer.analyses.kinds import op_table

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "analyzer" / "data" / "onnx_ops.py"


@pytest.fixture(scope="module")
def generated() -> str:
    from lowering.optable import generate

    return generate()


def test_committed_table_is_up_to_date(generated):
    assert TABLE.read_text(encoding="utf-8") == generated, (
        "analyzer/data/onnx_ops.py is stale: run `make optable` "
        "(python -m lowering.optable > analyzer/data/onnx_ops.py)")


def test_table_agrees_with_the_registry():
    from lowering.ops import registry

    assert op_table.untrace_lowers("torch.relu", 18)
    assert op_table.untrace_lowers("torch.nn.Linear", 18)
    assert op_table.untrace_lowers("Tensor.size", 18)  # answered by the interpreter itself
    for name in ("torch.logcumsumexp", "torch.rand"):  # none / registered only to refuse
        assert op_table.untrace_lowers(name, 18) is False, name
        assert all(r.refuses for r in registry.registrations(name)), name
    assert op_table.untrace_lowers("torch.not_a_function", 18) is None  # unknown: rules stay quiet


def test_aliases_resolve_as_the_interpreter_does():
    # torch.conv2d is the same builtin as F.conv2d: both spellings get its lowering.
    assert op_table.untrace_lowers("torch.conv2d", 18) == op_table.untrace_lowers("torch.nn.functional.conv2d", 18)


def test_torch_onnx_first_opsets_match_its_exporter():
    """The legacy exporter really refuses below the listed opset and accepts at it."""
    import io
    import warnings

    import torch
    import torch.nn.functional as F

    assert op_table.torch_onnx_first_opset("torch.nn.functional.grid_sample") == 16
    assert op_table.torch_onnx_first_opset("torch.tril") == 14

    class Grid(torch.nn.Module):
        def forward(self, x, grid):
            return F.grid_sample(x, grid, align_corners=False)

    args = (torch.randn(1, 1, 4, 4), torch.rand(1, 3, 3, 2) * 2 - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Grid(), args, io.BytesIO(), dynamo=False, opset_version=16)
        with pytest.raises(Exception, match="grid_sampler"):
            torch.onnx.export(Grid(), args, io.BytesIO(), dynamo=False, opset_version=15)
