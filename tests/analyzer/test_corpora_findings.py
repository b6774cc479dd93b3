"""The exact set of (line, code) per corpus file equals its `# expect:` markers, as reported
by `untrace check --select ALL --output-format json corpora/` — nothing missed, nothing extra."""

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
FILES = sorted(p for p in CORPORA.rglob("*.py") if p.name != "__init__.py")
EXPECT = re.compile(r"#\s*expect:\s*(UT\d{3}(?:\s*,\s*UT\d{3})*)")


def expected_findings(path: Path) -> set[tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, code.strip()) for code in m.group(1).split(",")}
    return out


@pytest.fixture(scope="module")
def reported() -> dict[str, set[tuple[int, str]]]:
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer.cli", "check", "--select", "ALL", "--output-format", "json", "--no-cache", "corpora/"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stderr
    found = defaultdict(set)
    for d in json.loads(proc.stdout):
        found[str((ROOT / d["path"]).resolve())].add((d["line"], d["code"]))
    return found


def test_corpus_is_large_enough():
    assert len(FILES) >= 30
    assert sum(1 for f in FILES if not expected_findings(f)) >= 6  # hazard-free models


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPORA)) for p in FILES])
def test_findings_match_markers(path, reported):
    got = reported.get(str(path.resolve()), set())
    want = expected_findings(path)
    assert sorted(got - want) == [], "reported but not marked"
    assert sorted(want - got) == [], "marked but not reported"
