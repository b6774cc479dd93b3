"""The sampling frame of the recall labels (`benchmarks/recall_sites.py`): the sites of the
`forward` methods of module classes and of the helpers they reach, and nothing else."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import realworld_precision  # noqa: E402
import recall_sites  # noqa: E402

LAYERS = '''
import torch
from torch import nn


def helper(x):
    if x.sum() > 0:                      # reached from Block.forward
        x = x * 2
    return x


def unused(x):
    if x.sum() > 0:                      # reached by nothing
        return x
    return x


class Base(nn.Module):
    def shared(self, x):
        return x.item()                  # reached through self.shared in a subclass
'''

MODELS = '''
from torch import nn

from .layers import Base, helper


class Block(Base):
    def forward(self, x):
        x = helper(x)
        n = self.shared(x)
        x[0] = n                          # a write
        x.add_(1)                         # an in-place method
        return x if n else -x             # a ternary


class NotAModule:
    def forward(self, x):
        while x.sum() > 0:               # not a module's forward
            x = x - 1
        return x
'''


def _package(tmp_path: Path) -> Path:
    wheel = tmp_path / "pkg_wheel"
    pkg = wheel / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "layers.py").write_text(textwrap.dedent(LAYERS))
    (pkg / "models.py").write_text(textwrap.dedent(MODELS))
    return wheel


def test_the_frame_is_forwards_and_what_they_reach(tmp_path):
    found = {(s["path"], s["line"], s["kind"], s["function"]) for s in recall_sites.sites(_package(tmp_path))}
    assert found == {
        ("pkg/layers.py", 7, "if", "helper"),
        ("pkg/layers.py", 20, "escape", "Base.shared"),
        ("pkg/models.py", 11, "write", "Block.forward"),
        ("pkg/models.py", 12, "in-place", "Block.forward"),
        ("pkg/models.py", 13, "ternary", "Block.forward"),
    }


def test_a_draw_is_fixed_by_its_seed_and_recall_counts_the_reported_hazards(tmp_path, capsys):
    wheel = _package(tmp_path)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    recall_sites.main([str(wheel), "--draw", "3", "--seed", "4", "--out", str(first)])
    recall_sites.main([str(wheel), "--draw", "3", "--seed", "4", "--out", str(second)])
    assert first.read_text() == second.read_text()
    data = json.loads(first.read_text())
    assert data["population"] == 5 and len(data["labels"]) == 3
    for entry in data["labels"]:
        entry["label"] = "hazard"
    first.write_text(json.dumps(data))
    one = data["labels"][0]
    findings = [{"package": one["package"], "path": one["path"], "line": one["line"], "column": 1, "code": "UT101"}]
    capsys.readouterr()
    assert realworld_precision.recall(findings, [str(first)], min_recall=0.5) == 1
    assert "recall: 1/3 = 0.33" in capsys.readouterr().out
    assert realworld_precision.recall(findings, [str(first)], min_recall=0.3) == 0
