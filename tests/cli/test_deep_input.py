"""Deep input (issue 22, items 12 and 13): a file nested too deep is one UT000 at the place
it goes too deep, on every path that reads a file (a file with one job and with workers,
standard input, a notebook's cells, `--fix`, `untrace graph`), never a crash or a hang,
and the other files are still checked. Each runs the real command in a subprocess: the
code before this fix crashed in libcst's parser (exit -11) or ran for minutes."""

from __future__ import annotations

import json
import time

import pytest

from analyzer.frontend.nesting import MAX_DEPTH

from .conftest import MODEL, run_untrace
from .test_notebooks import notebook

# A test that fails on a hang must not wait for it: the code before this fix took 141 s
# (and then crashed) on a chain of 4,000 calls; each of these takes about a second.
TIMEOUT = 30
SECONDS = 10


def _forward(expression: str) -> str:
    return "import torch\n\n\nclass Deep(torch.nn.Module):\n    def forward(self, x):\n        return " + expression + "\n"


# name -> (source, line, column, words of the message)
DEEP = {
    "1500 nested [": ("x = " + "[" * 1500 + "]" * 1500 + "\n", 1, 205, "too many nested parentheses"),
    "2000 nested (": ("x = " + "(" * 2000 + "1" + ")" * 2000 + "\n", 1, 205, "too many nested parentheses"),
    "4000 .relu() calls": (_forward("x" + ".relu()" * 4000), 6, 9, "too deep for Python's own parser"),
    "5000 unary minus": ("x = " + "- " * 5000 + "x\n", 1, 1, "too deep for Python's own parser"),
    "5000 not": ("x = " + "not " * 5000 + "x\n", 1, 1, "too deep for Python's own parser"),
    "5000 lambdas": ("f = " + "lambda: " * 5000 + "x\n", 1, 1, "too deep for Python's own parser"),
    "a+a+... 20000 long": ("x = " + "+".join(["a"] * 20_000) + "\n", 1, 1, "too deep for Python's own parser"),
    "8000 and": (_forward(" and ".join(["x"] * 8000)), 6, 16, "expression nested 8,003 deep"),
    "120 nested if": ("".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n", 101, 1,
                      "too many levels of indentation"),
    "5000 elif": ("def f(x):\n    if x == 0:\n        pass\n"
                  + "".join(f"    elif x == {i}:\n        pass\n" for i in range(1, 5000)), 418, 5,
                  "too deep for Python's own parser"),
    "f-string around 3000 calls": ('x = f"{y' + ".relu()" * 3000 + '}"\n', 1, 1, "too deep for Python's own parser"),
    "400 chained calls": (_forward("x" + ".relu()" * 400), 6, 16, "expression nested 804 deep"),
}


def _check(tmp_path, *argv: str, stdin: bytes | None = None):
    started = time.monotonic()
    proc = run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", "json", *argv,
                       cwd=tmp_path, stdin=stdin, timeout=TIMEOUT)
    took = time.monotonic() - started
    assert proc.returncode == 1, (proc.returncode, proc.stderr.decode()[-2000:])
    assert "Traceback" not in proc.stderr.decode()
    assert took < SECONDS, took
    return json.loads(proc.stdout)


def _one_ut000(found, path: str) -> dict:
    (deep,) = [d for d in found if d["path"] == path]
    assert (deep["code"], deep["name"]) == ("UT000", "parse-error"), deep
    return deep


@pytest.mark.parametrize("name", sorted(DEEP))
def test_a_deep_file_is_one_ut000_where_it_goes_too_deep(tmp_path, name):
    source, line, column, words = DEEP[name]
    (tmp_path / "deep.py").write_text(source)
    (tmp_path / "ok.py").write_text(MODEL)
    found = _check(tmp_path, "deep.py", "ok.py", "-j", "1")
    deep = _one_ut000(found, "deep.py")
    assert (deep["line"], deep["column"]) == (line, column), deep
    assert words in deep["message"], deep["message"]
    assert {d["code"] for d in found if d["path"] == "ok.py"} >= {"UT101", "UT201"}


def test_the_limit_and_why_are_in_the_message(tmp_path):
    (tmp_path / "deep.py").write_text(DEEP["400 chained calls"][0])
    (deep,) = _check(tmp_path, "deep.py")
    assert deep["message"] == (
        f"cannot analyse this file: expression nested 804 deep; untrace analyses code nested up to "
        f"{MAX_DEPTH} deep (statements and expressions together): deeper code overflows the stack of "
        "its parser (libcst) and of its own analyses")


