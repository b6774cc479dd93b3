"""Only `torch` and `numpy` themselves are external: a scanned package whose name merely
starts with them (torchvision, torchaudio, numpy_utils) is followed like any other."""

from __future__ import annotations

import pytest

from analyzer import check_paths


@pytest.mark.parametrize("package", ["torchvision", "torchaudio", "numpy_utils"])
def test_a_package_named_like_torch_is_followed(tmp_path, monkeypatch, package):
    monkeypatch.chdir(tmp_path)
    (tmp_path / package / "ops").mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "ops" / "__init__.py").write_text("")
    (tmp_path / package / "ops" / "gate.py").write_text("def gate(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")
    (tmp_path / package / "model.py").write_text(
        f"import torch\nfrom {package}.ops.gate import gate\n\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, x):\n        return gate(x)\n")
    found = check_paths(["."], use_cache=False, jobs=1)
    assert [(d.path, d.line, d.code, d.call_path) for d in found] == [
        (f"{package}/ops/gate.py", 2, "UT101", ("M.forward", "gate"))]
