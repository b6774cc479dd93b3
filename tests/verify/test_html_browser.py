"""The HTML report, rendered by a real headless Chromium (Debian's `chromium` package):
its tables and the annotated source lines are in the rendered DOM, and it paints.

CI installs the browser (`apt-get install -y chromium`); without it these tests xfail.
Set UNTRACE_VERIFY_SCREENSHOT=path.png to keep the screenshot. (docs/verify-report.png is
the same command on the report of corpora/branch_chosen_passes.py verified from its
first input with search=200.)
"""

import html
import os
import re
import shutil
import struct
import subprocess

import pytest
import torch

from lowering.verification import report_html, verify
from tests.verify import toys

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
needs_chromium = pytest.mark.xfail(CHROMIUM is None, reason="chromium not installed", run=False)

X = torch.tensor([[1.0, -0.5, 2.0, 0.25], [0.5, 1.5, -1.0, 3.0]])


def chromium(tmp_path, *args) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    report = verify(toys.BranchyToy().eval(), [(X,), (-X,), (X * 3,)], compare=("trace",))
    path = tmp_path_factory.mktemp("html") / "report.html"
    report_html.write(report, str(path))
    return report, path


def test_html_is_self_contained(page):
    _, path = page
    text = path.read_text()
    assert text.startswith("<!doctype html>") and "<style>" in text
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:|//)""", text)
    assert "<script" not in text and "@import" not in text and "url(" not in text


@needs_chromium
def test_rendered_dom_has_tables_and_annotated_source(page, tmp_path):
    report, path = page
    result = chromium(tmp_path, "--dump-dom", f"file://{path}")
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for table in ("systems-table", "per-input-table", "coverage-table", "record-table", "hazards-table"):
        assert f'id="{table}"' in dom, table
    line = toys.line_of("BRANCHY_IF")
    row = re.search(rf'<tr class="([^"]*)" id="L-tests-verify-toys-py-{line}" data-line="{line}">(.*?)</tr>', dom, re.S)
    assert row, "the branch line is not in the rendered source"
    classes, content = row.group(1).split(), html.unescape(row.group(2))
    assert {"site", "covered", "diverge"} <= set(classes)
    assert "if: then 2 · else 1" in content
    assert "trace froze then; wrong on input 1 (else)" in content
    assert "UT101" in content
    assert "if x.sum() &gt; 0:" in row.group(2)
    assert dom.count('<tr data-input="') == 3
    assert "OK: the untrace ONNX matches eager PyTorch on all 3 inputs" in html.unescape(dom)
    assert 'class="mismatch trace"' in dom  # the traced export's mismatch is highlighted


@needs_chromium
def test_screenshot_paints_the_page(page, tmp_path):
    _, path = page
    png = tmp_path / "report.png"
    result = chromium(tmp_path, f"--screenshot={png}", "--window-size=1280,1600", f"file://{path}")
    assert result.returncode == 0 and png.exists(), result.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1600)
    assert len(data) > 30_000  # a blank page compresses to a few kB
    keep = os.environ.get("UNTRACE_VERIFY_SCREENSHOT")
    if keep:
        shutil.copyfile(png, keep)