def test_workers_report_deep_files_and_check_the_others(tmp_path):
    for name in ("2000 nested (", "4000 .relu() calls", "5000 lambdas"):
        (tmp_path / f"deep_{name.split()[0]}_{name.split()[-1]}.py").write_text(DEEP[name][0])
    for i in range(3):
        (tmp_path / f"ok{i}.py").write_text(MODEL)
    found = _check(tmp_path, ".", "-j", "2")
    assert [d for d in found if d["name"] == "internal-error"] == []
    deep = sorted(d["path"] for d in found if d["code"] == "UT000")
    assert deep == ["deep_2000_(.py", "deep_4000_calls.py", "deep_5000_lambdas.py"]
    assert sorted(d["path"] for d in found if d["code"] == "UT101") == ["ok0.py", "ok1.py", "ok2.py"]


@pytest.mark.parametrize("name", ["2000 nested (", "4000 .relu() calls"])
def test_standard_input(tmp_path, name):
    source, line, column, words = DEEP[name]
    found = _check(tmp_path, "-", stdin=source.encode())
    deep = _one_ut000(found, "-")
    assert (deep["line"], deep["column"], words in deep["message"]) == (line, column, True)


def test_a_notebook_cell(tmp_path):
    deep = "y = " + "(" * 2000 + "1" + ")" * 2000 + "\n"
    (tmp_path / "nb.ipynb").write_text(notebook(("code", "import torch\n"), ("code", "x = 1\n" + deep)))
    found = _check(tmp_path, "nb.ipynb")
    (finding,) = found
    assert finding["code"] == "UT000" and "too many nested parentheses" in finding["message"]
    assert finding["cell"] == 2 and finding["line"] == 2, finding


def test_fix_fixes_the_other_files_and_leaves_the_deep_one(tmp_path):
    fixable = ("import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
               "        if x.sum() > 0:\n            y = x\n        else:\n            y = -x\n        return y\n")
    (tmp_path / "fixable.py").write_text(fixable)
    deep_source = DEEP["4000 .relu() calls"][0]
    (tmp_path / "deep.py").write_text(deep_source)
    found = _check(tmp_path, "--fix", "--unsafe-fixes", "fixable.py", "deep.py", "-j", "1")
    assert (tmp_path / "deep.py").read_text() == deep_source
    assert "torch.where" in (tmp_path / "fixable.py").read_text()
    _one_ut000(found, "deep.py")


@pytest.mark.parametrize("name", ["2000 nested (", "4000 .relu() calls", "5000 elif"])
def test_graph(tmp_path, name):
    source, line, column, words = DEEP[name]
    (tmp_path / "deep.py").write_text(source)
    started = time.monotonic()
    proc = run_untrace("graph", "deep.py", cwd=tmp_path, timeout=TIMEOUT)
    assert time.monotonic() - started < SECONDS
    assert proc.returncode == 2, proc.stderr.decode()
    err = proc.stderr.decode()
    assert f"deep.py:{line}:{column}: cannot parse:" in err and words in err, err
    assert "Traceback" not in err


def test_a_chain_at_the_bound_is_analysed_in_full_with_workers(tmp_path):
    """The deepest chain the screen lets through: every pass works on it, in a worker."""
    calls = (MAX_DEPTH - 7) // 2  # class, def, if; `(...).sum() > 0`: 3 levels; 2 a call; `x`
    source = ("import torch\n\n\nclass Deep(torch.nn.Module):\n    def forward(self, x):\n"
              f"        if (x{'.relu()' * calls}).sum() > 0:\n            x = -x\n        return x\n")
    (tmp_path / "deep.py").write_text(source)
    (tmp_path / "ok.py").write_text(MODEL)
    found = _check(tmp_path, ".", "-j", "2")
    assert [(d["code"], d["line"]) for d in found if d["path"] == "deep.py"] == [("UT101", 6)]


def test_export_of_deep_code_names_the_line_and_the_way_out(tmp_path):
    """`export` reads forward's source through the same screen: a refusal at the user's
    line whose first way out is shallower code, not the lowering's generic hint alone."""
    (tmp_path / "m.py").write_text(_forward("x" + ".relu()" * 400) + "\n\ndef build():\n    return Deep()\n")
    proc = run_untrace("export", "m.py:build", "--input", "x:2x3", "-o", "out.onnx", cwd=tmp_path, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "m.py:6: cannot read the source of Deep.forward: expression nested 804 deep" in err
    assert "write it in shallower steps" in err and "Traceback" not in err
    assert not (tmp_path / "out.onnx").exists()
