"""One finding per site, in one order, under one spelling of its path: the report of a
tree is the same bytes run after run, whatever the hash seed or the way files are named."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from .conftest import REPO, run_untrace

SITE = "multi_file/blocks.py"  # the UT101 that GatedClassifier reaches through GatedBlock


@pytest.fixture
def corpus(tmp_path):
    """A copy of ``corpora/multi_file`` and ``corpora/helper_function_branch.py`` (so that
    no cache or other engineer's run interferes), importable as ``corpora.multi_file``."""
    root = tmp_path / "project"
    (root / "corpora").mkdir(parents=True)
    shutil.copytree(REPO / "corpora" / "multi_file", root / "corpora" / "multi_file")
    shutil.copy(REPO / "corpora" / "helper_function_branch.py", root / "corpora")
    return root


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_report_is_byte_identical_whatever_the_hash_seed(corpus, fmt):
    args = ("check", "--no-cache", "--select", "ALL", "--output-format", fmt, "corpora/multi_file", "corpora/helper_function_branch.py")
    outputs = set()
    for seed in ("0", "1", "4"):
        done = run_untrace(*args, cwd=corpus, env={"PYTHONHASHSEED": seed})
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_a_site_reached_through_two_call_paths_is_one_finding_listing_both(corpus):
    done = run_untrace("check", "--no-cache", "--output-format", "json", "corpora/multi_file", cwd=corpus)
    assert done.returncode == 1, done.stderr
    findings = [d for d in json.loads(done.stdout) if d["code"] == "UT101"]
    assert len(findings) == 1
    (finding,) = findings
    assert (finding["path"], finding["line"], finding["column"]) == ("corpora/" + SITE, 18, 9)
    assert finding["call_path"] == ["GatedBlock.forward"]  # the shortest, as before
    assert finding["call_paths"] == [["GatedBlock.forward"], ["GatedClassifier.forward", "GatedBlock.forward"]]

    text = run_untrace("check", "--no-cache", "corpora/multi_file", cwd=corpus).stdout.decode()
    assert text.count("corpora/multi_file/blocks.py:18:9: UT101") == 1
    assert "   = via: GatedBlock.forward\n   = via: GatedClassifier.forward -> GatedBlock.forward\n" in text
    assert "Found 1 hazard in 1 file (3 files checked)." in text


def _concise_paths(done) -> list[str]:
    return [line.split(":", 1)[0] for line in done.stdout.decode().splitlines() if ": UT" in line]


def test_paths_are_relative_to_the_cwd_however_the_files_were_named(corpus):
    here = corpus / "corpora"
    blocks = str(here / "multi_file" / "blocks.py")  # absolute
    done = run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", "concise", "./helper_function_branch.py", blocks, cwd=here)
    assert done.returncode == 1, done.stderr
    assert _concise_paths(done) == ["helper_function_branch.py", "multi_file/blocks.py"]
    assert done.stdout.decode().splitlines()[-2] == "Found 2 hazards in 2 files (2 files checked)."

    data = json.loads(run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", "json", "./helper_function_branch.py", blocks, cwd=here).stdout)
    assert [d["path"] for d in data] == ["helper_function_branch.py", "multi_file/blocks.py"]


def test_paths_outside_the_cwd_are_absolute_and_sarif_uris_follow(corpus, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    helper = corpus / "corpora" / "helper_function_branch.py"
    blocks = corpus / "corpora" / "multi_file" / "blocks.py"
    named = [os.path.relpath(p, elsewhere) for p in (helper, blocks)]
    done = run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", "concise", *named, cwd=elsewhere)
    assert _concise_paths(done) == [str(helper), str(blocks)]

    sarif = json.loads(run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", "sarif", *named, cwd=elsewhere).stdout)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in sarif["runs"][0]["results"]]
    assert uris == [{"uri": helper.as_uri()}, {"uri": blocks.as_uri()}]
    inside = json.loads(run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", "sarif", "corpora", cwd=corpus).stdout)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in inside["runs"][0]["results"]]
    assert uris == [
        {"uri": "corpora/helper_function_branch.py", "uriBaseId": "%SRCROOT%"},
        {"uri": "corpora/multi_file/blocks.py", "uriBaseId": "%SRCROOT%"},
    ]
    assert inside["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": corpus.as_uri() + "/"}}


def test_a_cached_finding_in_another_file_keeps_its_path_from_another_working_directory(corpus):
    """The cache is shared by the whole project (its root is the configuration's); a
    finding that checking model.py reports in blocks.py must not keep the working
    directory of the run that cached it."""
    (corpus / "pyproject.toml").write_text("[tool.untrace]\n")
    files = [str(corpus / "corpora" / "multi_file" / name) for name in ("model.py", "blocks.py")]
    first = run_untrace("check", "--output-format", "concise", *files, cwd=corpus)
    again = run_untrace("check", "--output-format", "concise", *files, cwd=corpus / "corpora")
    assert _concise_paths(first) == ["corpora/multi_file/blocks.py"]
    assert (corpus / ".untrace_cache").is_dir()
    assert _concise_paths(again) == ["multi_file/blocks.py"]


SPELLED_MODEL = """\
import torch

from other import Other


class Net(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            x = -x
        try:
            y = x + 1
        except Exception:
            y = x
        return y


torch.onnx.export(Other().eval(), (torch.zeros(2),), "o.onnx", dynamo=False)
"""

OTHER = """\
import torch


class Other(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return -x
        return x
"""


@pytest.fixture
def spelled(tmp_path):
    """x.py, whose findings name files in their text: the scriptability hint (`try/except
    at x.py:10`) and UT402's call path into other.py (`(other.py:6)`)."""
    (tmp_path / "x.py").write_text(SPELLED_MODEL)
    (tmp_path / "other.py").write_text(OTHER)
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_the_spelling_of_a_named_file_does_not_reach_the_report(spelled, fmt):
    """`check ./x.py`, `check x.py` and `check $PWD/x.py` give the same bytes, the paths
    inside messages and suggestions included."""
    outputs = set()
    for name in ("./x.py", "x.py", str(spelled / "x.py")):
        done = run_untrace("check", "--no-cache", "--select", "ALL", "--output-format", fmt, name, "./other.py",
                           cwd=spelled)
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    (out,) = outputs
    if fmt != "concise":  # which shows no suggestions
        assert b"try/except at x.py:10" in out
    assert b"(other.py:6)" in out
    assert b"./" not in out and str(spelled).encode() not in out.replace(spelled.as_uri().encode(), b"")


def test_paths_inside_messages_follow_the_working_directory_of_the_run_even_from_the_cache(spelled):
    """A message cached from one working directory names files as a run from another
    would: from a folder the files are not under, by their absolute paths."""
    (spelled / "pyproject.toml").write_text("[tool.untrace]\n")
    (spelled / "sub").mkdir()
    names = (str(spelled / "x.py"), str(spelled / "other.py"))
    args = ("check", "--select", "ALL", "--output-format", "json", *names)
    first = run_untrace(*args, cwd=spelled)
    assert (spelled / ".untrace_cache").is_dir()
    cached = run_untrace(*args, cwd=spelled / "sub")
    fresh = run_untrace(*args, "--no-cache", cwd=spelled / "sub")
    assert cached.stdout == fresh.stdout
    text = cached.stdout.decode()
    assert f"try/except at {spelled / 'x.py'}:10" in text and f"({spelled / 'other.py'}:6)" in text
    assert "try/except at x.py:10" in first.stdout.decode()


VERIFIED = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 1e9:  # never taken by the random inputs: reported as uncovered
            return x * 2
        return -x


def build():
    return Net()
"""


def test_the_spelling_of_the_verify_target_does_not_reach_its_report(tmp_path):
    """verify's report names the sites it covers as check names its findings: `m.py:6`
    whether TARGET was `./m.py:build`, `m.py:build` or absolute (only `target` echoes it)."""
    (tmp_path / "m.py").write_text(VERIFIED)
    texts, sites = set(), set()
    for name in ("./m.py", "m.py", str(tmp_path / "m.py")):
        done = run_untrace("verify", f"{name}:build", "--input", "x:2x3:float32", "--compare", "none",
                           "--json", "r.json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        texts.add(done.stdout + done.stderr)
        report = json.loads((tmp_path / "r.json").read_text())
        sites.add(json.dumps([report["coverage"], report["uncovered"]]))
    assert len(texts) == 1 and len(sites) == 1
    assert json.loads(sites.pop())[1] == ["m.py:6"]
    assert b"m.py:6" in texts.pop()
