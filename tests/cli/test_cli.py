"""The command line: exit codes, usage errors, subcommands, stdin, --version."""

from __future__ import annotations

import json
import sys

import pytest

from .conftest import CLEAN, MODEL, run_untrace


def test_exit_codes(fake, tree, cli):
    assert cli("check", "pkg/clean.py", "--no-cache")[0] == 0
    assert cli("check", "pkg", "--no-cache")[0] == 1
    assert cli("check", "pkg", "--no-cache", "--exit-zero")[0] == 0
    assert cli("check", "pkg", "--no-cache", "--select", "UT999")[0] == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "--output-format", "xml"], "invalid choice"),
        (["check", "--jobs", "many"], "expected a number of jobs"),
        (["check", "--jobs", "-1"], "0 (all cores) or more"),
        (["check", "--bogus"], "unrecognized arguments"),
        (["check", "does/not/exist.py"], "path does not exist"),
        (["check", "--select", "UT9"], "unknown rule code(s): UT9"),
        (["check", "--ignore", "XYZ"], "unknown rule code(s): XYZ"),
        (["check", "--fix", "--diff"], "cannot be combined"),
        (["nonsense"], "invalid choice"),
        (["rule", "UT999"], "unknown rule"),
    ],
)
def test_usage_errors_exit_2_with_a_message(fake, tree, cli, argv, message):
    code, out, err = cli(*argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_no_command_prints_help_and_exits_2(cli):
    code, _, err = cli()
    assert code == 2 and "usage: untrace" in err


def test_help_and_version_exit_0(cli):
    from analyzer import __version__

    code, out, _ = cli("--version")
    assert (code, out) == (0, f"untrace {__version__}\n")
    code, out, _ = cli("check", "--help")
    assert code == 0 and "--output-format" in out and "--statistics" in out


def test_version_matches_pyproject():
    import tomllib

    from analyzer import __version__
    from .conftest import REPO

    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"] == __version__


def test_stdin(fake, tree, cli, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MODEL.encode())))
    code, out, _ = cli("check", "-", "--output-format", "concise")
    assert code == 1
    assert out.splitlines()[0] == "-:6:9: UT101 `if` on tensor data: `x.sum() > 0`"


