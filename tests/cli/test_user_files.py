"""What `untrace check` may write: its own cache, and the fixes the user asked for, into
the files that were named, only while they hold the text analysed (docs/reliability.md)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import analyzer.runner
from analyzer.cache import CACHEDIR_TAG, GITIGNORE, VERSION_MARKER, Cache, CacheError
from analyzer.cli import main
from analyzer.config import Config

from .conftest import run_untrace

REPO = Path(__file__).resolve().parents[2]

# One UT101 fix (torch.cond) and one finding without a fix after it.
FIXABLE = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                x = -x
            y = x.max().item()
            return x * y
    """)


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root`` with its kind, mode and content (or link target)."""
    out = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            out[str(path.relative_to(root))] = ("link", os.readlink(path))
        elif path.is_dir():
            out[str(path.relative_to(root))] = ("dir", stat.S_IMODE(info.st_mode))
        else:
            out[str(path.relative_to(root))] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return out


def check(capsys, *argv) -> tuple[int, str, str]:
    code = main(["check", "-j", "1", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository with a model, docs and history: what a user points untrace at."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "src" / "head.py").write_text(FIXABLE)
    (tmp_path / "docs" / "index.md").write_text("hi\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
           "GIT_COMMITTER_EMAIL": "u@x"}
    for argv in (["init", "-q", "."], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True, env=env, capture_output=True)
    return tmp_path


# ------------------------------------------------------------------ 1. the cache owns only what it made


def test_cache_dir_on_a_repository_touches_nothing_of_it(repo, capsys):
    before = snapshot(repo)
    code, out, err = check(capsys, "--cache-dir", ".", "src")
    assert code == 2
    assert "holds files untrace did not make (.git, docs, src)" in err and "nothing was changed" in err
    assert snapshot(repo) == before


def test_cache_dir_with_one_foreign_file_is_refused(repo, capsys):
    (repo / "cache").mkdir()
    (repo / "cache" / "notes.txt").write_text("mine\n")
    before = snapshot(repo)
    code, _, err = check(capsys, "--cache-dir", "cache", "src")
    assert code == 2 and "(notes.txt)" in err
    assert snapshot(repo) == before


def test_a_new_cache_dir_is_made_tagged_and_ignored(repo, capsys):
    assert check(capsys, "--cache-dir", "new/cache", "src")[0] == 1
    root = repo / "new" / "cache"
    assert (root / "CACHEDIR.TAG").read_bytes() == CACHEDIR_TAG
    assert (root / ".gitignore").read_bytes() == GITIGNORE  # untrace made this folder
    (version,) = [p for p in root.iterdir() if p.is_dir()]
    assert (version / VERSION_MARKER).is_file()
    assert check(capsys, "--cache-dir", "new/cache", "src")[0] == 1  # our own folder: used again


def test_an_empty_folder_the_user_made_gets_no_gitignore(repo, capsys):
    (repo / "cache").mkdir()
    assert check(capsys, "--cache-dir", "cache", "src")[0] == 1
    assert not (repo / "cache" / ".gitignore").exists()
    assert (repo / "cache" / "CACHEDIR.TAG").is_file()


def test_a_stale_version_folder_is_removed_only_when_it_is_marked_ours(repo, capsys, monkeypatch):
    check(capsys, "src")
    root = repo / ".untrace_cache"
    (ours,) = [p for p in root.iterdir() if p.is_dir()]
    lookalike = root / "0.0.1-0123456789abcdef"  # our name pattern, but no marker of ours
    lookalike.mkdir()
    (lookalike / "keep.txt").write_text("not untrace's\n")
    import time

    import analyzer.cache

    unused = time.time() - analyzer.cache.STALE_AFTER - 60  # both unused for long
    for folder in (ours / VERSION_MARKER, lookalike / "keep.txt", lookalike):
        os.utime(folder, (unused, unused))

    monkeypatch.setattr(analyzer.cache, "analyzer_hash", lambda: "fedcba9876543210")
    assert check(capsys, "src")[0] == 1
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert ours.name not in names  # marked: ours to remove
    assert names == sorted([lookalike.name, f"{analyzer.cache.__version__}-fedcba9876543210"])
    assert (lookalike / "keep.txt").read_text() == "not untrace's\n"


def test_a_file_named_as_the_cache_dir_is_refused(repo, capsys):
    before = snapshot(repo)
    code, _, err = check(capsys, "--cache-dir", "docs/index.md", "src")
    assert code == 2 and "is not a directory" in err
    assert snapshot(repo) == before


def test_cache_class_refuses_before_creating_anything(tmp_path):
    (tmp_path / "x").write_text("")
    with pytest.raises(CacheError):
        Cache(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"]


# ------------------------------------------------------------------ 2. fixes apply to the text analysed


def _edit_after_analysis(monkeypatch, path: Path, text: str):
    """Make the user edit ``path`` between the analysis and the writing of fixes."""
    real = analyzer.runner.run_check
    calls = {"n": 0}

    def run_then_edit(*args, **kwargs):
        result = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 1:
            path.write_text(text)
        return result

    monkeypatch.setattr(analyzer.runner, "run_check", run_then_edit)


def test_a_file_edited_during_the_run_is_not_fixed(repo, capsys, monkeypatch):
    target = repo / "src" / "head.py"
    edited = FIXABLE.replace("return x * y", "return x * y + 1  # the user's new line")
    _edit_after_analysis(monkeypatch, target, edited)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "src")
    assert target.read_text() == edited
    assert "src/head.py: changed since analysis, not fixed" in err
    assert code == 1


def test_a_file_edited_during_diff_is_not_shown(repo, capsys, monkeypatch):
    target = repo / "src" / "head.py"
    _edit_after_analysis(monkeypatch, target, FIXABLE + "# more\n")
    code, out, err = check(capsys, "--no-cache", "--diff", "--unsafe-fixes", "src")
    assert out == "" and "src/head.py: changed since analysis, not fixed" in err


def test_concurrent_fix_runs_leave_every_file_compiling(tmp_path):
    """Two `check --fix` runs at once on one tree: each file is fixed by one of them (the
    other sees it changed), never by both."""
    for attempt in range(3):
        tree = tmp_path / f"t{attempt}"
        tree.mkdir()
        for i in range(6):
            (tree / f"m{i}.py").write_text(FIXABLE.replace("class Net", f"class Net{i}"))
        command = [sys.executable, "-m", "analyzer.cli", "check", "--no-cache", "-j", "1",
                   "--fix", "--unsafe-fixes", "--exit-zero", "."]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        runs = [subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in range(2)]
        for run in runs:
            run.communicate(timeout=300)
        for i in range(6):
            text = (tree / f"m{i}.py").read_text()
            compile(text, f"m{i}.py", "exec")
            assert text.count("torch.cond(") == 1, text  # fixed once, not twice


def test_a_fix_is_not_written_outside_the_named_files(tmp_path, monkeypatch, capsys):
    """A finding in a file the analysis only read (an imported block) is reported but
    that file is not rewritten, even from a warm cache."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "blocks.py").write_text(textwrap.dedent("""\
        import torch
        from torch import nn


        class Block(nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    x = -x
                return x
        """))
    (tmp_path / "pkg" / "model.py").write_text(textwrap.dedent("""\
        from torch import nn

        from pkg.blocks import Block


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x)
        """))
    before = snapshot(tmp_path / "pkg")
    assert check(capsys, "pkg")[0] == 1  # warm the cache with the whole package: UT101 in blocks.py
    code, out, err = check(capsys, "--fix", "--unsafe-fixes", "pkg/model.py")
    assert snapshot(tmp_path / "pkg") == before
    assert code == 0  # alone, model.py cannot see into blocks.py, with or without the cache
    assert check(capsys, "--no-cache", "pkg/model.py")[0] == 0


def test_fix_files_writes_only_the_files_planned(tmp_path, monkeypatch):
    """The last line of defence: a finding in a file the run was not given is not fixed."""
    from analyzer.fixes.apply import NOT_NAMED, fix_files
    from analyzer.runner import check_source

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    found = check_source(FIXABLE, "m.py")
    (outcome,) = fix_files(found, unsafe=True, planned={})
    assert outcome.status == NOT_NAMED and not outcome.written
    assert (tmp_path / "m.py").read_text() == FIXABLE
    (outcome,) = fix_files(found, unsafe=True, planned={"m.py": _sha(FIXABLE.encode())})
    assert outcome.written and "torch.cond(" in (tmp_path / "m.py").read_text()


# ------------------------------------------------------------------ 3. cache history does not change results


def test_results_do_not_depend_on_what_ran_before(tmp_path, monkeypatch, capsys):
    """`check export_it.py` then `check .` reports what `check --no-cache .` does."""
    monkeypatch.chdir(tmp_path)
    corpora = tmp_path / "corpora"
    (corpora / "multi_file").mkdir(parents=True)
    for name in ("__init__.py", "blocks.py", "model.py"):
        (corpora / "multi_file" / name).write_bytes((REPO / "corpora" / "multi_file" / name).read_bytes())
    (corpora / "mlp_classifier.py").write_bytes((REPO / "corpora" / "mlp_classifier.py").read_bytes())
    (tmp_path / "export_it.py").write_bytes((REPO / "corpora" / "export_scripts" / "legacy_export_imported.py").read_bytes())
    json_of = lambda *argv: check(capsys, "--output-format", "json", *argv)[:2]  # noqa: E731
    alone, whole = json_of("--no-cache", "export_it.py"), json_of("--no-cache", ".")
    assert alone != whole  # the named files decide what resolves
    for order in ([("export_it.py",), (".",)], [(".",), ("export_it.py",)]):
        for paths in order:
            assert json_of(*paths) == (alone if paths == ("export_it.py",) else whole)


# ------------------------------------------------------------------ 4. the report after --fix


def test_the_report_after_fix_has_the_positions_of_the_fixed_text(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "--output-format", "concise", "m.py")
    fixed = (tmp_path / "m.py").read_text()
    line = next(i for i, text in enumerate(fixed.splitlines(), 1) if ".item()" in text)
    assert out.splitlines()[0].startswith(f"m.py:{line}:13: UT201")
    assert line != 9  # the line it had before the fix
    fresh = check(capsys, "--no-cache", "--output-format", "concise", "m.py")[1]
    assert out.splitlines()[0] == fresh.splitlines()[0]


# ------------------------------------------------------------------ 5. newline styles


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_fix_keeps_the_newline_style(tmp_path, monkeypatch, capsys, newline):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_bytes(FIXABLE.replace("\n", newline).encode())
    code, out, _ = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "--output-format", "concise", "m.py")
    data = (tmp_path / "m.py").read_bytes()
    assert b"torch.cond(" in data
    others = {"\r\n": [b"\n", b"\r"], "\r": [b"\n"]}[newline]
    stripped = data.replace(newline.encode(), b"")
    assert not any(other in stripped for other in others)
    assert out.startswith("m.py:13:13: UT201")


# ------------------------------------------------------------------ how fixes write files


def test_fix_through_a_symlink_fixes_the_target_once_and_keeps_the_link(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real.py").write_text(FIXABLE)
    (tmp_path / "link.py").symlink_to("real.py")
    check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "real.py", "link.py")
    assert (tmp_path / "link.py").is_symlink() and os.readlink(tmp_path / "link.py") == "real.py"
    assert (tmp_path / "real.py").read_text().count("torch.cond(") == 1


def test_a_hard_linked_file_is_not_fixed_and_keeps_its_links(tmp_path, monkeypatch, capsys):
    """No write changes every link of an inode at once: an in-place write cut short
    leaves every link torn, and a replace leaves the other links on the old text."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(FIXABLE)
    os.chmod(tmp_path / "a.py", 0o640)
    os.link(tmp_path / "a.py", tmp_path / "b.txt")
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "a.py")
    assert (tmp_path / "a.py").read_text() == FIXABLE == (tmp_path / "b.txt").read_text()
    assert os.stat(tmp_path / "a.py").st_nlink == 2
    assert stat.S_IMODE(os.stat(tmp_path / "a.py").st_mode) == 0o640
    assert "a.py: has 2 hard links, not fixed" in err and code == 1
    assert "[*] 1 fixable, not applied by --fix (see the warnings above)." in out


