"""Property: `check --fix` never drops a user's edit and never leaves a file that does not
compile, whenever the user edits during the run.

Hypothesis draws edits (a line appended, a comment inserted, the hazard removed, ...) and
the moments they happen: after any analysis pass (`run_check`) or between a fix being
planned and written (`rewrite`, the narrowest window). The edit is made by reading the
file and writing it back changed, as an editor saving would. Afterwards every edit's
mark is in the file and the file compiles."""

from __future__ import annotations

import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analyzer.runner
from analyzer.cli import main
from analyzer.fixes import files

from .test_user_files import FIXABLE

MODELS = [
    FIXABLE,
    textwrap.dedent("""\
        import torch
        from torch import nn


        class Gate(nn.Module):
            def forward(self, x, h):
                if x.mean() > 0:
                    h = h + x
                else:
                    h = h - x
                assert (h > -10).all()
                return h
        """),
]


def _edit(kind: str, mark: str):
    """A change a user could save, containing ``mark``; text -> new text."""
    def edit(text: str) -> str:
        lines = text.splitlines(keepends=True)
        if kind == "append":
            return text + f"\n{mark} = 1\n"
        if kind == "comment-on-top":
            return f"# {mark}\n" + text
        if kind in ("comment-inside", "statement-inside"):
            at = next(i for i, line in enumerate(lines) if "def forward" in line) + 1
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
            new = f"# {mark}" if kind == "comment-inside" else f"{mark} = x.shape[0]"
            return "".join(lines[:at] + [f"{indent}{new}\n"] + lines[at:])
        raise AssertionError(kind)
    return edit


MOMENTS = [("analysis", 1), ("analysis", 2), ("rewrite", 1), ("rewrite", 2)]
edits = st.lists(
    st.tuples(st.sampled_from(["append", "comment-on-top", "comment-inside", "statement-inside"]), st.sampled_from(MOMENTS),
              st.integers(0, len(MODELS) - 1)),
    min_size=1, max_size=3,
)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits)
def test_fix_never_drops_an_edit_nor_breaks_a_file(tmp_path_factory, monkeypatch, capsys, plan):
    root = tmp_path_factory.mktemp("fix")
    paths = []
    for i, model in enumerate(MODELS):
        path = root / f"m{i}.py"
        path.write_text(model)
        paths.append(path)
    monkeypatch.chdir(root)
    pending = [(moment, paths[target], _edit(kind, f"user_mark_{n}"), f"user_mark_{n}")
               for n, (kind, moment, target) in enumerate(plan)]
    counts = {"analysis": 0, "rewrite": 0}

    def happen(event: str) -> None:
        counts[event] += 1
        for item in list(pending):
            (when, nth), path, edit, _ = item
            if when == event and nth == counts[event]:
                path.write_text(edit(path.read_text()))
                pending.remove(item)

    real_run, real_rewrite = analyzer.runner.run_check, files.rewrite

    def run_check(*args, **kwargs):
        result = real_run(*args, **kwargs)
        happen("analysis")
        return result

    def rewrite(path, planned, new):
        happen("rewrite")
        return real_rewrite(path, planned, new)

    monkeypatch.setattr(analyzer.runner, "run_check", run_check)
    monkeypatch.setattr(files, "rewrite", rewrite)
    main(["check", "--no-cache", "-j", "1", "--fix", "--unsafe-fixes", "--exit-zero", "."])
    capsys.readouterr()
    happened = {f"user_mark_{n}" for n in range(len(plan))} - {mark for *_, mark in pending}
    for path in paths:
        compile(path.read_text(), str(path), "exec")
    everything = "".join(path.read_text() for path in paths)
    for mark in happened:
        assert mark in everything, (plan, mark)
