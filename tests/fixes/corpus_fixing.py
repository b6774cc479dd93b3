"""Applying the UT101 fixes to a copy of the corpus, and loading and exporting its models
(for the fix tests and ``benchmarks/fix_exportability.py``).

A fixed copy lives in ``<tmp>/corpora``; its modules are imported under their usual
names (``corpora.multi_file.model`` imports ``corpora.multi_file.blocks``) with the
copy first on ``sys.path`` and the ``corpora`` entries of ``sys.modules`` swapped out
for the duration.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"


def corpus_models() -> list[str]:
    """The corpus models: ``corpora/<name>.py`` and the multi-file package."""
    names = sorted(p.stem for p in CORPORA.glob("*.py") if not p.name.startswith("_"))
    return names + sorted(p.name for p in CORPORA.iterdir() if (p / "model.py").is_file() and (p / "__init__.py").is_file())


def fix_corpus_copy(tmp: Path, *extra: str) -> tuple[Path, set[str]]:
    """Copy the corpus to ``tmp/corpora``, run ``untrace check --fix --unsafe-fixes`` on
    it, and return the copy's parent and the models whose files changed."""
    from analyzer.cli import main

    copy = tmp / "corpora"
    shutil.copytree(CORPORA, copy, ignore=shutil.ignore_patterns("__pycache__", ".untrace_cache"))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["check", str(copy), "--fix", "--unsafe-fixes", "--no-cache", "-j", "1", "--exit-zero", *extra])
    changed = set()
    for name in corpus_models():
        files = [f"{name}.py"] if (CORPORA / f"{name}.py").is_file() else [
            f"{name}/{p.name}" for p in (CORPORA / name).glob("*.py")]
        if any((CORPORA / f).read_bytes() != (copy / f).read_bytes() for f in files):
            changed.add(name)
    return tmp, changed


@contextlib.contextmanager
def _corpora_from(root: Path):
    saved = {k: v for k, v in sys.modules.items() if k == "corpora" or k.startswith("corpora.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "corpora" or k.startswith("corpora.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def load_model(root: Path, name: str) -> tuple[torch.nn.Module, list[tuple]]:
    """``build()`` and ``inputs()`` of corpus model ``name`` as found under ``root``."""
    import importlib

    dotted = f"corpora.{name}.model" if (root / "corpora" / name).is_dir() else f"corpora.{name}"
    with _corpora_from(root):
        module = importlib.import_module(dotted)
        assert Path(module.__file__).resolve().is_relative_to(root.resolve()), module.__file__
        model = module.build()
        return model, module.inputs()


def exports(model: torch.nn.Module, inputs: list[tuple]) -> str | None:
    """None when ``torch.onnx.export(model, inputs[0], dynamo=True)`` succeeds, else the
    first line of its error."""
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, inputs[0], dynamo=True, verbose=False)
    except Exception as error:  # noqa: BLE001 - any failure is "not exportable"
        return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    return None


def same_outputs(original: tuple, fixed: tuple) -> str | None:
    """None when both models give equal outputs (or raise the same way) on every input."""
    (before, inputs), (after, fixed_inputs) = original, fixed
    after.load_state_dict(before.state_dict())
    with torch.no_grad():
        for i, (a, b) in enumerate(zip(inputs, fixed_inputs)):
            try:
                torch.testing.assert_close(after(*b), before(*a), rtol=0, atol=0)
            except AssertionError as error:
                return f"input {i}: {error}"
    return None
