"""`untrace check --fix / --diff / --unsafe-fixes` with the real engine and the UT101 fixes."""

from __future__ import annotations

import json
import textwrap

import pytest

from analyzer.cli import main

MODEL = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                x = -x
            return x * 2
    """)

FIXED_BODY = textwrap.dedent("""\
        def forward(self, x):
            def true_fn(x):
                x = -x
                return x
            def false_fn(x):
                return x.clone()
            x = torch.cond(x.sum() > 0, true_fn, false_fn, (x,))
            return x * 2
    """)

REFUSED = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                self.seen = True
            return x * 2
    """)


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.py"
    path.write_text(MODEL)
    return path


def run(capsys, *argv):
    code = main(["check", *argv, "--no-cache", "-j", "1"])
    out, err = capsys.readouterr()
    return code, out, err


def test_diff_without_unsafe_fixes_offers_nothing(model, capsys):
    code, out, err = run(capsys, "m.py", "--diff")
    assert (code, out) == (0, "") and "No fixes available." in err
    assert model.read_text() == MODEL


def test_diff_with_unsafe_fixes_shows_the_rewrite_and_writes_nothing(model, capsys):
    code, out, err = run(capsys, "m.py", "--diff", "--unsafe-fixes")
    assert code == 1
    assert out.startswith("--- a/m.py\n+++ b/m.py\n@@ ")
    assert "-        if x.sum() > 0:\n" in out and "+        x = torch.cond(x.sum() > 0, true_fn, false_fn, (x,))\n" in out
    assert "Would fix 1 hazard." in err
    assert model.read_text() == MODEL


def test_fix_applies_unsafe_fixes_only_when_asked(model, capsys):
    code, out, _ = run(capsys, "m.py", "--fix")
    assert code == 1 and model.read_text() == MODEL
    assert "(1 more fixable with the `--unsafe-fixes` option.)" in out

    code, out, _ = run(capsys, "m.py", "--fix", "--unsafe-fixes")
    assert code == 0
    assert out.splitlines() == ["Fixed 1 hazard.", "No hazards found (1 file checked)."]
    assert model.read_text().split("\n\n\n", 1)[1] == "class Net(nn.Module):\n" + textwrap.indent(FIXED_BODY, "    ")
    assert run(capsys, "m.py")[0] == 0  # the rewritten file is clean


def test_json_carries_the_edit_and_its_applicability(model, capsys):
    code, out, _ = run(capsys, "m.py", "--output-format", "json")
    assert code == 1
    (finding,) = json.loads(out)
    assert finding["code"] == "UT101"
    fix = finding["fix"]
    assert fix["applicability"] == "unsafe" and "torch.cond" in fix["message"]
    (edit,) = fix["edits"]
    assert (edit["line"], edit["column"], edit["end_line"]) == (7, 9, 8)
    assert edit["content"].endswith("x = torch.cond(x.sum() > 0, true_fn, false_fn, (x,))")


def test_a_refused_fix_says_why_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(REFUSED)
    code, out, _ = run(capsys, "m.py", "--fix", "--unsafe-fixes", "--output-format", "json")
    assert code == 1 and (tmp_path / "m.py").read_text() == REFUSED
    (finding,) = json.loads(out)
    assert finding["fix"] is None
    assert "not rewritten automatically: the branch assigns the attribute `self.seen`" in finding["suggestion"]
