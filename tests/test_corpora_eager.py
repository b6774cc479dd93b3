"""The corpora run in eager PyTorch, deterministically, and their inputs take every branch.

Each corpus model file (``corpora/<name>.py``, or ``corpora/<package>/model.py`` for a
multi-file case) defines ``build() -> nn.Module`` and ``inputs() -> list[tuple]``. The
export and verify tests compare ONNX against eager on exactly these inputs, so they must
(1) run and give finite, reproducible outputs, and (2) together take every side of every
branch and loop exit in the model code -- otherwise an ``If`` whose other side is wrong
would pass unnoticed. (2) is checked with coverage.py's branch measurement.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import coverage
import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO / "corpora"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>.*)$")
CODE = re.compile(r"UT\d{3}")
MIN_HAZARD_FREE = 6


@dataclass(frozen=True)
class Case:
    """One corpus model: the file defining build()/inputs() and every file of its code."""

    name: str
    module: str  # dotted name, importable with REPO on sys.path
    entry: Path  # defines build() and inputs()
    sources: tuple[Path, ...]  # all files holding model code (the package for multi-file cases)


def discover() -> list[Case]:
    cases = []
    for path in sorted(CORPORA.glob("*.py")):
        if path.name.startswith("_"):
            continue
        cases.append(Case(path.stem, f"corpora.{path.stem}", path, (path,)))
    for package in sorted(p for p in CORPORA.iterdir() if (p / "__init__.py").is_file()):
        entry = package / "model.py"
        sources = tuple(sorted(p for p in package.glob("*.py") if p.name != "__init__.py"))
        cases.append(Case(package.name, f"corpora.{package.name}.model", entry, sources))
    return cases


CASES = discover()
IDS = [case.name for case in CASES]


def fresh_import(case: Case):
    """Import the case's module from scratch (so that coverage sees its class bodies run)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    prefix = case.module.rsplit(".", 1)[0] if len(case.sources) > 1 else case.module
    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]
    importlib.invalidate_caches()
    return importlib.import_module(case.module)


def run_all(module) -> list:
    model = module.build()
    with torch.no_grad():
        # A fresh inputs() per run: some models write into their inputs in place.
        return [model(*args) for args in module.inputs()]


def leaves(value, where: str = "output") -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        yield where, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from leaves(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{where}[{key!r}]")
    else:
        raise AssertionError(f"{where} is a {type(value).__name__}, not a tensor or a container of tensors")


def expected_lines(path: Path) -> dict[int, str]:
    found = {}
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found[lineno] = match.group("codes")
    return found


def model_code_ranges(path: Path) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each top-level class and function except build/inputs."""
    tree = ast.parse(path.read_text())
    ranges = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in ("build", "inputs"):
                continue
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            ranges.append((node.name, first, node.end_lineno))
    return ranges


def test_cases_discovered():
    assert len(CASES) >= 33, [case.name for case in CASES]
    assert any(len(case.sources) > 1 for case in CASES), "no multi-file case"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_runs_finite_and_deterministic(case: Case):
    module = fresh_import(case)
    first = run_all(module)
    second = run_all(module)
    assert len(first) == len(second) == len(module.inputs())
    for i, (a, b) in enumerate(zip(first, second)):
        leaves_a = list(leaves(a, f"inputs()[{i}] -> output"))
        leaves_b = list(leaves(b, f"inputs()[{i}] -> output"))
        assert leaves_a, f"inputs()[{i}]: the output holds no tensor"
        assert [w for w, _ in leaves_a] == [w for w, _ in leaves_b], f"inputs()[{i}]: output structure changed"
        for (where, ta), (_, tb) in zip(leaves_a, leaves_b):
            assert torch.isfinite(ta).all(), f"{where} is not finite"
            assert ta.dtype == tb.dtype and ta.shape == tb.shape, f"{where} changed dtype or shape between runs"
            assert torch.equal(ta, tb), f"{where} differs between two runs"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inputs_take_every_branch(case: Case):
    cov = coverage.Coverage(
        branch=True, data_file=None, config_file=False, include=[str(p) for p in case.sources]
    )
    cov.start()
    try:
        module = fresh_import(case)
        run_all(module)
    finally:
        cov.stop()

    problems = []
    for path in case.sources:
        lines = path.read_text().splitlines()
        ranges = model_code_ranges(path)
        assert ranges, f"{path.name}: no model code found"

        def owner(lineno: int) -> str | None:
            return next((name for name, lo, hi in ranges if lo <= lineno <= hi), None)

        _, _, _, missing, _ = cov.analysis2(str(path))
        for lineno in sorted(missing):
            if owner(lineno):
                problems.append(f"{path.name}:{lineno} never runs: {lines[lineno - 1].strip()}")
        for lineno, (total, taken) in sorted(cov.branch_stats(str(path)).items()):
            if owner(lineno) and taken < total:
                problems.append(
                    f"{path.name}:{lineno} takes {taken} of its {total} exits: {lines[lineno - 1].strip()}"
                )
    assert not problems, "inputs() leave model code untaken:\n" + "\n".join(problems)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_file_contract(case: Case):
    module = fresh_import(case)
    assert module.__doc__ and module.__doc__.strip(), f"{case.entry.name}: no module docstring"
    assert callable(getattr(module, "build", None)) and callable(getattr(module, "inputs", None))
    examples = module.inputs()
    assert isinstance(examples, list) and len(examples) >= 2, "inputs() needs at least two entries"
    assert all(isinstance(args, tuple) for args in examples), "each inputs() entry is a tuple of positional args"
    for path in case.sources:
        for lineno, codes in expected_lines(path).items():
            parts = [part.strip() for part in codes.split(",")]
            assert parts and all(CODE.fullmatch(p) for p in parts), f"{path.name}:{lineno}: bad marker {codes!r}"
            assert len(set(parts)) == len(parts), f"{path.name}:{lineno}: repeated code in {codes!r}"


def test_enough_hazard_free_models():
    hazard_free = [case.name for case in CASES if not any(expected_lines(p) for p in case.sources)]
    assert len(hazard_free) >= MIN_HAZARD_FREE, hazard_free
    hazardous = [case.name for case in CASES if case.name not in hazard_free]
    assert hazardous, "no corpus model carries an # expect: marker"
