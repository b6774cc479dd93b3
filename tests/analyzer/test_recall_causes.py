"""Hazards once missed on real code and on models of our own (issue 12), each as small
programs in the style of the corpora (`tests.analyzer.marked_cases`): what must be
reported is marked `# expect: UTxxx`, what must not sits unmarked in the same program.
Checked with every rule (`--select ALL`) unless a case says otherwise."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()


def case(name: str, source: str, **options) -> None:
    CASES.add(name, source, **({"select": ["ALL"]} | options))


# A tensor sized by data (nonzero, unique, masked_select, a boolean mask, repeat_interleave
# by tensor repeats, split by sizes from `.tolist()`) has as many rows as the data says:
# iterating it is a data loop (UT102), not a tensor iteration (UT105).
case("data-sized-iteration", """
    import torch
    import torch.nn as nn

    class Router(nn.Module):
        def forward(self, scores: torch.Tensor, boxes: torch.Tensor, repeats: torch.Tensor):
            for e in torch.nonzero(scores):  # expect: UT102
                boxes = boxes + e.sum()
            for i, v in enumerate(torch.unique(scores)):  # expect: UT102
                boxes = boxes + v
            doubled = [w * 2 for w in torch.masked_select(scores, scores > 0)]  # expect: UT102
            for w in scores.repeat_interleave(repeats):  # expect: UT102
                boxes = boxes + w
            for w in boxes[scores > 0]:  # expect: UT102
                boxes = boxes + w.sum()
            for p in torch.split(boxes, repeats.tolist()):  # expect: UT102, UT201
                boxes = boxes + p.sum()
            for p in boxes.split(2):  # static pieces: not a hazard
                boxes = boxes + p.sum()
            for w in scores.repeat_interleave(2):  # expect: UT105
                boxes = boxes + w
            return boxes, doubled
""")

# An `if` that leaves a loop is reported where a fix and a `# noqa` go (UT101), besides
# the loop (UT102), for every loop form; a Python counter of the loop's own iterations
# in a data loop is not (the loop is the finding).
case("loop-exit-branch", """
    import torch
    import torch.nn as nn

    class Refine(nn.Module):
        def forward(self, x, h):
            for i in range(3):  # expect: UT102
                h = h + x
                if h.sum() > 3:  # expect: UT101
                    return h
            while h.mean() > 0:  # expect: UT102
                if h.amax() > 5:  # expect: UT101
                    break
                h = h - 1
            for layer in range(4):
                if h.std() > 1:  # expect: UT101
                    continue
                h = h * 0.5
            steps = 0
            while h.norm() > 1:  # expect: UT102
                if steps == 10:
                    break
                h = h / 2
                steps += 1
            return h
""")

# Tensor iteration: `unbind` rows iterated, a forward argument iterated when both it and
# its rows are used as tensors; a forward argument used only bare stays quiet (a list of
# feature maps is iterated the same way).
case("tensor-iteration", """
    import torch
    import torch.nn as nn

    class PerRow(nn.Module):
        def forward(self, x, feats, dicts):
            sums = [s.sum() for s in x.unbind(1)]  # expect: UT105
            q, k, v = x.unbind(0)
            coords = [c * 2 for c in x.unbind(-1)]  # counted from the end: a fixed axis (box coordinates)
            heads = [h.sum() for h in torch.unbind(x, dim=2)]  # expect: UT105
            b, n = x.shape[:2]
            for row in x:  # expect: UT105
                if row.sum() > 0:  # expect: UT101
                    q = q + 1
            for f in feats:
                f = f.flatten(1)
            for d, t in zip(dicts, torch.relu(x)):  # expect: UT105
                d["t"] = t
            return sums, q + k + v, b * n, coords, heads
""")

# Python containers built from escaped values are data: which keys a dict has, how many
# runs `groupby` finds, how many distinct values a set keeps.
case("containers-from-escapes", """
    import itertools
    import torch
    import torch.nn as nn

    class Buckets(nn.Module):
        def forward(self, x: torch.Tensor, ids: torch.Tensor):
            d = {}
            for i in range(3):
                d[ids[i].item()] = i  # expect: UT201
            for k, v in d.items():  # expect: UT102
                x = x + v
            if 3 not in d:  # expect: UT101
                x = x + 1
            for key, group in itertools.groupby(ids.tolist()):  # expect: UT102, UT201
                x = x + 1
            for u in set(ids.tolist()):  # expect: UT102, UT201
                x = x + u
            names = {"a": 1, "b": 2}
            for k, v in names.items():
                x = x + v
            if "a" in names:
                x = x * 2
            return x
""")

# The NumPy chain: the escape is reported, and its message says the rest is frozen too.
case("numpy-chain", """
    import numpy as np
    import torch
    import torch.nn as nn

    class Rank(nn.Module):
        def forward(self, x: torch.Tensor):
            a = x.detach().numpy()  # expect: UT202
            o = np.argsort(np.percentile(a, [25, 75]))
            return torch.from_numpy(o)
""")


@pytest.mark.parametrize("name", CASES.names())
def test_recall(name):
    CASES.check(name)


def test_numpy_escape_says_the_chain_is_frozen():
    from analyzer import check_source

    source, _ = CASES.cases["numpy-chain"]
    (finding,) = [d for d in check_source(source, path="numpy-chain.py") if d.code == "UT202"]
    assert "the rest of the chain" in finding.message and "`torch.from_numpy`" in finding.message


BASE = '''
import torch
from torch import nn


class Base(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            x = x + 1
        return x
'''

CHILD = '''
import torch
from pkg.base import Base


class Child(Base):
    def forward(self, x):
        return super().forward(x) * 2


class Explicit(Base):
    def forward(self, x):
        return super(Explicit, self).forward(x) - 1


def main():
    torch.onnx.export(Child().eval(), (torch.randn(3),), "c.onnx", dynamo=False)
    torch.onnx.export(Explicit().eval(), (torch.randn(3),), "e.onnx", dynamo=False)
'''


def _tree(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(BASE)
    (pkg / "child.py").write_text(CHILD)
    return pkg


def test_super_forward_keeps_the_base_findings(tmp_path, monkeypatch):
    """`super().forward(x)` runs the base class's forward, defined in another file of the
    tree: its hazard is the subclass's (UT402 names it), reported once, at its line."""
    from analyzer import check_paths

    pkg = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    found = check_paths([str(pkg)], select=["ALL"])
    assert sorted((d.path.rsplit("/", 1)[-1], d.line, d.code) for d in found) == [
        ("base.py", 8, "UT101"), ("child.py", 17, "UT402"), ("child.py", 18, "UT402")]
    ut402 = [d for d in found if d.code == "UT402"]
    assert all("`Base.forward` (pkg/base.py:8)" in d.message for d in ut402), [d.message for d in ut402]


def test_super_forward_into_a_base_outside_the_checked_files(tmp_path, monkeypatch):
    """Checked alone, the base class is not read: the subclass's hazards are unknown, so
    the legacy export is reported as any unresolved one is, not taken for safe."""
    from analyzer import check_paths

    pkg = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    found = check_paths([str(pkg / "child.py")], select=["ALL"])
    assert sorted((d.line, d.code) for d in found) == [(17, "UT402"), (18, "UT402")]
    assert all("uses the legacy tracer" in d.message for d in found)
