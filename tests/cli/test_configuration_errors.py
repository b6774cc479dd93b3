"""Configuration and data files untrace reads: read as they are, or refused with a usage
error that names the file (and the position, where there is one), never skipped without
a word and never an internal error (issue 22, items 6, 8 and 15; docs/reliability.md)."""

from __future__ import annotations

import json
import struct
import zipfile

import pytest

from analyzer.config import ConfigError

NOT_UTF8 = b'[tool.untrace]\nselect = ["UT201"]\n# caf\xe9\n'
WAY_UP = ("untrace reads every pyproject.toml from the checked paths up to the first with [tool.untrace], "
          "and cannot tell whether this one holds it: fix it, or name the configuration with --config PATH")


def usage_error(cli, *argv) -> str:
    """The one-line message of a usage error: exit 2, nothing on stdout, no bug."""
    code, out, err = cli("check", "--no-cache", *argv)
    assert (code, out) == (2, ""), err
    assert err.startswith("untrace: error: ") and err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return err.removeprefix("untrace: error: ").rstrip("\n")


# ------------------------------------------------------------------ 6. a pyproject.toml that is not UTF-8, or not TOML


@pytest.mark.parametrize("table", [True, False], ids=["our-table", "no-table"])
def test_a_pyproject_that_is_not_utf8_is_refused_at_its_first_bad_byte(fake, tree, cli, table):
    # With our table it used to be skipped, and the run went on with the defaults (its
    # select was lost); without, it may hold our table for all untrace can tell.
    data = NOT_UTF8 if table else NOT_UTF8.replace(b"[tool.untrace]", b"[project]")
    (tree / "pkg" / "pyproject.toml").write_bytes(data)
    assert usage_error(cli, "pkg/model.py") == (
        f"{tree / 'pkg' / 'pyproject.toml'}:3:6: invalid configuration: not UTF-8 (byte 0xe9), "
        f"and TOML files must be; {WAY_UP}"
    )


def test_a_config_named_with_config_that_is_not_utf8_is_refused(fake, tree, cli):
    (tree / "other.toml").write_bytes(b'select = ["UT201"]\n\xff = 1\n')
    assert usage_error(cli, "--config", "other.toml", "pkg/model.py") == (
        "other.toml:2:1: invalid configuration: not UTF-8 (byte 0xff), and TOML files must be; save it as UTF-8"
    )


def test_an_invalid_pyproject_on_the_way_up_is_refused_even_without_our_table(fake, tree, cli):
    # It used to be stepped over unless its text held "tool.untrace": a table spelled
    # `[tool . untrace]`, or a broken file, changed the configuration without a word.
    (tree / "pkg" / "pyproject.toml").write_text('[project\nname = "x"\n')
    assert usage_error(cli, "pkg/model.py") == (
        f"{tree / 'pkg' / 'pyproject.toml'}:1:9: invalid TOML: Expected ']' at the end of a table declaration; {WAY_UP}"
    )


def test_a_broken_pyproject_above_the_configuration_is_never_read(fake, tree, cli):
    (tree / "pyproject.toml").write_bytes(b"[project\n\xff\n")
    (tree / "pkg" / "pyproject.toml").write_text('[tool.untrace]\nselect = ["UT201"]\n')
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "pkg/model.py")
    assert code == 1, err
    assert [d["code"] for d in json.loads(out)] == ["UT201"]


@pytest.mark.parametrize("command", ["export", "verify"])
def test_export_and_verify_refuse_a_pyproject_they_cannot_read_for_the_opset(tmp_path, monkeypatch, capsys, command):
    from analyzer.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(
        "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n"
    )
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.untrace]\nopset = 17\n# \xe9\n")
    code = main([command, "m.py:Net", "--input", "x:2x4"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err == (
        f"untrace {command}: {tmp_path / 'pyproject.toml'}:3:3: invalid configuration: not UTF-8 (byte 0xe9), "
        "and TOML files must be; untrace reads every pyproject.toml from the checked paths up to the first with "
        "[tool.untrace], and cannot tell whether this one holds it: fix it, or give the opset with --opset N "
        "(the configuration is then not read)\n"
    )


def test_a_per_file_ignores_glob_pathspec_refuses_is_an_invalid_configuration(fake, tree, cli):
    # found with item 6: it was "internal error: GitIgnorePatternError ... this is a bug"
    (tree / "pyproject.toml").write_text('[tool.untrace]\nper-file-ignores = { "!" = ["UT1"] }\n')
    assert usage_error(cli, "pkg/model.py") == (
        f"{tree / 'pyproject.toml'}: [tool.untrace]: `per-file-ignores`: invalid glob `!`: Invalid git pattern: '!'"
    )


# ------------------------------------------------------------------ 8. a selection that leaves nothing to report


def test_an_empty_select_in_the_configuration_is_a_usage_error(fake, tree, cli):
    (tree / "pyproject.toml").write_text("[tool.untrace]\nselect = []\n")
    assert usage_error(cli, "pkg/model.py") == (
        f"{tree / 'pyproject.toml'}: [tool.untrace]: `select` is empty, which turns every rule off; "
        "list the codes to report (ALL for every rule), or remove `select` for the default rules"
    )
    (tree / "other.toml").write_text("select = []\n")
    assert usage_error(cli, "--config", "other.toml", "pkg/model.py").startswith(
        "other.toml: top level: `select` is empty"
    )


def test_empty_extend_select_and_ignore_change_nothing(fake, tree, cli):
    (tree / "pyproject.toml").write_text("[tool.untrace]\nextend-select = []\nignore = []\n")
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "pkg/model.py")
    assert code == 1, err
    assert [d["code"] for d in json.loads(out)] == ["UT101", "UT201"]


@pytest.mark.parametrize(
    "table, argv, given",
    [
        ("", ["--select", "UT101", "--ignore", "UT1"], "--select UT101 --ignore UT1"),
        ("", ["--ignore", "ALL"], "--ignore ALL"),
        ("", ["--select", "UT103", "--extend-select", "UT101", "--ignore", "UT10"],
         "--select UT103 --extend-select UT101 --ignore UT10"),
        ('select = ["UT2"]\nignore = ["UT201"]', [], 'select = ["UT2"], ignore = ["UT201"] in {config}'),
        ('select = ["UT101"]', ["--ignore", "UT101"], 'select = ["UT101"] in {config}; then --ignore UT101'),
    ],
)
def test_a_selection_that_leaves_no_rule_on_is_a_usage_error(fake, tree, cli, table, argv, given):
    # It used to check every file and print "No hazards found", exit 0: a pre-commit hook
    # or CI job then passes whatever the code holds.
    (tree / "pyproject.toml").write_text(f"[tool.untrace]\n{table}\n")
    given = given.format(config=tree / "pyproject.toml")
    assert usage_error(cli, *argv, "pkg/model.py") == (
        f"no rule is left to report ({given}): every file would be reported clean; "
        "select at least one rule (`untrace rule` lists them), or ignore fewer"
    )


def test_the_command_line_may_select_again_what_the_configuration_turned_off(fake, tree, cli):
    (tree / "pyproject.toml").write_text('[tool.untrace]\nselect = ["UT101"]\nignore = ["UT1"]\n')
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "--select", "UT201", "pkg/model.py")
    assert code == 1, err
    assert [d["code"] for d in json.loads(out)] == ["UT201"]