def test_fix_keeps_the_mode_of_a_file_without_links(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(FIXABLE)
    os.chmod(tmp_path / "a.py", 0o751)
    check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "a.py")
    assert "torch.cond(" in (tmp_path / "a.py").read_text()
    assert stat.S_IMODE(os.stat(tmp_path / "a.py").st_mode) == 0o751
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_read_only_file_is_not_fixed(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(FIXABLE)
    os.chmod(tmp_path / "a.py", 0o444)
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", "a.py")
    assert (tmp_path / "a.py").read_text() == FIXABLE
    assert "a.py: read-only, not fixed" in err and code == 1


def test_the_real_command_refuses_a_foreign_cache_dir(repo):
    before = snapshot(repo)
    result = run_untrace("check", "--cache-dir", ".", "src", cwd=repo)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert snapshot(repo) == before


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_rewrite_refuses_bytes_it_did_not_plan_on(tmp_path):
    from analyzer.fixes import files

    target = tmp_path / "a.py"
    target.write_bytes(b"old\n")
    assert files.rewrite(str(target), _sha(b"other\n"), b"new\n") == files.CHANGED
    assert target.read_bytes() == b"old\n"
    assert files.rewrite(str(target), _sha(b"old\n"), b"new\n") == files.WRITTEN
    assert target.read_bytes() == b"new\n"


def test_config_root_cache_is_the_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    check(capsys, "m.py")
    assert (tmp_path / ".untrace_cache" / ".gitignore").read_bytes() == GITIGNORE
    assert Config(root=tmp_path).root == tmp_path


# ------------------------------------------------------------------ outputs never overwrite what was read


def test_check_report_may_not_overwrite_a_checked_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    code, _, err = check(capsys, "--no-cache", "-o", "m.py", ".")
    assert code == 2 and "-o m.py: is a checked file, which writing would destroy" in err
    assert (tmp_path / "m.py").read_text() == FIXABLE


def test_check_report_in_a_missing_folder_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    code, _, err = check(capsys, "--no-cache", "-o", "nowhere/r.json", "m.py")
    assert code == 2 and "folder nowhere does not exist" in err
    assert not (tmp_path / ".untrace_cache").exists()


def test_graph_output_may_not_overwrite_its_source(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(FIXABLE)
    code = main(["graph", "m.py", "-o", "m.py"])
    assert code == 2 and "is the file shown, which writing would destroy" in capsys.readouterr().err
    assert (tmp_path / "m.py").read_text() == FIXABLE


@pytest.mark.parametrize("spelling", ["absolute", "outside the working directory"])
def test_fix_finds_a_file_however_it_was_named(tmp_path, monkeypatch, capsys, spelling):
    (tmp_path / "proj").mkdir()
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "proj" / "m.py"
    target.write_text(FIXABLE)
    monkeypatch.chdir(tmp_path / ("proj" if spelling == "absolute" else "elsewhere"))
    named = str(target) if spelling == "absolute" else "../proj/m.py"
    code, out, err = check(capsys, "--no-cache", "--fix", "--unsafe-fixes", named)
    assert "torch.cond(" in target.read_text() and "not fixed" not in err


def test_diff_of_a_file_holding_a_line_separator_applies_with_git(tmp_path, monkeypatch, capsys):
    """U+2028 inside a string is no line break for Python: the patch must not split there,
    or `git apply` rejects it (and the line numbers after it are off)."""
    monkeypatch.chdir(tmp_path)
    # inside the hunk's context: a split there made the hunk's line counts wrong
    source = FIXABLE.replace("        if x.sum()", "        note = 'a\u2028b'\n        if x.sum()", 1)
    (tmp_path / "m.py").write_text(source)
    code, patch, _ = check(capsys, "--no-cache", "--diff", "--unsafe-fixes", "m.py")
    assert "torch.cond(" in patch
    (tmp_path / "fix.patch").write_text(patch)
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True, capture_output=True)
    fixed = (tmp_path / "m.py").read_text()
    assert "'a\u2028b'" in fixed and "torch.cond(" in fixed
    compile(fixed, "m.py", "exec")


def test_diff_marks_a_last_line_without_newline():
    from analyzer.fixes.apply import unified_diff

    assert unified_diff("a\nb", "a\nc", "m.py").endswith("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")
