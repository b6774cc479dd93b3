"""Property: a run with the cache prints exactly what the same command prints without it,
whatever ran before (other file sets, edits, files and packages appearing and going).

Hypothesis draws sequences of commands over a small tree whose findings cross files
(an export script that imports a model package, a package whose block branches on data);
after every command, the cached output and exit code are compared byte for byte with a
`--no-cache` run of the same command on the same tree."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.cli import main

REPO = Path(__file__).resolve().parents[2]

TREE = {
    "corpora/multi_file/__init__.py": REPO / "corpora/multi_file/__init__.py",
    "corpora/multi_file/blocks.py": REPO / "corpora/multi_file/blocks.py",
    "corpora/multi_file/model.py": REPO / "corpora/multi_file/model.py",
    "corpora/mlp_classifier.py": REPO / "corpora/mlp_classifier.py",
    "scripts/export_it.py": REPO / "corpora/export_scripts/legacy_export_imported.py",
    "helper.py": REPO / "corpora/helper_function_branch.py",
    # a question read from the tree's text (does any construction pass `inplace`?)
    "scaled/layers.py": Path(__file__).parent / "fixtures/layer_scale/layers.py",
    "scaled/block.py": Path(__file__).parent / "fixtures/layer_scale/block.py",
}
PATHS = [".", "scripts/export_it.py", "corpora", "corpora/multi_file/model.py", "corpora/multi_file",
         "scripts", "helper.py", "scaled", "scaled/layers.py"]

# Edits that change what other files' results depend on.
EDITS = {
    "calm the block": ("corpora/multi_file/blocks.py", lambda t: t.replace("if gate.mean() < self.skip_below:",
                                                                         "if False:")),
    "restore the block": ("corpora/multi_file/blocks.py", None),
    "drop the package marker": ("corpora/multi_file/__init__.py", "delete"),
    "restore the package marker": ("corpora/multi_file/__init__.py", None),
    "add a corpora package": ("corpora/__init__.py", lambda t: ""),
    "remove the corpora package": ("corpora/__init__.py", "delete"),
    "a second mlp_classifier": ("scripts/mlp_classifier.py", lambda t: (REPO / "corpora/mlp_classifier.py").read_text()),
    "no second mlp_classifier": ("scripts/mlp_classifier.py", "delete"),
    "scale in place": ("scaled/block.py", lambda t: t.replace("LayerScale(dim)", "LayerScale(dim, inplace=True)")),
    "scale out of place": ("scaled/block.py", None),
    "build a second scale": ("scaled/other.py", lambda t: "from layers import LayerScale\n\nls = LayerScale(4, inplace=True)\n"),
    "drop the second scale": ("scaled/other.py", "delete"),
}

commands = st.lists(
    st.one_of(
        st.tuples(st.just("check"), st.lists(st.sampled_from(PATHS), min_size=1, max_size=2, unique=True)),
        st.tuples(st.just("edit"), st.sampled_from(sorted(EDITS))),
    ),
    min_size=2,
    max_size=6,
)


def _apply(root: Path, edit: str) -> None:
    relative, change = EDITS[edit]
    path = root / relative
    if change == "delete":
        path.unlink(missing_ok=True)
    elif change is None:
        source = TREE.get(relative)
        if source is not None:
            path.write_bytes(source.read_bytes())
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(change(path.read_text() if path.exists() else ""))


def _run(capsys, *argv) -> tuple[int, str]:
    code = main(["check", "--select", "ALL", "--output-format", "json", "-j", "1", *argv])
    out, _ = capsys.readouterr()
    return code, out


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(commands)
def test_a_cached_run_prints_what_an_uncached_run_prints(tmp_path_factory, monkeypatch, capsys, sequence):
    root = tmp_path_factory.mktemp("tree")
    for relative, source in TREE.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / relative)
    monkeypatch.chdir(root)
    cache = str(root.parent / f"{root.name}-cache")
    for kind, argument in sequence:
        if kind == "edit":
            _apply(root, argument)
            continue
        paths = [p for p in argument if (root / p).exists()] or ["."]
        cached = _run(capsys, "--cache-dir", cache, *paths)
        fresh = _run(capsys, "--no-cache", *paths)
        assert cached == fresh, (sequence, paths)
