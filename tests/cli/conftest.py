from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from . import fakes

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
FAKE_UNTRACE = str(Path(fakes.__file__).resolve())

MODEL = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                x = -x
            if x.shape[0] > 1:
                x = x[:1]
            n = x.max().item()
            return x * n
    """
)

CLEAN = textwrap.dedent(
    """\
    import torch


    class Clean(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1
    """
)


@pytest.fixture
def fake(monkeypatch):
    """The toy engine and rules of ``fakes.py`` instead of the real ones."""
    fakes.install(monkeypatch)
    fakes.CALLS["n"] = 0
    return fakes


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A small project in a temporary directory, which is also the working directory."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def cli(capsys):
    """Run ``untrace`` in this process: returns (exit code, stdout, stderr)."""
    from analyzer.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _env() -> dict:
    env = dict(os.environ)
    env.pop("UNTRACE_DEBUG", None)
    env["NO_COLOR"] = "1"
    env["PYTHONPATH"] = str(REPO)
    return env


def run_untrace(*argv: str, cwd=None, stdin: bytes | None = None, fake: bool = False, timeout: float = 300, env=None):
    """Run the real command in a subprocess (``fake``: with the toy engine and rules)."""
    command = [PYTHON, FAKE_UNTRACE, *argv] if fake else [PYTHON, "-m", "analyzer.cli", *argv]
    return subprocess.run(
        command,
        cwd=cwd,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=timeout,
        env={**_env(), **(env or {})},
    )


def real_rules() -> tuple:
    import analyzer.rules

    return analyzer.rules.all_rules()


def engine_is_placeholder() -> bool:
    """The lead's engine has not landed yet: analyze_file returns no facts at all."""
    from analyzer import engine

    facts, _ = engine.analyze_file("probe.py", "def f(:\n", engine.Project(["probe.py"], []))
    return not facts