def test_stdin_filename_and_per_file_ignores(fake, tree, cli, monkeypatch):
    import io

    (tree / "pyproject.toml").write_text('[tool.untrace]\nper-file-ignores = { "pkg/*.py" = ["UT101"] }\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MODEL.encode())))
    code, out, _ = cli("check", "-", "--stdin-filename", "pkg/model.py", "--output-format", "json")
    assert code == 1
    assert [(d["path"], d["code"]) for d in json.loads(out)] == [("pkg/model.py", "UT201")]


def test_stdin_subprocess_real_engine(tmp_path):
    proc = run_untrace("check", "-", "--output-format", "json", cwd=tmp_path, stdin=MODEL.encode())
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)
    assert {(d["path"], d["line"], d["code"]) for d in found} >= {("-", 6, "UT101"), ("-", 10, "UT201")}
    proc = run_untrace("check", "-", cwd=tmp_path, stdin=CLEAN.encode())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_empty_directory_warns_and_exits_0(fake, tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("check", ".", "--no-cache")
    assert code == 0 and "no Python files" in err
    assert out == "No hazards found (0 files checked).\n"


def test_keyboard_interrupt_exits_130_quietly(fake, tree, cli, monkeypatch):
    import analyzer.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(analyzer.runner, "run_check", interrupted)
    code, out, err = cli("check", "pkg")
    assert (code, out, err) == (130, "", "")


def test_unexpected_error_is_reported_without_traceback(fake, tree, cli, monkeypatch):
    import analyzer.report

    def broken(*args, **kwargs):
        raise RuntimeError("reporter exploded")

    monkeypatch.setattr(analyzer.report, "render", broken)
    code, _, err = cli("check", "pkg", "--no-cache")
    assert code == 2
    assert "internal error: RuntimeError: reporter exploded" in err and "Traceback" not in err


def test_rule_table_and_docs(cli):
    from analyzer.rules import all_rules

    rules = all_rules()
    assert rules, "the real rules are registered"
    code, out, _ = cli("rule")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["code", "name", "default", "summary"]
    for rule in rules:
        assert any(line.split()[:3] == [rule.code, rule.name, "on" if rule.default_enabled else "off"] for line in lines)
    code, out, _ = cli("rule", "UT101")
    assert code == 0
    assert out.startswith("# data-dependent-branch (UT101)\n")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in out
    # by name, and as JSON
    assert cli("rule", "data-dependent-branch")[1] == out
    code, out, _ = cli("rule", "UT103", "--output-format", "json")
    assert json.loads(out)["default"] is False


def test_check_does_not_import_torch_or_onnx(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    script = (
        "import sys\n"
        "from analyzer.cli import main\n"
        "code = main(['check', 'm.py', '--no-cache', '-j', '2'])\n"
        "heavy = sorted(m for m in ('torch', 'onnx', 'onnxruntime', 'numpy', 'lowering') if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    import subprocess

    from .conftest import _env

    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert proc.stdout.splitlines()[-1] == "1 []", proc.stdout + proc.stderr


def test_importing_analyzer_is_light():
    import subprocess

    from .conftest import _env

    script = (
        "import sys, analyzer\n"
        "print(sorted(m for m in ('libcst', 'rich', 'torch', 'onnx', 'analyzer.runner') if m in sys.modules))\n"
        "from analyzer import check_source, check_paths, Diagnostic\n"
        "print(check_source.__module__, Diagnostic.__module__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env())
    assert proc.stdout.splitlines() == ["[]", "analyzer.runner analyzer.diagnostics"], proc.stderr


def test_console_script_is_installed():
    import shutil
    from pathlib import Path

    script = Path(sys.executable).parent / "untrace"
    assert script.exists() or shutil.which("untrace"), "pip install -e . puts `untrace` next to python"


def test_progress_bar_only_on_a_terminal_and_for_many_files(tmp_path):
    """stderr is a pseudo-terminal: a progress bar is drawn there (and cleared), while
    the report on stdout (a pipe) stays plain."""
    import os
    import pty
    import subprocess

    from .conftest import FAKE_UNTRACE, _env

    for i in range(60):
        (tmp_path / f"m{i}.py").write_text(MODEL)
    env = {**_env(), "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR")

    def run(*extra: str) -> tuple[int, str, str]:
        controller, terminal = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, FAKE_UNTRACE, "check", ".", "--no-cache", "--output-format", "concise", *extra],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=terminal,
            env=env,
        )
        os.close(terminal)
        drawn = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
        out = proc.stdout.read().decode()
        proc.wait(timeout=120)
        os.close(controller)
        return proc.returncode, out, drawn.decode(errors="replace")

    code, out, drawn = run()
    assert code == 1
    assert "checking" in drawn and "60" in drawn
    assert "\x1b[" not in out and out.splitlines()[-2] == "Found 120 hazards in 60 files (60 files checked)."
    # 50 files or fewer: no bar
    for i in range(10, 60):
        (tmp_path / f"m{i}.py").unlink()
    code, out, drawn = run()
    assert code == 1 and "checking" not in drawn


def test_every_subcommand_is_listed_and_only_the_chosen_one_is_built(cli, monkeypatch):
    import analyzer.cli as cli_module

    code, out, _ = cli("--help")
    assert code == 0
    for name in ("check", "rule", "graph", "export", "verify"):
        assert name in out
    # building the parser for `check` must not resolve the verify arguments (they import onnx)
    parser = cli_module.build_parser(["check", "x.py"])
    assert parser is not None
    loaded = []
    monkeypatch.setattr(cli_module, "_resolve", lambda target: loaded.append(target) or (lambda *a: None))
    cli_module.build_parser(["check", "x.py"])
    assert loaded == [cli_module.COMMANDS["check"].arguments]


def test_graph_subcommand(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(MODEL)
    code, out, _ = cli("graph", "m.py::Net.forward", "--format", "mermaid")
    assert code == 0 and out.startswith("flowchart")
    code, _, err = cli("graph", "missing.py")
    assert code == 2 and "missing.py" in err and "Traceback" not in err
    (tmp_path / "bad.py").write_text("def f(:\n")
    code, _, err = cli("graph", "bad.py")
    assert code == 2 and "bad.py" in err and "Traceback" not in err
