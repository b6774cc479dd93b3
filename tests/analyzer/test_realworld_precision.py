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

# The samples whose causes have been worked on: the judged findings still reported must
# stay at least this precise (measured: seed 0 31/31, seed 1 69/72, seed 2 80/81, seed 3
# 84/84, seed 4 86/89, seed 5 90/95, seed 6 91/98 after the fixes their judging led to;
# as judged of their whole draws 0.32, 0.80, 0.80, 0.84, 0.86, 0.90, 0.91, with the
# verdicts re-judged on later, measured evidence: benchmarks/judging/). Seed 6's seven
# wrong findings left (issue 12's note) put the floor at 0.92.
WORKED = [ROOT / "benchmarks" / "data" / f"precision_sample_seed{s}.json" for s in range(7)]
MIN_PRECISION = 0.92
# The sample drawn after the last changes, judged as drawn (96/100): issue 12's bar is 0.95 on it.
FRESH = ROOT / "benchmarks" / "data" / "precision_sample_seed7.json"
BAR = 0.95
MISSING = [d for d in realworld_precision.DEFAULT_PACKAGES if not Path(d).is_dir()]
needs_trees = pytest.mark.xfail(bool(MISSING), run=False,
                                reason=f"needs the unpacked wheels {MISSING} (see benchmarks/realworld_precision.py)")


def _compare(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "realworld_precision.py"), *map(str, arguments)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One cold run of the default rules over the five trees, compared with the worked samples."""
    saved = tmp_path_factory.mktemp("precision") / "run.json"
    done = _compare("--save-run", saved, "--min-precision", MIN_PRECISION, "--judgements", *WORKED)
    return saved, done


@pytest.mark.slow
@needs_trees
def test_judged_samples_hold(run):
    _, done = run
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.slow
@needs_trees
def test_fresh_sample_meets_the_bar(run):
    saved, _ = run
    done = _compare("--from-run", saved, "--min-precision", BAR, "--judgements", FRESH)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