def test_selecting_parse_errors_only_is_a_selection(fake, tree, cli):
    (tree / "pkg" / "broken.py").write_text("def f(:\n")
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "--select", "UT000", "pkg")
    assert code == 1, err
    assert [(d["path"], d["code"]) for d in json.loads(out)] == [("pkg/broken.py", "UT000")]


def test_the_api_refuses_a_selection_that_leaves_no_rule_on(fake, tree):
    from analyzer import check_paths, check_source

    with pytest.raises(ConfigError, match=r"^no rule is left to report \(--select ''\)"):
        check_source("x = 1\n", "m.py", select=[])
    with pytest.raises(ConfigError, match=r"^no rule is left to report \(--ignore ALL\)"):
        check_paths(["pkg"], ignore=["ALL"], use_cache=False, jobs=1)


# ------------------------------------------------------------------ 15. nesting too deep to read


@pytest.mark.parametrize(
    "text",
    [
        "[tool.untrace]\nselect = " + "[" * 5000 + "]" * 5000,
        "[tool.untrace]\nper-file-ignores = " + "{a = " * 5000 + "1" + "}" * 5000,
        '[project]\nname = "x"\nkeywords = ' + "[" * 5000 + "]" * 5000,  # not ours, but may be
    ],
    ids=["list", "inline-table", "no-table"],
)
def test_toml_nested_thousands_deep_is_an_invalid_configuration(fake, tree, cli, text):
    (tree / "pyproject.toml").write_text(text + "\n")
    assert usage_error(cli, "pkg/model.py") == (
        f"{tree / 'pyproject.toml'}: invalid configuration: arrays or inline tables nested too deep to read; {WAY_UP}"
    )


def test_a_deep_or_long_wrong_value_is_shown_by_its_start(fake, tree, cli):
    (tree / "pyproject.toml").write_text("[tool.untrace]\nselect = " + "[" * 200 + "]" * 200 + "\n")
    assert usage_error(cli, "pkg/model.py").endswith("`select` must be a list of strings, not [[[[...]]]]")
    (tree / "pyproject.toml").write_text("[tool.untrace]\nselect = [" + '"UT101", ' * 20000 + "1]\n")
    assert usage_error(cli, "pkg/model.py").endswith(
        "`select` must be a list of strings, not ['UT101', 'UT101', 'UT101', 'UT101', ...]"
    )


def test_a_notebook_nested_100000_deep_is_ut000_and_the_run_goes_on(fake, tree, cli):
    (tree / "pkg" / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "pkg")
    assert code == 1, err
    found = [(d["path"], d["code"], d["message"]) for d in json.loads(out)]
    assert ("pkg/deep.ipynb", "UT000", "not a valid notebook: JSON nested too deep") in found
    assert ("pkg/model.py", "UT101") in [(path, code) for path, code, _ in found]


def test_a_gitignore_of_deep_patterns_does_not_stop_the_walk(fake, tree, cli):
    (tree / "pkg" / ".gitignore").write_text("[" * 100_000 + "\n" + "**/" * 30_000 + "x\n" + "(" * 10_000 + "\n")
    code, out, err = cli("check", "--no-cache", "--output-format", "json", "pkg")
    assert code == 1, err
    assert sorted({d["path"] for d in json.loads(out)}) == ["pkg/model.py"]


def _npz_with_header(path, header: str) -> None:
    """An .npz holding one array `x` whose .npy header is ``header`` (padded as numpy does)."""
    header += " " * ((64 - (len(header) + 11) % 64) % 64) + "\n"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))


def test_verify_inputs_whose_array_header_is_nested_too_deep(tmp_path):
    from lowering.verification.inputs import load_npz

    path = tmp_path / "deep.npz"
    _npz_with_header(path, "{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 3000 + ")" * 3000 + "}")
    with pytest.raises(ValueError) as caught:
        load_npz(str(path), ["x"])
    message = str(caught.value)
    # numpy's message quoted the 6,000-character header and named no file
    assert message.startswith(f"{path}: array 'x' cannot be read (Cannot parse header: ")
    assert message.endswith("...); write the file again with np.savez(path, x=...)")
    assert len(message) < 300 + len(str(path))
