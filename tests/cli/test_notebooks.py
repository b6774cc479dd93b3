"""Jupyter notebooks: their code cells are checked, findings point at the cell and the line
in it, IPython magics are blanked, a broken notebook is UT000, --fix leaves them alone."""

from __future__ import annotations

import json

import pytest

from analyzer.notebook import read_notebook


def notebook(*cells: tuple[str, str], language: str | None = "python") -> str:
    """An nbformat 4 notebook of (cell_type, source) cells, sources split in lines as
    Jupyter writes them."""
    metadata = {"language_info": {"name": language}} if language else {}
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": source.splitlines(keepends=True),
                    **({"outputs": [], "execution_count": None} if kind == "code" else {}),
                }
                for kind, source in cells
            ],
            "metadata": metadata,
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


NET = (
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        if x.sum() > 0:\n"
    "            return x\n"
    "        return -x\n"
)

NOTEBOOK = notebook(
    ("markdown", "# A model\n"),
    ("code", "import torch\n%matplotlib inline\n!pip install nothing\n"),
    ("code", NET),
)

UT101_MESSAGE = "`if` on tensor values (`x.sum() > 0`): tracing records only the branch the example input takes"


@pytest.fixture
def nb(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(NOTEBOOK)
    return tmp_path / "nb.ipynb"


def test_a_hazard_in_a_notebook_is_found_at_its_cell_and_line(nb, cli):
    code, out, err = cli("check", "--no-cache", "--output-format", "concise", "nb.ipynb")
    assert (code, err) == (1, "")
    assert out == f"nb.ipynb:cell 3:3:9: UT101 {UT101_MESSAGE}\nFound 1 hazard in 1 file (1 file checked).\n"


def test_text_output_shows_the_cell_line_under_its_number(nb, cli):
    code, out, _ = cli("check", "--no-cache", "nb.ipynb")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"nb.ipynb:cell 3:3:9: UT101 [data-dependent-branch] {UT101_MESSAGE}"
    assert lines[1:4] == [
        "  |",
        "3 |         if x.sum() > 0:",
        "  |         ^^^^^^^^^^^^^^",
    ]


def test_json_has_the_cell_and_the_line_within_it(nb, cli):
    code, out, _ = cli("check", "--no-cache", "--output-format", "json", "nb.ipynb")
    assert code == 1
    (finding,) = json.loads(out)
    assert {k: finding[k] for k in ("path", "cell", "line", "column", "end_line", "end_column")} == {
        "path": "nb.ipynb",
        "cell": 3,
        "line": 3,
        "column": 9,
        "end_line": 3,
        "end_column": 23,
    }
    assert finding["fix"] is None  # fixes are not offered for notebooks


def test_python_files_have_a_null_cell(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("import torch\n" + NET)
    _, out, _ = cli("check", "--no-cache", "--output-format", "json", "m.py")
    (finding,) = json.loads(out)
    assert (finding["cell"], finding["line"]) == (None, 4)


def test_magics_are_blanked_and_an_indented_one_keeps_its_block(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    source = notebook(
        ("code", "import torch\nfiles = !ls\n%load_ext autoreload\n"),
        ("code", "%%bash\nif [ -f x ]; then echo; fi\n"),
        ("code", "%%time\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        for i in range(3):\n            %time y = 1\n        return x.item()\n"),
    )
    (tmp_path / "magic.ipynb").write_text(source)
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", "magic.ipynb")
    assert code == 1
    assert out.splitlines()[0].startswith("magic.ipynb:cell 3:6:16: UT201 ")
    assert "UT000" not in out


def test_continuation_lines_starting_with_percent_are_python(tmp_path, monkeypatch):
    parsed = read_notebook(notebook(("code", 'msg = ("%s"\n       % 1)\n')))
    assert parsed.source == 'msg = ("%s"\n       % 1)\n'


def test_invalid_json_is_ut000_with_a_clear_message(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.ipynb").write_text('{"cells": [\n  {"cell_type": "code",\n')
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", "broken.ipynb")
    assert code == 1
    assert out == (
        "broken.ipynb:1:1: UT000 not a valid notebook: invalid JSON at line 3, column 1: "
        "Expecting property name enclosed in double quotes\n"
        "No hazards found (1 file checked); 1 file could not be parsed.\n"
    )


def test_json_that_is_not_a_notebook_is_ut000(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "list.ipynb").write_text("[1, 2]\n")
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", "list.ipynb")
    assert code == 1
    assert out.splitlines()[0] == "list.ipynb:1:1: UT000 not a valid notebook: no `cells` list at the top level"


def test_a_syntax_error_in_a_cell_is_reported_in_that_cell(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.ipynb").write_text(notebook(("code", "x = 1\n"), ("markdown", "text"), ("code", "y = 2\nx = = 1\nz = 3\n")))
    code, out, _ = cli("check", "--no-cache", "--output-format", "json", "bad.ipynb")
    assert code == 1
    (finding,) = json.loads(out)
    assert (finding["code"], finding["cell"], finding["line"], finding["column"]) == ("UT000", 3, 2, 5)


def test_directory_walks_collect_notebooks_but_not_checkpoints(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nbs" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "nbs" / "nb.ipynb").write_text(NOTEBOOK)
    (tmp_path / "nbs" / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").write_text(NOTEBOOK)
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", ".")
    assert code == 1
    assert out.splitlines()[0] == f"nbs/nb.ipynb:cell 3:3:9: UT101 {UT101_MESSAGE}"
    assert "Found 1 hazard in 1 file (1 file checked)." in out


@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_fix_leaves_notebooks_alone_and_says_so(nb, cli, mode):
    before = nb.read_bytes()
    code, out, err = cli("check", "--no-cache", mode, "--unsafe-fixes", "nb.ipynb")
    assert nb.read_bytes() == before
    assert "untrace: warning: fixes are not applied to notebooks: 1 fix in nb.ipynb was not applied\n" in err
    if mode == "--fix":
        assert code == 1
        assert f"nb.ipynb:cell 3:3:9: UT101 [data-dependent-branch] {UT101_MESSAGE}" in out
    else:
        assert (code, out) == (0, "")


def test_a_notebook_in_another_language_is_not_checked_and_says_so(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.ipynb").write_text(notebook(("code", "x <- 1\n"), language="R"))
    code, out, err = cli("check", "--no-cache", "r.ipynb")
    assert err == "untrace: warning: r.ipynb: not a Python notebook (language R); not checked\n"
    assert (code, out) == (0, "No hazards found (0 files checked).\n")


def test_notebook_on_stdin(nb, cli, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(NOTEBOOK.encode())))
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", "--stdin-filename", "other.ipynb", "-")
    assert code == 1
    assert out.splitlines()[0] == f"other.ipynb:cell 3:3:9: UT101 {UT101_MESSAGE}"


def test_github_and_sarif_name_the_cell(nb, cli):
    _, out, _ = cli("check", "--no-cache", "--output-format", "github", "nb.ipynb")
    # no line= for a notebook: a line of its JSON is not a line of the cell
    assert out.startswith(f"::error file=nb.ipynb,title=UT101 data-dependent-branch::cell 3, line 3: {UT101_MESSAGE}%0Ahelp: ")
    _, out, _ = cli("check", "--no-cache", "--output-format", "sarif", "nb.ipynb")
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["message"]["text"].startswith(f"cell 3, line 3: {UT101_MESSAGE} Help: ")
    assert result["properties"] == {"cell": 3}
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 23, "snippet": {"text": "        if x.sum() > 0:"}}


def test_cached_notebook_results_are_the_same(nb, cli):
    first = cli("check", "--output-format", "json", "nb.ipynb")
    second = cli("check", "--output-format", "json", "nb.ipynb")
    assert first == second and json.loads(first[1])[0]["cell"] == 3


def test_graph_of_a_notebook_says_it_reads_python_files(nb, cli):
    code, out, err = cli("graph", "nb.ipynb")
    assert (code, out) == (2, "")
    assert err == "untrace: error: nb.ipynb: a notebook; `untrace graph` reads Python files (`untrace check` reads notebooks)\n"


def test_noqa_in_a_cell_and_a_source_given_as_one_string(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    escape = NET.replace("> 0:", "> 0:  # noqa: UT101").replace("return -x", "return x.item()")
    document = json.loads(notebook(("code", "import torch\n"), ("code", escape)))
    document["cells"][0]["source"] = "import torch\n"  # nbformat allows a string too
    (tmp_path / "q.ipynb").write_text(json.dumps(document))
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", "q.ipynb")
    assert code == 1
    assert [line.split(" ", 3)[:3] for line in out.splitlines()[:-1]] == [["q.ipynb:cell", "2:5:16:", "UT201"]]


def test_the_same_line_in_two_cells_is_two_findings_in_cell_order(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    second = NET.replace("class Net", "class Other")
    cells = [("code", "import torch\n")] + [("markdown", "filler")] * 8 + [("code", second), ("code", NET)]
    (tmp_path / "two.ipynb").write_text(notebook(*cells))
    code, out, _ = cli("check", "--no-cache", "--output-format", "concise", "two.ipynb")
    assert code == 1
    assert [line.split(": UT")[0] for line in out.splitlines()[:2]] == ["two.ipynb:cell 10:3:9", "two.ipynb:cell 11:3:9"]
