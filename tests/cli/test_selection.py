"""Rule selection (--select/--ignore/--extend-select, prefixes, ALL), [tool.untrace],
per-file-ignores and # noqa."""

from __future__ import annotations

import json
import textwrap

import pytest

from analyzer.config import Config, ConfigError, Selection, enabled_codes, load_config, resolve_config
from analyzer.noqa import parse_noqa


def codes(cli, *argv):
    code, out, err = cli("check", *argv, "--no-cache", "--output-format", "json")
    assert code in (0, 1), err
    return [d["code"] for d in json.loads(out)]


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], ["UT101", "UT201"]),  # UT103 is off by default
        (["--select", "ALL"], ["UT101", "UT103", "UT201"]),
        (["--select", "UT1"], ["UT101", "UT103"]),  # a prefix turns on default-off rules
        (["--select", "UT103"], ["UT103"]),
        (["--select", "ut201,UT101"], ["UT101", "UT201"]),
        (["--select", "UT101 UT201"], ["UT101", "UT201"]),
        (["--extend-select", "UT103"], ["UT101", "UT103", "UT201"]),
        (["--ignore", "UT2"], ["UT101"]),
        (["--select", "ALL", "--ignore", "UT10"], ["UT201"]),
        (["--select", "data-dependent-branch"], ["UT101"]),  # rule names stand for codes
        (["--select", "UT000"], []),  # parse errors only, as asked
    ],
)
def test_select_ignore(fake, tree, cli, argv, expected):
    assert codes(cli, "pkg/model.py", *argv) == expected


def test_parse_errors_are_reported_whatever_is_selected(fake, tree, cli):
    (tree / "pkg" / "broken.py").write_text("def f(:\n")
    assert codes(cli, "pkg/broken.py", "--select", "UT101") == ["UT000"]
    assert codes(cli, "pkg/broken.py", "--ignore", "UT000") == []


def test_enabled_codes_layers():
    known = {"UT000": True, "UT101": True, "UT103": False, "UT201": True}
    config = Selection(select=("UT1",), ignore=("UT101",))
    assert enabled_codes([config], known) == {"UT000", "UT103"}
    # the command line's select starts again: the config's ignore no longer applies
    assert enabled_codes([config, Selection(select=("UT101",))], known) == {"UT000", "UT101"}
    # ...but an ignore on the command line alone adds to the config's selection
    assert enabled_codes([config, Selection(ignore=("UT103",))], known) == {"UT000"}


PYPROJECT = """\
[project]
name = "demo"

[tool.untrace]
select = ["ALL"]
ignore = ["UT201"]
per-file-ignores = { "pkg/clean.py" = ["ALL"], "**/legacy_*.py" = ["UT1"] }
extend-exclude = ["generated/"]
opset = 17
"""


def test_config_is_loaded_from_nearest_pyproject(fake, tree, cli):
    (tree / "pyproject.toml").write_text(PYPROJECT)
    (tree / "pkg" / "legacy_net.py").write_text(
        "def f(x):\n    if x.sum():\n        return x.max().item()\n"
    )
    (tree / "generated").mkdir()
    (tree / "generated" / "g.py").write_text("def f(x):\n    if x.sum():\n        pass\n")
    code, out, _ = cli("check", ".", "--no-cache", "--output-format", "json")
    found = [(d["path"], d["code"]) for d in json.loads(out)]
    assert found == [("pkg/model.py", "UT101"), ("pkg/model.py", "UT103")]
    # a subdirectory finds the same config
    code, out, _ = cli("check", "pkg", "--no-cache", "--output-format", "json")
    assert [(d["path"], d["code"]) for d in json.loads(out)] == found
    # the command line overrides the configured select, and the config's ignore with it
    assert codes(cli, "pkg/model.py", "--select", "UT201") == ["UT201"]
    config = resolve_config(["pkg"])
    assert config.opset == 17 and config.path == tree / "pyproject.toml"


def test_pyproject_without_our_table_is_skipped(fake, tree, cli):
    (tree / "pyproject.toml").write_text(PYPROJECT)
    (tree / "pkg" / "pyproject.toml").write_text("[project]\nname = 'inner'\n")
    assert resolve_config(["pkg/model.py"]).path == tree / "pyproject.toml"


