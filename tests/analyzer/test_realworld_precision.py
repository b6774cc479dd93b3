"""The judged samples of real findings (`benchmarks/data/precision_sample_*.json`) still
hold: `benchmarks/realworld_precision.py` re-runs the default rules over the five trees
of issue 12 and fails when a finding judged right disappeared, or when the judged
findings still reported are less precise than ``MIN_PRECISION``. Slow: it checks the
trees cold, transformers alone takes about two minutes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import realworld_precision  # noqa: E402

# Measured on the judged findings still reported: 36/36 (seed 0), 81/81 (seed 1) and 92/98
# (seed 2, the sample drawn after issue 12's changes: 92/100 as judged).
MIN_PRECISION = 0.93
MISSING = [d for d in realworld_precision.DEFAULT_PACKAGES if not Path(d).is_dir()]


@pytest.mark.slow
@pytest.mark.xfail(bool(MISSING), run=False,
                   reason=f"needs the unpacked wheels {MISSING} (see benchmarks/realworld_precision.py)")
def test_judged_samples_hold():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "realworld_precision.py"),
                           "--min-precision", str(MIN_PRECISION)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
