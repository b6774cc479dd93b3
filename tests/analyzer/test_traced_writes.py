"""What the UT301 / UT304 split claims about in-place writes, measured: a legacy
`torch.onnx.export(dynamo=False)` of each program, run on onnxruntime, against eager
PyTorch on inputs of other sizes. A write the analysis calls local (UT304) must export to
the eager result; its UT301 neighbour must not, or the split would be guessing."""

from __future__ import annotations

import warnings

import pytest

from analyzer import check_source

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
nn = torch.nn


class ViewOfUnreadBase(nn.Module):
    """`Rotary.recompose` of the `view-of-unread-base` case: UT304 only."""

    mrope_section = [4, 2, 2]

    def forward(self, x):
        freq = x[None].expand(3, -1, -1, -1).float().sin() * 1.5
        freqs_thw = freq[0]
        for dim, offset in enumerate((1, 2), start=1):
            idx = slice(offset, self.mrope_section[dim] * 3, 3)
            freqs_thw[..., idx] = freq[dim, ..., idx]
        return torch.cat((freqs_thw, freqs_thw), dim=-1)


class ViewOfReadBase(nn.Module):
    """The base is read after the write: UT301."""

    def forward(self, x):
        base = x * 2
        v = base[0]
        v[:, :2] = 7.0
        return base.sum(0) + v


class ParameterOfModuleBuiltHere(nn.Module):
    """A write into the weight of a module built in this call: UT304 only."""

    def forward(self, x):
        norm = nn.LayerNorm(12)
        with torch.no_grad():
            norm.weight[:2] = x[0, 0, :2]
        return norm(x)


def _source(cls) -> str:
    import inspect
    import textwrap

    return "import torch\nimport torch.nn as nn\n\n" + textwrap.dedent(inspect.getsource(cls))


def _codes(cls) -> set[str]:
    return {d.code for d in check_source(_source(cls), select=["UT301", "UT304"])}


def _worst_difference(module, tmp_path) -> float:
    path = tmp_path / "m.onnx"
    example = torch.randn(2, 5, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), str(path), dynamo=False, input_names=["x"],
                          dynamic_axes={"x": {0: "batch", 1: "length"}})
    session = ort.InferenceSession(str(path))
    worst = 0.0
    for shape in [(2, 5, 12), (3, 7, 12), (1, 2, 12)]:
        x = torch.randn(*shape)
        want = module(x.clone()).detach().numpy()
        got = session.run(None, {"x": x.numpy()})[0]
        worst = max(worst, float(abs(want - got).max()))
    return worst


@pytest.mark.parametrize("cls", [ViewOfUnreadBase, ParameterOfModuleBuiltHere])
def test_local_writes_export_to_the_eager_result(cls, tmp_path):
    assert _codes(cls) == {"UT304"}
    assert _worst_difference(cls().eval(), tmp_path) < 1e-5


def test_a_write_through_a_view_of_a_base_read_later_is_lost(tmp_path):
    assert _codes(ViewOfReadBase) == {"UT301"}
    assert _worst_difference(ViewOfReadBase().eval(), tmp_path) > 1.0
