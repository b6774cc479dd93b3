"""Bad input and failures: never a traceback, never a hang, the other files still checked,
and ``check`` never imports or runs what it reads."""

from __future__ import annotations

import json
import multiprocessing
import os
import textwrap

import pytest

import analyzer.engine
import analyzer.file_analysis
import analyzer.rules as analyzer_rules
from analyzer.config import Config
from analyzer.runner import run_check

from .conftest import MODEL, run_untrace

fork_only = pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork",
    reason="monkeypatched engines reach worker processes only when they are forked",
)


def _crash_on(name: str, error: BaseException):
    real = analyzer.engine.analyze_file

    def analyze_file(path, source, project=None):
        if os.path.basename(path) == name:
            raise error
        return real(path, source, project)

    return analyze_file


def _files(root) -> list[str]:
    files = []
    for i in range(6):
        (root / f"m{i}.py").write_text(MODEL)
        files.append(f"m{i}.py")
    return files


@pytest.mark.parametrize("jobs", [1, pytest.param(2, marks=fork_only)])
def test_one_crashing_file_does_not_stop_the_others(fake, tmp_path, monkeypatch, jobs):
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)
    monkeypatch.setattr(analyzer.engine, "analyze_file", _crash_on("m2.py", ZeroDivisionError("boom")))
    result = run_check(files, config=Config(root=tmp_path), jobs=jobs, use_cache=False)
    by_file = {}
    for d in result.diagnostics:
        by_file.setdefault(d.path, []).append(d.code)
    assert by_file["m2.py"] == ["UT000"]
    (crash,) = result.internal_errors
    assert crash.path == "m2.py" and "ZeroDivisionError: boom" in crash.message
    assert all(by_file[f] == ["UT101", "UT201"] for f in files if f != "m2.py")


def test_recursion_error_and_crashing_rule_are_contained(fake, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)
    monkeypatch.setattr(analyzer.engine, "analyze_file", _crash_on("m1.py", RecursionError("deep")))

    def bad_detect(facts):
        raise KeyError("oops")
        yield

    from dataclasses import replace

    rules = (*fake.RULES, replace(fake.UT101, code="UT199", name="broken-rule", detect=bad_detect))
    monkeypatch.setattr(analyzer_rules, "all_rules", lambda: rules)
    result = run_check(files, config=Config(root=tmp_path), jobs=1, use_cache=False)
    errors = {(d.path, d.message.split(": ", 1)[1]) for d in result.internal_errors}
    assert ("m1.py", "RecursionError: deep in the analysis") in errors
    assert ("m0.py", "KeyError: 'oops' in rule UT199") in errors
    # the rules that worked still reported
    assert [d.code for d in result.diagnostics if d.path == "m0.py"] == ["UT000", "UT101", "UT201"]


def test_crash_exits_2_with_the_finding_and_no_traceback(fake, tree, cli, monkeypatch):
    monkeypatch.setattr(analyzer.engine, "analyze_file", _crash_on("model.py", ValueError("bad")))
    code, out, err = cli("check", "pkg", "--no-cache", "-j1", "--exit-zero")
    assert code == 2
    assert "pkg/model.py:1:1: UT000 [internal-error] untrace could not analyse this file: ValueError: bad" in out
    assert "Traceback" not in out + err


@fork_only
def test_a_worker_that_dies_is_identified_and_the_rest_retried(fake, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)
    real = fake.fake_analyze_file

    def analyze_file(path, source, project=None):
        if path == "m3.py":
            os._exit(11)  # what a segfault in native code looks like from outside
        return real(path, source, project)

    monkeypatch.setattr(analyzer.engine, "analyze_file", analyze_file)
    result = run_check(files, config=Config(root=tmp_path), jobs=2, use_cache=False)
    (died,) = result.internal_errors
    assert died.path == "m3.py" and "the analysis process died" in died.message
    assert sorted({d.path for d in result.diagnostics}) == sorted(files)
    assert len([d for d in result.diagnostics if d.code == "UT101"]) == 5


@fork_only
def test_hard_time_limit_ends_a_runaway_worker(fake, tmp_path, monkeypatch):
    """Native code that never returns cannot be interrupted from Python; the worker is
    ended by the kernel (SIGPROF) and the file reported, the others still checked."""
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)
    real = fake.fake_analyze_file

    def analyze_file(path, source, project=None):
        if path == "m4.py":
            while True:  # stands for native code: the soft limit is off below
                pass
        return real(path, source, project)

    monkeypatch.setattr(analyzer.engine, "analyze_file", analyze_file)
    monkeypatch.setattr(analyzer.file_analysis, "FILE_TIMEOUT", None)
    monkeypatch.setattr(analyzer.file_analysis, "HARD_TIMEOUT", 1.0)
    result = run_check(files, config=Config(root=tmp_path), jobs=2, use_cache=False)
    (slow,) = result.internal_errors
    assert slow.path == "m4.py" and "took more than 1 s" in slow.message
    assert len([d for d in result.diagnostics if d.code == "UT101"]) == 5


def test_soft_time_limit_in_process(fake, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)[:2]
    real = fake.fake_analyze_file

    def analyze_file(path, source, project=None):
        if path == "m0.py":
            try:
                while True:
                    pass
            except Exception:  # an analysis that swallows everything still stops
                pass
        return real(path, source, project)

    monkeypatch.setattr(analyzer.engine, "analyze_file", analyze_file)
    monkeypatch.setattr(analyzer.file_analysis, "FILE_TIMEOUT", 0.5)
    result = run_check(files, config=Config(root=tmp_path), jobs=1, use_cache=False)
    (slow,) = result.internal_errors
    assert slow.path == "m0.py" and "gave up after 0.5 s" in slow.message
    assert [d.code for d in result.diagnostics if d.path == "m1.py"] == ["UT101", "UT201"]


