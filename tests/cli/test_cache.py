"""The content-hash cache: hits on an unchanged tree, misses on any change that matters."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import analyzer.cache
import analyzer.engine
import analyzer.module_index
from analyzer.cache import Cache, analyzer_hash
from analyzer.config import Config
from analyzer.runner import run_check

from .conftest import MODEL


def check(root: Path, files=None, **kwargs):
    files = files or sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if ".untrace_cache" not in p.parts)
    kwargs.setdefault("jobs", 1)
    return run_check(files, config=Config(root=root), **kwargs)


def entries(root: Path) -> list[Path]:
    return sorted((root / ".untrace_cache").rglob("*.json"))


def test_hit_path_skips_analysis(fake, tree):
    cold = check(tree)
    assert (cold.analyzed, cold.cache_hits, fake.CALLS["n"]) == (2, 0, 2)
    warm = check(tree)
    assert (warm.analyzed, warm.cache_hits, fake.CALLS["n"]) == (0, 2, 2)
    assert warm.diagnostics == cold.diagnostics and warm.diagnostics
    assert len(entries(tree)) == 2


def test_edit_invalidates_only_that_file(fake, tree):
    check(tree)
    (tree / "pkg" / "clean.py").write_text("def f(x):\n    if x.any():\n        pass\n")
    result = check(tree)
    assert (result.analyzed, result.cache_hits) == (1, 1)
    assert [d.path for d in result.diagnostics].count("pkg/clean.py") == 1


def test_dependency_change_invalidates_dependents(fake, tree):
    (tree / "pkg" / "helper.py").write_text("def g(x):\n    return x\n")
    (tree / "pkg" / "user.py").write_text("from helper import g\n")
    check(tree)
    assert check(tree).analyzed == 0
    (tree / "pkg" / "helper.py").write_text("def g(x):\n    return x + 1\n")
    fake.CALLS["n"] = 0
    result = check(tree)
    assert result.analyzed == 2  # helper.py itself, and user.py that depends on it
    assert result.cache_hits == 2


def test_selection_changes_reuse_the_cache(fake, tree):
    from analyzer.config import Selection

    check(tree)
    result = check(tree, cli=Selection(select=("UT103",)))
    assert result.analyzed == 0
    assert [d.code for d in result.diagnostics] == ["UT103"]


def test_noqa_is_part_of_the_content(fake, tree):
    check(tree)
    model = tree / "pkg" / "model.py"
    model.write_text(model.read_text().replace("if x.sum() > 0:", "if x.sum() > 0:  # noqa"))
    assert "UT101" not in [d.code for d in check(tree).diagnostics]


def test_corrupt_or_truncated_entries_are_ignored(fake, tree):
    cold = check(tree)
    first, second = entries(tree)
    first.write_bytes(first.read_bytes()[:10])
    second.write_text(json.dumps({"format": 1, "deps": {}, "diagnostics": [{"bogus": 1}]}))
    result = check(tree)
    assert result.analyzed == 2 and result.diagnostics == cold.diagnostics
    assert check(tree).analyzed == 0  # rewritten


def test_no_cache_neither_reads_nor_writes(fake, tree, cli):
    assert cli("check", "pkg")[0] == 1
    assert entries(tree)
    fake.CALLS["n"] = 0
    assert cli("check", "pkg", "--no-cache", "-j1")[0] == 1
    assert fake.CALLS["n"] == 2
    import shutil

    shutil.rmtree(tree / ".untrace_cache")
    cli("check", "pkg", "--no-cache")
    assert not (tree / ".untrace_cache").exists()


def test_cache_lives_next_to_the_config(fake, tree, cli, monkeypatch):
    (tree / "pyproject.toml").write_text("[tool.untrace]\n")
    monkeypatch.chdir(tree / "pkg")
    assert cli("check", ".")[0] == 1
    assert (tree / ".untrace_cache" / "CACHEDIR.TAG").exists()
    assert (tree / ".untrace_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (tree / "pkg" / ".untrace_cache").exists()


def test_cache_dir_option(fake, tree, cli):
    assert cli("check", "pkg", "--cache-dir", str(tree / "elsewhere"))[0] == 1
    assert list((tree / "elsewhere").rglob("*.json"))


def test_internal_errors_are_not_cached(fake, tree, monkeypatch):
    real = analyzer.engine.analyze_file

    def flaky(path, source, project=None):
        if path.endswith("model.py"):
            raise MemoryError("transient")
        return real(path, source, project)

    monkeypatch.setattr(analyzer.engine, "analyze_file", flaky)
    assert [d.name for d in check(tree).diagnostics] == ["internal-error"]
    monkeypatch.setattr(analyzer.engine, "analyze_file", real)
    result = check(tree)
    assert result.analyzed == 1 and "internal-error" not in [d.name for d in result.diagnostics]


def test_other_versions_are_dropped(fake, tree, monkeypatch):
    check(tree)
    (old,) = [p for p in (tree / ".untrace_cache").iterdir() if p.is_dir()]
    import os

    import analyzer.cache

    # not used for longer than the cache keeps a version nobody runs
    unused = time.time() - analyzer.cache.STALE_AFTER - 60
    os.utime(old / analyzer.cache.VERSION_MARKER, (unused, unused))
    monkeypatch.setattr(analyzer.cache, "analyzer_hash", lambda: "0123456789abcdef")
    assert check(tree).analyzed == 2  # a new analyzer: nothing is reused
    dirs = [p.name for p in (tree / ".untrace_cache").iterdir() if p.is_dir()]
    assert dirs == [f"{analyzer.cache.__version__}-0123456789abcdef"] and old.name not in dirs


def test_analyzer_hash_covers_the_analysis_code(tmp_path, monkeypatch):
    """Editing any analysis module (a rule, the engine) changes the hash; editing a
    reporter does not."""
    import shutil

    import analyzer
    import analyzer.cache

    copy = tmp_path / "analyzer"
    shutil.copytree(Path(analyzer.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(analyzer.cache, "__file__", str(copy / "cache.py"))

    def fresh_hash() -> str:
        analyzer.cache.analyzer_hash.cache_clear()
        return analyzer.cache.analyzer_hash()

    try:
        base = fresh_hash()
        rule = sorted((copy / "rules").glob("ut1*.py"))[0]
        rule.write_text(rule.read_text() + "\n# edited\n")
        edited_rule = fresh_hash()
        assert edited_rule != base
        (copy / "report" / "text.py").write_text((copy / "report" / "text.py").read_text() + "\n# edited\n")
        assert fresh_hash() == edited_rule
        (copy / "engine.py").write_text((copy / "engine.py").read_text() + "\n# edited\n")
        assert fresh_hash() != edited_rule
    finally:
        analyzer.cache.analyzer_hash.cache_clear()


def test_atomic_put_leaves_no_temporary_files(fake, tree):
    check(tree)
    leftovers = [p for p in (tree / ".untrace_cache").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_key_depends_on_path_and_bytes():
    assert Cache.key("a.py", b"x") != Cache.key("b.py", b"x")
    assert Cache.key("a.py", b"x") != Cache.key("a.py", b"y")


def _tree_of(root: Path, n: int) -> list[str]:
    files = []
    for i in range(n):
        path = root / f"pkg{i % 10}" / f"model_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MODEL.replace("class Net", f"class Net{i}") + f"\n\ndef helper_{i}(x):\n    return x * {i}\n")
        files.append(str(path.relative_to(root)))
    return files


def test_unchanged_tree_of_200_files_takes_the_hit_path(tmp_path, monkeypatch, capsys):
    """The real engine and rules. Cold: 2 worker processes; warm: every file is a cache
    hit, so analyze_file is never called (counted in this process: a warm run with
    nothing to analyse starts no worker)."""
    monkeypatch.chdir(tmp_path)
    files = _tree_of(tmp_path, 200)
    config = Config(root=tmp_path)
    start = time.perf_counter()
    cold = run_check(files, config=config, jobs=2)
    cold_time = time.perf_counter() - start
    assert cold.analyzed == 200 and len(entries(tmp_path)) == 200
    assert {d.code for d in cold.diagnostics} >= {"UT101", "UT201"}

    calls = []
    real = analyzer.engine.analyze_file
    monkeypatch.setattr(analyzer.engine, "analyze_file", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    start = time.perf_counter()
    warm = run_check(files, config=config, jobs=2)
    warm_time = time.perf_counter() - start
    assert calls == [] and warm.cache_hits == 200 and warm.analyzed == 0
    assert warm.diagnostics == cold.diagnostics
    with capsys.disabled():
        print(f"\n200 files: cold {cold_time:.2f}s (2 jobs), warm {warm_time:.3f}s ({warm_time / cold_time:.1%})")

    # one edited file: exactly one analysis
    (tmp_path / files[7]).write_text("x = 1\n")
    again = run_check(files, config=config, jobs=1)
    assert calls == [files[7]] and again.cache_hits == 199


def test_warm_run_does_not_load_the_engine(tmp_path):
    """All hits: neither libcst nor the analyses are imported, which is most of a cold
    start."""
    import subprocess
    import sys

    from .conftest import _env

    (tmp_path / "m.py").write_text(MODEL)
    script = (
        "import sys\n"
        "from analyzer.cli import main\n"
        "code = main(['check', '.', '-j', '1', '--output-format', 'json'])\n"
        "print(code, 'libcst' in sys.modules, 'analyzer.engine' in sys.modules)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=_env())
        for _ in range(2)
    ]
    cold, warm = (run.stdout.splitlines()[-1] for run in runs)
    assert cold == "1 True True", runs[0].stderr
    assert warm == "1 False False", runs[1].stderr
    assert runs[0].stdout.splitlines()[:-1] == runs[1].stdout.splitlines()[:-1]


def test_editing_an_imported_model_invalidates_its_export_script(tmp_path, monkeypatch):
    """UT402 across files: the script's result depends on the model file it imports."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n")
    (tmp_path / "export.py").write_text(
        "import torch\nfrom model import Net\n"
        "def main():\n    m = Net().eval()\n    torch.onnx.export(m, (torch.zeros(1),), 'n.onnx', dynamo=False)\n")
    files = ["model.py", "export.py"]
    assert [d.code for d in check(tmp_path, files).diagnostics] == []  # hazard-free: tracing is faithful
    (tmp_path / "model.py").write_text(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        if x.sum() > 0:\n            return x\n        return -x\n")
    result = check(tmp_path, files)
    assert result.cache_hits == 0  # the script's entry went stale with the model
    assert sorted((d.path, d.code) for d in result.diagnostics) == [("export.py", "UT402"), ("model.py", "UT101")]
    message = next(d.message for d in result.diagnostics if d.code == "UT402")
    assert "model.py:4" in message


def test_the_configured_opset_keys_the_cache(tmp_path, monkeypatch):
    """UT302 depends on `[tool.untrace] opset`: another opset is another cache entry."""
    monkeypatch.chdir(tmp_path)
    from analyzer.config import Selection

    (tmp_path / "m.py").write_text(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        return torch.relu(x)\n")
    select = Selection(select=("UT302",))
    assert check(tmp_path, ["m.py"], cli=select).diagnostics == []
    result = run_check(["m.py"], config=Config(root=tmp_path, opset=16), cli=select, jobs=1)
    assert result.cache_hits == 0
    assert [d.code for d in result.diagnostics] == ["UT302"]
    assert "at opset 16; the first opset with one is 17" in result.diagnostics[0].message


def test_dependencies_are_exact_in_one_process(tmp_path, monkeypatch):
    """A file depends on what its analysis read, including through summaries cached while
    another file was checked, and on nothing else the same process happened to read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpers.py").write_text("def gate(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")
    user = "import torch\nfrom helpers import gate\nclass {0}(torch.nn.Module):\n    def forward(self, x):\n        return gate(x)\n"
    (tmp_path / "a_user.py").write_text(user.format("A"))
    (tmp_path / "b_user.py").write_text(user.format("B"))  # reuses the summary of gate made for a_user
    (tmp_path / "c_other.py").write_text(
        "import torch\nclass C(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n")
    files = ["a_user.py", "b_user.py", "c_other.py", "helpers.py"]
    first = check(tmp_path, files)
    assert sorted({(d.path, d.code) for d in first.diagnostics}) == [("helpers.py", "UT101")]
    (tmp_path / "helpers.py").write_text("def gate(x):\n    return x\n")
    result = check(tmp_path, files)
    assert (result.analyzed, result.cache_hits) == (3, 1)  # both users and helpers.py; c_other.py is a hit
    assert result.diagnostics == []


def _scaled_tree(root: Path) -> list[str]:
    fixtures = Path(__file__).parent / "fixtures" / "layer_scale"
    for name in ("layers.py", "block.py"):
        (root / name).write_text((fixtures / name).read_text())
    (root / "other.py").write_text("x = 1\n")
    return ["block.py", "layers.py", "other.py"]


def test_a_warm_run_reads_the_text_answers_it_kept(tmp_path, monkeypatch):
    """The questions read from the tree's text (does any construction of LayerScale pass
    `inplace`?) are answered from the last run's answers while no file changed, and
    asked again, with the answers a run without the cache gives, when one did."""
    monkeypatch.chdir(tmp_path)
    files = _scaled_tree(tmp_path)
    cold = check(tmp_path, files)
    assert cold.diagnostics == []  # no construction passes inplace=True: x * gamma, no write
    kept = json.loads(next((tmp_path / ".untrace_cache").rglob("answers.json")).read_text())
    assert any("LayerScale" in question for question in kept["answers"])

    asked = []
    real = analyzer.module_index.ModuleIndex.answer
    monkeypatch.setattr(analyzer.module_index.ModuleIndex, "answer", lambda self, key: asked.append(key) or real(self, key))
    warm = check(tmp_path, files)
    assert warm.cache_hits == 3 and warm.diagnostics == cold.diagnostics
    assert [q for q in asked if analyzer.module_index.lookup_kind(q) in analyzer.cache.TEXT_QUESTIONS] == []

    # a file that changes no answer still changes the fingerprint: every question is asked again
    (tmp_path / "other.py").write_text("x = 2\n")
    assert check(tmp_path, files).diagnostics == []
    assert any("LayerScale" in q for q in asked)

    # one that changes the answer: layers.py's entry goes stale and the write is reported
    (tmp_path / "other.py").write_text("from layers import LayerScale\n\nls = LayerScale(4, inplace=True)\n")
    cached = check(tmp_path, files)
    fresh = check(tmp_path, files, use_cache=False)
    assert [(d.path, d.line, d.code) for d in cached.diagnostics] == [("layers.py", 12, "UT301")]
    assert cached.diagnostics == fresh.diagnostics


def test_kept_answers_of_another_tree_are_not_used(tmp_path, monkeypatch):
    """The answers are kept under the fingerprint of the files named and their bytes:
    checking a subset of the files is another tree, whose answers are its own."""
    monkeypatch.chdir(tmp_path)
    files = _scaled_tree(tmp_path)
    (tmp_path / "other.py").write_text("from layers import LayerScale\n\nls = LayerScale(4, inplace=True)\n")
    assert [d.code for d in check(tmp_path, files).diagnostics] == ["UT301"]
    alone = check(tmp_path, ["block.py", "layers.py"])
    assert alone.diagnostics == check(tmp_path, ["block.py", "layers.py"], use_cache=False).diagnostics == []
