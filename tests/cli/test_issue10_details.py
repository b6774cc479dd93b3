"""Smaller reporting and argument fixes of issue 10, each with its exact behaviour:
control characters from a scanned file, Mermaid quotes, error positions and counts,
stub files, an empty --select, CPython-only syntax errors, a deleted working folder."""

from __future__ import annotations

import json
import os

import pytest

from .conftest import run_untrace

ESCAPING = (
    "import torch\n"
    "\n"
    "\n"
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    '        if x.sum() > len("\x1b[2J\x1b]0;owned\x07"):\n'
    "            return x\n"
    "        return -x\n"
)


@pytest.fixture
def escaping(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "esc.py").write_text(ESCAPING)


def test_text_output_escapes_control_characters_of_the_file(escaping, cli):
    code, out, _ = cli("check", "--no-cache", "esc.py")
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    shown = '`if` on tensor values (`x.sum() > len("\\x1b[2J\\x1b]0;owned\\x07")`)'
    assert lines[0] == f"esc.py:6:9: UT101 [data-dependent-branch] {shown}: tracing records only the branch the example input takes"
    assert lines[2] == '6 |         if x.sum() > len("\\x1b[2J\\x1b]0;owned\\x07"):'
    assert lines[3] == "  |         " + "^" * len('if x.sum() > len("\\x1b[2J\\x1b]0;owned\\x07")')


@pytest.mark.parametrize("fmt", ["concise", "github"])
def test_concise_and_github_escape_control_characters(escaping, cli, fmt):
    code, out, _ = cli("check", "--no-cache", "--output-format", fmt, "esc.py")
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert 'len("\\x1b[2J\\x1b]0;owned\\x07")' in out


def test_json_keeps_the_text_exact(escaping, cli):
    _, out, _ = cli("check", "--no-cache", "--output-format", "json", "esc.py")
    (finding,) = json.loads(out)
    assert '"\x1b[2J\x1b]0;owned\x07"' in finding["message"]  # JSON escapes it itself


QUOTES = (
    "import torch\n"
    "\n"
    "\n"
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x, mode: str):\n"
    '        if mode == "a\\"b<c>#quot;":\n'
    "            return x\n"
    "        return -x\n"
)