def test_explicit_config(fake, tree, cli):
    other = tree / "other.toml"
    other.write_text('select = ["UT103"]\n')
    assert codes(cli, "pkg/model.py", "--config", str(other)) == ["UT103"]


@pytest.mark.parametrize(
    "table, message",
    [
        ('selct = ["UT101"]', "unknown key `selct` (did you mean `select`?)"),
        ('select = ["UT999"]', "unknown rule code(s): UT999"),
        ('per-file-ignores = { "a.py" = ["NOPE1"] }', "unknown rule code(s): NOPE1"),
        ('select = "UT101"', "`select` must be a list of strings"),
        ("opset = 0", "`opset` must be a positive integer"),
        ('per-file-ignores = ["x"]', "must be a table"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_config_is_a_usage_error_naming_the_file(fake, tree, cli, table, message):
    (tree / "pyproject.toml").write_text(f"[tool.untrace]\n{table}\n")
    code, out, err = cli("check", "pkg", "--no-cache")
    assert code == 2, out
    assert str(tree / "pyproject.toml") in err or "pyproject.toml" in err
    assert message in err and "Traceback" not in err


def test_config_error_is_a_value_error_for_the_api(fake, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.untrace]\nbogus = 1\n")
    with pytest.raises(ValueError, match="bogus"):
        load_config(tmp_path / "pyproject.toml")
    assert issubclass(ConfigError, ValueError)


NOQA_MODEL = textwrap.dedent(
    '''\
    def f(x):
        if x.sum() > 0:  # noqa: UT101
            pass
        if x.max() > 0:  # noqa
            pass
        if x.any():  # NOQA:UT201,UT1 because we know
            pass
        a = x.sum().item()  # noqa: UT2
        b = x.sum().item()  # noqa: UT101
        c = "# noqa"; d = x.max().item()
        e = x.sum().item()  # type: ignore # noqa:UT201
        if x.sum():  # noqa:UT101 UT102
            pass
        g = (x.max()
             .item())  # noqa: UT201
    '''
)


def test_noqa(fake, tree, cli):
    (tree / "pkg" / "noqa.py").write_text(NOQA_MODEL)
    code, out, _ = cli("check", "pkg/noqa.py", "--no-cache", "--output-format", "json")
    # line 9 names another code; line 10's noqa is inside a string; line 15's noqa is not
    # on the first line of the finding's span
    assert [(d["line"], d["code"]) for d in json.loads(out)] == [(9, "UT201"), (10, "UT201"), (14, "UT201")]


@pytest.mark.parametrize(
    "comment, expected",
    [
        ("# noqa", None),
        ("#noqa", None),
        ("# noqa:", None),
        ("# NoQA: ut101", frozenset({"UT101"})),
        ("# noqa: UT101, UT2", frozenset({"UT101", "UT2"})),
        ("# noqa:UT101,UT102", frozenset({"UT101", "UT102"})),
        ("# noqa-ish", False),
        ("# no qa", False),
    ],
)
def test_parse_noqa(comment, expected):
    assert parse_noqa(comment) == expected


def test_noqa_on_real_rules(tmp_path):
    from analyzer import check_source

    source = textwrap.dedent(
        """\
        import torch
        class Net(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:  # noqa: UT101
                    x = -x
                if x.mean() > 0:
                    x = x + 1
                return x
        """
    )
    assert [(d.line, d.code) for d in check_source(source, "m.py")] == [(6, "UT101")]


def test_api_select_and_config(fake, tree):
    from analyzer import check_paths, check_source

    found = check_paths(["pkg"], select=["UT1"], use_cache=False, jobs=1)
    assert [(d.code, d.line) for d in found] == [("UT101", 6), ("UT103", 8)]
    config = Config(root=tree, per_file_ignores={"pkg/*": ("UT101",)})
    assert [d.code for d in check_paths(["pkg"], config=config, use_cache=False, jobs=1)] == ["UT201"]
    assert [d.code for d in check_source((tree / "pkg" / "model.py").read_text(), "pkg/model.py", config=config)] == [
        "UT201"
    ]
    with pytest.raises(ValueError):
        check_source("x = 1\n", select=["UT999"])