def test_unreadable_file_is_reported_and_the_others_checked(fake, tree, cli):
    if os.geteuid() == 0:
        # root reads everything: make the read fail another way (a dangling symlink)
        os.symlink(tree / "missing.py", tree / "pkg" / "gone.py")
    else:
        secret = tree / "pkg" / "gone.py"
        secret.write_text("x = 1\n")
        secret.chmod(0)
    code, out, err = cli("check", "pkg", "pkg/gone.py", "--no-cache", "-j1", "--output-format", "concise")
    assert code == 1, err
    assert "pkg/gone.py:1:1: UT000 cannot read file:" in out
    assert "pkg/model.py:6:9: UT101" in out


# -- bad input, end to end with the real engine and rules ----------------------------

BAD_INPUTS = {
    "syntax_error.py": b"def f(:\n    pass\n",
    "undecodable.py": b"x = '\xff\xfe\xfa'\n",
    "bad_cookie.py": b"# -*- coding: klingon -*-\nx = 1\n",
    "nul_bytes.py": b"x = 1\x00\ny = 2\n",
    "empty.py": b"",
    "only_bom.py": b"\xef\xbb\xbf",
    "python2.py": b'print "x"\nexec "y = 1"\n',
    "nested_parens.py": b"x = " + b"(" * 200 + b"1" + b")" * 200 + b"\n",
    "nested_ifs.py": ("".join("    " * i + f"if x > {i}:\n" for i in range(100)) + "    " * 100 + "pass\n").encode(),
    "nested_lists.py": b"x = " + b"[" * 150 + b"]" * 150 + b"\n",
    "tabs_and_spaces.py": b"if x:\n\tif y:\n        pass\n",
    "lone_surrogate.py": b"x = '\xed\xa0\x80'\n",
    "crlf.py": b"import torch\r\nclass M(torch.nn.Module):\r\n    def forward(self, x):\r\n        return x\r\n",
}


def _big_model() -> bytes:
    """About 1 MB of ordinary model code, with one hazard at the end."""
    block = textwrap.dedent(
        """\
        class Block{i}(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                y = self.proj(x)
                return torch.relu(y) + x * {i}

        """
    )
    parts, size, i = ["import torch\n\n"], 0, 0
    while size < 1_000_000:
        text = block.format(i=i)
        parts.append(text)
        size += len(text)
        i += 1
    parts.append("class Last(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            return x\n        return -x\n")
    return "".join(parts).encode()


def test_bad_inputs_never_crash(tmp_path):
    for name, data in BAD_INPUTS.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "ok.py").write_text(MODEL)
    proc = run_untrace("check", ".", "--no-cache", "--output-format", "json", "--select", "ALL", cwd=tmp_path)
    assert "Traceback" not in proc.stderr.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    found = json.loads(proc.stdout)
    by_file: dict[str, set] = {}
    for d in found:
        by_file.setdefault(d["path"], set()).add((d["code"], d["name"]))
    assert [d for d in found if d["name"] == "internal-error"] == []
    for name in (
        "syntax_error.py",
        "undecodable.py",
        "bad_cookie.py",
        "nul_bytes.py",
        "python2.py",
        "nested_ifs.py",  # CPython's limit is 100 indentation levels too
        "tabs_and_spaces.py",
        "lone_surrogate.py",
    ):
        assert by_file.get(name) == {("UT000", "parse-error")}, name
    for name in ("empty.py", "only_bom.py", "crlf.py", "nested_lists.py", "nested_parens.py"):
        assert name not in by_file, name
    assert ("UT101", "data-dependent-branch") in by_file["ok.py"]


def test_one_megabyte_file(tmp_path):
    """A 1 MB file next to a small one is analysed in full within the per-file limit
    (the limit itself is tested above with a runaway analysis)."""
    big = _big_model()
    assert len(big) > 1_000_000
    (tmp_path / "big.py").write_bytes(big)
    (tmp_path / "ok.py").write_text(MODEL)
    proc = run_untrace("check", ".", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert "Traceback" not in proc.stderr.decode()
    assert proc.returncode == 1, proc.stdout.decode()[-2000:]
    found = {(d["path"], d["line"], d["code"]) for d in json.loads(proc.stdout)}
    last_if = big.decode().splitlines().index("        if x.sum() > 0:") + 1
    assert ("big.py", last_if, "UT101") in found
    assert ("ok.py", 6, "UT101") in found


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_check_source_on_bad_input(name):
    from analyzer import check_source

    diagnostics = check_source(BAD_INPUTS[name], name, select=["ALL"])
    assert all(d.name != "internal-error" for d in diagnostics), diagnostics
    assert all(d.code == "UT000" for d in diagnostics)


def test_check_never_imports_the_code_it_reads(tmp_path):
    marker = tmp_path / "MARKER"
    payload = textwrap.dedent(
        f"""\
        import pathlib
        pathlib.Path({str(marker)!r}).write_text("imported")
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                pathlib.Path({str(marker)!r}).write_text("constructed")

            def forward(self, x):
                pathlib.Path({str(marker)!r}).write_text("called")
                if x.sum() > 0:
                    return x
                return -x
        """
    )
    pkg = tmp_path / "evil"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(payload)
    (pkg / "model.py").write_text(payload + "\nfrom evil import Net as Other\n")
    (tmp_path / "conftest.py").write_text(payload)
    (tmp_path / "setup.py").write_text(payload)
    proc = run_untrace("check", ".", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout.decode() + proc.stderr.decode()
    assert not marker.exists()
    proc = run_untrace("check", "-", "--no-cache", cwd=tmp_path, stdin=payload.encode())
    assert proc.returncode == 1
    assert not marker.exists()