def test_mermaid_labels_keep_quotes_with_entity_codes(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.py").write_text(QUOTES)
    code, out, _ = cli("graph", "q.py", "--format", "mermaid")
    assert code == 0
    # `"` as #quot;, and the characters Mermaid would read as markup or as an entity too
    assert '    n2{"L6 if (mode == \'a#quot;b#lt;c#gt;#35;quot;\') [static]"}' in out.splitlines()


# -- positions of parse errors, and how they are counted ------------------------------

NESTED = "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n"
FORWARD = "import torch\n\n\nclass N(torch.nn.Module):\n    def forward(self, x):\n        return x\n"


@pytest.mark.parametrize(
    "name, data, expected",
    [
        ("undecodable.py", b"x = 1\ny = '\xff\xfe'\n",
         "undecodable.py:2:6: UT000 cannot analyse this file: cannot decode the file as utf-8: invalid start byte (0xff)"),
        ("tabs.py", b"if x:\n\tif y:\n        pass\n",
         "tabs.py:3:1: UT000 cannot analyse this file: syntax error: inconsistent use of tabs and spaces in indentation"),
        ("dedent.py", b"if x:\n        a = 1\n    b = 2\n",
         "dedent.py:3:10: UT000 cannot analyse this file: syntax error: unindent does not match any outer indentation level"),
        ("late.py", b"x = 1\ny = 2\ndef f(:\n",
         "late.py:3:7: UT000 cannot analyse this file: syntax error: invalid syntax"),
        ("nested.py", NESTED.encode(),
         "nested.py:1:205: UT000 cannot analyse this file: syntax error: too many nested parentheses"),
        ("nested_forward.py", (FORWARD + "y = " + NESTED[4:]).encode(),
         "nested_forward.py:7:205: UT000 cannot analyse this file: syntax error: too many nested parentheses"),
    ],
)
def test_parse_errors_are_reported_where_they_are(tmp_path, monkeypatch, cli, name, data, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(data)
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", name)
    assert code == 1
    assert out.splitlines()[0] == expected


def test_parse_errors_are_counted_apart_from_hazards(tmp_path, monkeypatch, cli):
    from .conftest import MODEL

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tabs.py").write_bytes(b"if x:\n\tif y:\n        pass\n")
    (tmp_path / "model.py").write_text(MODEL)
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", ".")
    assert code == 1
    assert out.splitlines()[3] == "Found 2 hazards in 1 file (2 files checked); 1 file could not be parsed."
    code, out, _ = cli("check", "--no-cache", "tabs.py")
    assert code == 1
    assert out.splitlines()[-1] == "No hazards found (1 file checked); 1 file could not be parsed."


# -- files and arguments ----------------------------------------------------------------


def test_directory_walks_collect_stub_files(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(FORWARD)
    (tmp_path / "pkg" / "model.pyi").write_text(
        "import torch\n\n\nclass N(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0: ...\n"
    )
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", ".")
    assert code == 1
    assert out.splitlines()[0].startswith("pkg/model.pyi:6:9: UT101 ")
    assert "(2 files checked)" in out


def test_a_stub_next_to_its_module_does_not_hide_the_module_from_imports(tmp_path, monkeypatch, cli):
    """`from pkg.blocks import Gate` still resolves to blocks.py with blocks.pyi beside it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "blocks.py").write_text(
        "import torch\n\n\nclass Gate(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            return x\n        return -x\n"
    )
    (tmp_path / "pkg" / "blocks.pyi").write_text("import torch\n\nclass Gate(torch.nn.Module):\n    def forward(self, x: torch.Tensor) -> torch.Tensor: ...\n")
    (tmp_path / "pkg" / "model.py").write_text(
        "import torch\nfrom pkg.blocks import Gate\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.gate = Gate()\n\n    def forward(self, x):\n        return self.gate(x)\n"
    )
    code, out, _ = cli("check", "--no-cache", "--output-format", "json", ".")
    assert code == 1
    (finding,) = json.loads(out)
    assert finding["call_paths"] == [["Gate.forward"], ["Net.forward", "Gate.forward"]]


@pytest.mark.parametrize("value", ["", ",", " "])
def test_an_empty_select_is_a_usage_error(tmp_path, monkeypatch, cli, value):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FORWARD)
    code, out, err = cli("check", "--no-cache", "--select", value, "m.py")
    assert (code, out) == (2, "")
    assert err == "untrace: error: --select: no rule codes given (ALL selects every rule; --ignore turns rules off)\n"


def test_check_from_a_deleted_working_directory_is_a_usage_error(tmp_path):
    import subprocess
    import sys

    from .conftest import REPO

    script = "mkdir gone && cd gone && rmdir ../gone && exec \"$0\" -m analyzer.cli check"
    done = subprocess.run(
        ["sh", "-c", script, sys.executable], cwd=tmp_path, capture_output=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode() == (
        "untrace: error: the working directory does not exist any more; cd to one that does\n"
    )


# -- found while hunting: a file name that is not UTF-8 ---------------------------------

needs_bytes_names = pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")


@needs_bytes_names
@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(tmp_path, fmt):
    from .conftest import MODEL

    (tmp_path / os.fsdecode(b"\xff.py")).write_text(MODEL)
    for extra in ((), ("-o", "report.out")):
        done = run_untrace("check", "--no-cache", "--output-format", fmt, *extra, ".", cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert b"internal error" not in done.stderr
        out = (tmp_path / "report.out").read_bytes() if extra else done.stdout
        text = out.decode("utf-8")  # valid UTF-8 whatever the name
        if fmt in ("text", "concise"):
            assert text.startswith("\\xff.py:6:9: UT101 ")
        elif fmt == "github":
            assert text.startswith("::error file=\\xff.py,line=6,")
        elif fmt == "json":
            assert {d["path"] for d in json.loads(text)} == {"\udcff.py"}
        else:
            uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(text)["runs"][0]["results"]}
            assert uris == {"%FF.py"}
