"""A check's memory is bounded per process, not by the size of the tree (issue 25).

A generated tree of 2,040 files (40 packages of 49 blocks, each block calling helpers of
its package) needs 190 MB resident when one process keeps every file's IR and summaries
to the end (measured with `UNTRACE_MEMORY_MB=100000`). With a budget of 100 MB the
worker analysing the files is replaced by a fresh one each time it passes the budget
(`analyzer.workers`), and the run peaks at 100 MB, in 1.12 times the time. The test runs
the check under a data-segment limit of 160 MB (inherited by the workers), which the run
without a budget does not survive (libcst's allocator aborts), and wants every finding
the tree has, and no file left unchecked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS_PER_PACKAGE = 49
PACKAGES = 40
HELPERS = 20


def write_tree(root: Path) -> int:
    """The tree; returns the number of blocks (each has one finding: a `float()` of a
    tensor in its forward)."""
    helpers = "".join(f"""
def mix_{k}(x, weight):
    y = torch.tanh(x) * weight + {k}
    return y.clamp(min=-{k + 1}, max={k + 1})
""" for k in range(HELPERS))
    blocks = 0
    for p in range(PACKAGES):
        package = root / f"pkg{p:03d}"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "layers.py").write_text("import torch\n" + helpers)
        for i in range(p * 50, p * 50 + BLOCKS_PER_PACKAGE):
            blocks += 1
            (package / f"block{i:04d}.py").write_text(f"""import torch
from torch import nn

from .layers import mix_{i % HELPERS}, mix_{(i + 7) % HELPERS}


class Block{i}(nn.Module):
    def __init__(self, width: int = 8):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.scale = {i % 5 + 1}

    def forward(self, x):
        h = mix_{i % HELPERS}(self.proj(x), self.scale)
        h = mix_{(i + 7) % HELPERS}(h, 2)
        return h * float(h.mean())
""")
    return blocks


LIMITED_CHECK = """
import resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
from analyzer.cli import main
sys.exit(main(["check", "--no-cache", "--jobs", "1", "--select", "ALL", "--output-format", "json", "."]))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA counts the heap on Linux only")
def test_a_large_tree_is_checked_within_a_memory_limit(tmp_path):
    blocks = write_tree(tmp_path)
    env = {**os.environ, "UNTRACE_MEMORY_MB": "100", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", LIMITED_CHECK, str(160 * 2**20)], cwd=tmp_path, env=env,
                          capture_output=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr.decode(errors="replace")[-2000:]
    findings = json.loads(done.stdout)
    assert [f for f in findings if f["code"] == "UT000"] == []
    assert sorted({f["path"] for f in findings if f["code"] == "UT201"}) == sorted(
        str(p.relative_to(tmp_path)) for p in tmp_path.glob("pkg*/block*.py"))
    assert len(findings) == blocks
