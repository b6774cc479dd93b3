"""The real pre-commit tool runs the hook from .pre-commit-hooks.yaml.

The hook repository is a copy of this working tree committed in a temporary git
repository (nothing is committed here); pre-commit clones it at that commit and installs
it with pip into its own virtualenv, from the same package indexes as the project's
setup. The consumer repository holds one model file: with a hazard the hook fails,
without one it passes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from .conftest import CLEAN, MODEL, REPO

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"

IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    "*.pyc",
    ".untrace_cache",
    ".pytest_cache",
    ".hypothesis",
    "*.egg-info",
    "build",
    "dist",
    "*.onnx",
    "corpora",
    "benchmarks",
)


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "untrace tests",
        "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "untrace tests",
        "GIT_COMMITTER_EMAIL": "tests@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
    }
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def hook_repository(tmp: Path) -> tuple[Path, str]:
    """A committed copy of this tree (the hook's ``repo:``) and its commit."""
    repo = tmp / "untrace-hook"
    shutil.copytree(REPO, repo, ignore=IGNORE, symlinks=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "untrace under test")
    return repo, git(repo, "rev-parse", "HEAD")


def consumer_repository(tmp: Path, hook_repo: Path, rev: str) -> Path:
    consumer = tmp / "consumer"
    consumer.mkdir()
    git(consumer, "init", "-q", "-b", "main")
    (consumer / ".pre-commit-config.yaml").write_text(
        textwrap.dedent(
            f"""\
            repos:
              - repo: {hook_repo}
                rev: {rev}
                hooks:
                  - id: untrace
            """
        )
    )
    (consumer / "README.txt").write_text("not python: the hook does not see it\n")
    return consumer


def pre_commit(consumer: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    # HOME stays the user's: pip's and virtualenv's caches live there (and nothing they
    # write may land inside the consumer repository, whose files the hook checks).
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    # Only the check dependencies may be installed: a resolver that pulled torch would
    # take minutes and gigabytes. `pip` honours these from the environment.
    env["PIP_NO_INPUT"] = "1"
    return subprocess.run(
        [str(PRE_COMMIT), *args],
        cwd=consumer,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is a dev dependency of the venv")
def test_pre_commit_hook_fails_on_hazards_and_passes_on_clean_code(tmp_path):
    hook_repo, rev = hook_repository(tmp_path)
    consumer = consumer_repository(tmp_path, hook_repo, rev)
    home = tmp_path / "pre-commit-home"

    (consumer / "model.py").write_text(MODEL)
    git(consumer, "add", "-A")
    start = time.perf_counter()
    failed = pre_commit(consumer, home, "run", "--all-files", "--color", "never", "--verbose")
    install_and_run = time.perf_counter() - start
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "untrace" in output and "Failed" in output
    assert "model.py:6:9: UT101 [data-dependent-branch]" in output
    assert "(1 file checked)" in output
    assert "Traceback" not in output

    # the hook environment holds the check dependencies and not torch
    (env_dir,) = [p for p in home.glob("repo*/py_env-*")]
    installed = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout.lower()
    assert "libcst==" in installed and "untrace==" in installed
    assert "torch==" not in installed and "onnx==" not in installed

    (consumer / "model.py").write_text(CLEAN)
    git(consumer, "add", "-A")
    passed = pre_commit(consumer, home, "run", "--all-files", "--color", "never")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout

    # a committed file excluded in the consumer's [tool.untrace] is not checked, even
    # though pre-commit names it (the hook passes --force-exclude)
    (consumer / "pyproject.toml").write_text('[tool.untrace]\nextend-exclude = ["generated/"]\n')
    (consumer / "generated").mkdir()
    (consumer / "generated" / "bad.py").write_text(MODEL)
    git(consumer, "add", "-A")
    excluded = pre_commit(consumer, home, "run", "--all-files", "--color", "never")
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr

    print(f"\npre-commit: hook install + first run {install_and_run:.1f}s")
    assert install_and_run < 180, "installing the hook took longer than 3 minutes"
