"""Code in a package whose name merely starts with `torch` or `numpy` (torchvision,
torchaudio, numpy_utils) is user code: it is lowered from its source, not sent to the
op table (which has no entry for it)."""

from __future__ import annotations

import importlib
import sys

import pytest
import torch

from lowering.interp.functions import _is_user_function

from .harness import export_and_compare

MODEL = '''
import torch


def gate(x):
    if x.sum() > 0:
        return x * 2
    return -x


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return gate(self.lin(x))
'''


@pytest.mark.parametrize("package", ["torchvision_like", "torchaudio_like", "numpy_utils"])
def test_a_package_named_like_torch_is_lowered_from_its_source(tmp_path, monkeypatch, package):
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "blocks.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module(f"{package}.blocks")
        assert _is_user_function(module.gate) and _is_user_function(module.Block)
        torch.manual_seed(0)
        model = module.Block().eval()
        export_and_compare(model, (torch.randn(2, 4),), [(torch.randn(2, 4),), (-torch.ones(2, 4) * 5,), (torch.ones(2, 4) * 5,)])
    finally:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


def test_torch_itself_is_not_user_code():
    assert not _is_user_function(torch.nn.functional.relu)
    assert not _is_user_function(torch.nn.Linear)
