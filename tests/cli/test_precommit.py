"""The real pre-commit tool runs the hook from .pre-commit-hooks.yaml.

The hook repository is a copy of this working tree committed in a temporary git
repository (nothing is committed here); pre-commit clones it at that commit and installs
it with pip into its own virtualenv, from the same package indexes as the project's
setup. The hook is installed once per module; each test has its own consumer
repository. A model file or a notebook with a hazard makes the hook fail, a clean one
passes, and what the consumer's ``[tool.untrace]`` excludes is not checked even though
pre-commit names it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import CLEAN, MODEL, REPO
from .test_notebooks import NOTEBOOK, UT101_MESSAGE, notebook

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
    consumer.mkdir(parents=True)
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


needs_pre_commit = pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is a dev dependency of the venv")


@dataclass(frozen=True)
class InstalledHook:
    repo: Path
    rev: str
    home: Path
    install_seconds: float


@pytest.fixture(scope="module")
def installed_hook(tmp_path_factory) -> InstalledHook:
    """The hook repository, with its environment installed by pre-commit into ``home``
    (shared by the tests of this module, as a user's ~/.cache/pre-commit is)."""
    tmp = tmp_path_factory.mktemp("pre-commit")
    hook_repo, rev = hook_repository(tmp)
    home = tmp / "pre-commit-home"
    consumer = consumer_repository(tmp / "installer", hook_repo, rev)
    start = time.perf_counter()
    installed = pre_commit(consumer, home, "install-hooks")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return InstalledHook(hook_repo, rev, home, time.perf_counter() - start)


@pytest.fixture
def consumer(tmp_path, installed_hook) -> Path:
    return consumer_repository(tmp_path, installed_hook.repo, installed_hook.rev)


@needs_pre_commit
def test_pre_commit_hook_fails_on_hazards_and_passes_on_clean_code(consumer, installed_hook):
    home = installed_hook.home
    (consumer / "model.py").write_text(MODEL)
    git(consumer, "add", "-A")
    failed = pre_commit(consumer, home, "run", "--all-files", "--color", "never", "--verbose")
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

    print(f"\npre-commit: hook install {installed_hook.install_seconds:.1f}s")
    assert installed_hook.install_seconds < 180, "installing the hook took longer than 3 minutes"


CLEAN_NOTEBOOK = notebook(("code", "import torch\n"), ("code", CLEAN.removeprefix("import torch\n")))


@needs_pre_commit
def test_pre_commit_hook_checks_staged_notebooks_and_stubs(consumer, installed_hook):
    """`untrace check .` walks *.py, *.pyi and *.ipynb; the hook sees the same kinds of
    staged file (identify tags a notebook `jupyter` and a stub `pyi`, neither `python`)."""
    home = installed_hook.home
    (consumer / "nb.ipynb").write_text(NOTEBOOK)
    git(consumer, "add", "-A")
    # no --all-files: what a `git commit` runs, the staged files
    failed = pre_commit(consumer, home, "run", "--color", "never")
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "no files to check" not in output
    assert f"nb.ipynb:cell 3:3:9: UT101 [data-dependent-branch] {UT101_MESSAGE}" in output
    assert "(1 file checked)" in output

    (consumer / "nb.ipynb").write_text(CLEAN_NOTEBOOK)
    git(consumer, "add", "-A")
    passed = pre_commit(consumer, home, "run", "--color", "never")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "untrace" in passed.stdout and "Passed" in passed.stdout
    assert "no files to check" not in passed.stdout
    git(consumer, "commit", "-q", "--no-verify", "-m", "a clean notebook")

    (consumer / "model.pyi").write_text(MODEL)
    git(consumer, "add", "model.pyi")
    stub = pre_commit(consumer, home, "run", "--color", "never")
    assert stub.returncode == 1, stub.stdout + stub.stderr
    assert "model.pyi:6:9: UT101 [data-dependent-branch]" in stub.stdout + stub.stderr
    git(consumer, "rm", "-q", "--cached", "model.pyi")
    (consumer / "model.pyi").unlink()

    # --force-exclude applies to notebooks as to Python files
    (consumer / "pyproject.toml").write_text('[tool.untrace]\nextend-exclude = ["generated/"]\n')
    (consumer / "generated").mkdir()
    (consumer / "generated" / "bad.ipynb").write_text(NOTEBOOK)
    git(consumer, "add", "-A")
    excluded = pre_commit(consumer, home, "run", "--color", "never", "--verbose")
    output = excluded.stdout + excluded.stderr
    assert excluded.returncode == 0, output
    assert "bad.ipynb" not in output
