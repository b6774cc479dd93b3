"""`untrace export` and `untrace verify` on a user's mistakes: one short message naming
what is wrong (with the file:line of the user's code where there is one), exit 2, no
traceback, and never an "internal error"; outputs are checked before the work starts,
written atomically, never half-written, and get the modes a plain ``open()`` gives.

The commands run in this process through ``main`` (torch is imported once); one test
runs the real executable to show the same holds outside pytest."""

from __future__ import annotations

import os
import stat
import sys
import textwrap

import numpy as np
import pytest
import torch

from analyzer.cli import main

from .conftest import run_untrace

MODEL = textwrap.dedent(
    """\
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x):
            if x.sum() > 0:
                return self.lin(x)  # LINEAR
            return -self.lin(x)  # NEGATED


    class Two(torch.nn.Module):
        def forward(self, x, y):
            return x + y  # ADD


    class Index(torch.nn.Module):
        def forward(self, x):
            return x[:, :, 0] * 2  # INDEX


    class Wide(torch.nn.Module):
        def __init__(self, width):  # WIDE
            super().__init__()
            self.width = width


    class Bare(torch.nn.Module):  # BARE
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)


    def bare():
        return Bare()


    def build():
        return Net()


    def needs(width, depth=2):  # NEEDS
        return Net()


    def helper():
        raise ValueError("bad config")  # HELPER


    def boom():
        return helper()


    def leave():
        raise SystemExit(3)  # LEAVE
    """
)


def line_of(source: str, marker: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if f"# {marker}" in text)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """m.py (the models above) in a temporary working directory."""
    (tmp_path / "m.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def untrace(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def assert_usage_error(code: int, err: str, *fragments: str) -> None:
    """Exit 2 with one line that names the problem, never a bug."""
    assert code == 2, err
    for bad in ("internal error", "this is a bug", "Traceback"):
        assert bad not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


def leftovers(folder) -> list[str]:
    """Files a command may have left: outputs and the temporary files of atomic writes."""
    return sorted(p.name for p in folder.rglob("*") if p.suffix in (".onnx", ".json", ".html", ".tmp")
                  or p.name.startswith(".untrace"))


def default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield 0o644
    os.umask(previous)


# --------------------------------------------------------------------------- TARGET


def test_factory_that_raises_is_named_with_the_users_line(project, capsys):
    code, err = untrace(capsys, "export", "m.py:boom", "--input", "x:2x4")
    assert_usage_error(code, err, "ValueError: bad config", f"m.py:{line_of(MODEL, 'HELPER')}", "boom")


def test_factory_that_raises_in_verify(project, capsys):
    code, err = untrace(capsys, "verify", "m.py:boom", "--input", "x:2x4", "--compare", "none")
    assert_usage_error(code, err, "ValueError: bad config", f"m.py:{line_of(MODEL, 'HELPER')}")


def test_module_that_raises_while_importing(project, capsys):
    (project / "raises.py").write_text("import torch\nx = 1\nraise RuntimeError('import time failure')\n")
    code, err = untrace(capsys, "export", "raises.py:build", "--input", "x:2x4")
    assert_usage_error(code, err, "RuntimeError: import time failure", "raises.py:3", "importing")


def test_module_whose_import_fails(project, capsys):
    (project / "imp.py").write_text("import torch\nimport no_such_module_xyz\n")
    code, err = untrace(capsys, "export", "imp.py:build", "--input", "x:2x4")
    assert_usage_error(code, err, "No module named 'no_such_module_xyz'", "imp.py:2")


def test_package_module_that_raises_while_importing(project, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(project))
    (project / "badpkg").mkdir()
    (project / "badpkg" / "__init__.py").write_text("")
    (project / "badpkg" / "net.py").write_text("import torch\n\nraise KeyError('vocab')\n")
    code, err = untrace(capsys, "verify", "badpkg.net:build", "--input", "x:2x4", "--compare", "none")
    assert_usage_error(code, err, "KeyError", "vocab", os.path.join("badpkg", "net.py") + ":3")


def _syntax_position(source: str) -> tuple[int, int]:
    try:
        compile(source, "syn.py", "exec")
    except SyntaxError as error:
        return error.lineno, error.offset
    raise AssertionError("the source compiles")


def test_syntax_error_gives_file_line_and_column(project, capsys):
    source = "import torch\n\ndef build(:\n    pass\n"
    (project / "syn.py").write_text(source)
    line, column = _syntax_position(source)
    code, err = untrace(capsys, "export", "syn.py:build", "--input", "x:2x4")
    assert_usage_error(code, err, f"syn.py:{line}:{column}:", "syntax")


def test_syntax_error_of_a_package_module(project, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(project))
    source = "import torch\nclass Net(torch.nn.Module)\n    pass\n"
    (project / "synmod.py").write_text(source)
    line, column = _syntax_position(source)
    code, err = untrace(capsys, "verify", "synmod:Net", "--input", "x:2x4")
    assert_usage_error(code, err, f"synmod.py:{line}:{column}:", "syntax")


def test_factory_that_needs_arguments(project, capsys):
    code, err = untrace(capsys, "export", "m.py:needs", "--input", "x:2x4")
    assert_usage_error(code, err, f"m.py:{line_of(MODEL, 'NEEDS')}", "needs", "width", "arguments")


def test_class_that_needs_arguments(project, capsys):
    code, err = untrace(capsys, "verify", "m.py:Wide", "--input", "x:2x4")
    assert_usage_error(code, err, "Wide", "width", "arguments")


def test_target_that_exits_while_importing_or_building(project, capsys):
    code, err = untrace(capsys, "export", "m.py:leave", "--input", "x:2x4")
    assert_usage_error(code, err, "SystemExit", f"m.py:{line_of(MODEL, 'LEAVE')}")


def test_target_file_without_the_py_suffix_is_loaded(project, capsys):
    (project / "model.txt").write_text(MODEL)
    code, err = untrace(capsys, "export", "./model.txt:build", "--input", "x:2x4", "-o", "n.onnx")
    assert code == 0, err
    assert (project / "n.onnx").exists()


@pytest.mark.parametrize("wrap,what", [
    ("torch.jit.script(Net())", "TorchScript"),
    ("torch.jit.trace(Net(), torch.zeros(2, 4))", "TorchScript"),
    ("torch.compile(Net())", "torch.compile"),
])
@pytest.mark.filterwarnings("ignore")  # torch.jit's deprecation warnings
def test_target_that_returns_a_compiled_module(project, capsys, wrap, what):
    (project / "wrapped.py").write_text(MODEL.replace("return Net()", f"return {wrap}", 1))
    code, err = untrace(capsys, "export", "wrapped.py:build", "--input", "x:2x4")
    assert_usage_error(code, err, what, "return the nn.Module itself")


@pytest.mark.parametrize("command", ["export", "verify"])
@pytest.mark.parametrize("target", ["m.py:Bare", "m.py:bare"])
def test_target_whose_class_has_no_forward(project, capsys, command, target):
    """nn.Module's placeholder forward takes (*input): the class is named, not the input."""
    peers = ["--compare", "none"] if command == "verify" else []
    code, err = untrace(capsys, command, target, "--input", "x:2x4", *peers)
    assert_usage_error(code, err, f"m.py:{line_of(MODEL, 'BARE')}: class Bare has no forward method", target,
                       "define forward(self, ...)")
    assert "*input" not in err
    assert leftovers(project) == []


def test_target_folder(project, capsys):
    (project / "models.py").mkdir()
    code, err = untrace(capsys, "export", "models.py:build", "--input", "x:2x4")
    assert_usage_error(code, err, "models.py", "folder")


# --------------------------------------------------------------------------- --input


def assert_names_the_linear_layer(err: str) -> None:
    # the branch taken depends on the (random) values: either call of self.lin
    assert f"m.py:{line_of(MODEL, 'LINEAR')}" in err or f"m.py:{line_of(MODEL, 'NEGATED')}" in err, err


def test_input_of_the_wrong_size_for_the_model(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x5")
    assert_usage_error(code, err, "x:2x5", "mat1 and mat2")
    assert_names_the_linear_layer(err)
    assert leftovers(project) == []


def test_input_of_the_wrong_rank_for_the_model(project, capsys):
    # the lowering refuses it with a LoweringError ("torch raises"); eager PyTorch too
    code, err = untrace(capsys, "export", "m.py:Index", "--input", "x:2x3")
    assert_usage_error(code, err, "x:2x3", "too many indices", f"m.py:{line_of(MODEL, 'INDEX')}")


def test_inputs_that_do_not_broadcast_name_every_input(project, capsys):
    code, err = untrace(capsys, "export", "m.py:Two", "--input", "x:2x3", "--input", "y:4x5")
    assert_usage_error(code, err, "x:2x3", "y:4x5", f"m.py:{line_of(MODEL, 'ADD')}")


def test_verify_input_of_the_wrong_size(project, capsys):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x5", "--compare", "none",
                        "--json", "r.json")
    assert_usage_error(code, err, "x", "2x5", "mat1 and mat2")
    assert_names_the_linear_layer(err)
    assert leftovers(project) == []


def test_missing_input(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build")
    assert_usage_error(code, err, "x", "--input")


def test_missing_second_input(project, capsys):
    code, err = untrace(capsys, "export", "m.py:Two", "--input", "x:2x3")
    assert_usage_error(code, err, "y", "--input")


def test_verify_missing_second_input(project, capsys):
    code, err = untrace(capsys, "verify", "m.py:Two", "--input", "x:2x3", "--compare", "none")
    assert_usage_error(code, err, "y", "--input")


def test_input_named_after_no_parameter(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "y:2x4")
    assert_usage_error(code, err, "--input y", "Net.forward takes (x)")


def test_input_given_twice(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--input", "x:3x4")
    assert_usage_error(code, err, "--input x", "twice")


# --------------------------------------------------------------------------- --opset, --dynamic


@pytest.mark.parametrize("command", ["export", "verify"])
@pytest.mark.parametrize("opset", ["999", "5"])
def test_unsupported_opset(project, capsys, command, opset):
    code, err = untrace(capsys, command, "m.py:build", "--input", "x:2x4", "--opset", opset, "--compare", "none") \
        if command == "verify" else untrace(capsys, command, "m.py:build", "--input", "x:2x4", "--opset", opset)
    assert_usage_error(code, err, f"--opset {opset}", "supported")
    assert leftovers(project) == []


def test_unsupported_opset_from_the_configuration(project, capsys):
    (project / "pyproject.toml").write_text("[tool.untrace]\nopset = 999\n")
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4")
    assert_usage_error(code, err, "opset 999", "supported")


@pytest.mark.parametrize("value", [["x:0=batch"], []])
def test_verify_dynamic_is_a_usage_error_of_verify_saying_what_verify_does(project, capsys, value):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--dynamic", *value)
    assert code == 2
    assert err.startswith("usage: untrace verify ") and "usage: untrace [-h]" not in err
    assert err.splitlines()[-1] == (
        "untrace verify: error: --dynamic is an option of `untrace export`; verify makes an axis dynamic when its "
        "size differs between its inputs: give inputs of several sizes with --inputs DATA.npz (keys I/NAME), or "
        "check the file `untrace export --dynamic` wrote with --onnx FILE")


@pytest.mark.parametrize("command,option,owner", [
    ("export", "--inputs", "verify"),
    ("export", "--search", "verify"),
    ("export", "--bogus", None),
    ("verify", "--output", "graph` and `untrace export"),
    ("verify", "--bogus", None),
])
def test_an_unknown_option_is_the_subcommands_own_usage_error(project, capsys, command, option, owner):
    """argparse leaves what a subparser does not know to the top-level parser, whose usage
    (`untrace [-h] [--version] COMMAND ...`) lists none of the subcommand's options."""
    code, err = untrace(capsys, command, "m.py:build", "--input", "x:2x4", option, "v")
    assert code == 2
    assert err.startswith(f"usage: untrace {command} ") and "usage: untrace [-h]" not in err
    last = err.splitlines()[-1]
    assert last.startswith(f"untrace {command}: error: unrecognized arguments: {option} v")
    if owner:
        assert last.endswith(f"({option} is an option of `untrace {owner}`)")
    assert leftovers(project) == []


@pytest.mark.parametrize("axis", ["2", "-3"])
def test_dynamic_axis_out_of_range(project, capsys, axis):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--dynamic", f"x:{axis}=batch")
    assert_usage_error(code, err, f"--dynamic x:{axis}=batch", "rank 2")


def test_negative_dynamic_axis_in_range_is_accepted(project, capsys):
    import onnx

    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--dynamic", "x:-2=batch")
    assert code == 0, err
    dims = onnx.load("build.onnx").graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch"


def test_dynamic_axis_of_an_unknown_input(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--dynamic", "y:0=batch")
    assert_usage_error(code, err, "--dynamic y:0=batch", "not an --input")


# --------------------------------------------------------------------------- --weights


@pytest.fixture
def checkpoints(project, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_checkpoint_models", project / "m.py")
    models = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_checkpoint_models", models)  # to pickle Net
    spec.loader.exec_module(models)
    (project / "garbage.pt").write_bytes(b"garbage\n\x00\x01")
    (project / "empty.pt").write_bytes(b"")
    (project / "folder.pt").mkdir()
    torch.save(models.Net(), project / "pickled_module.pt")
    torch.save(torch.zeros(3), project / "tensor.pt")
    torch.save({"lin.weight": torch.zeros(3, 4), "foo": torch.zeros(1), "bar.baz": torch.zeros(2)},
               project / "mismatch.pt")
    torch.save({"lin.weight": torch.zeros(5, 4), "lin.bias": torch.zeros(3)}, project / "sizes.pt")
    state = models.Net().state_dict()
    torch.save({**state, "config": models.Wide(3)}, project / "with_object.pt")
    torch.save({**state, "config": models.Wide(3)}, project / "legacy.pt", _use_new_zipfile_serialization=False)
    torch.save({**state, "hook": _Calls(os.getcwd)}, project / "blocked.pt")
    torch.save(state, project / "protocol4.pt", pickle_protocol=4)
    np.savez(project / "arrays.npz", x=np.zeros(3))
    good = project / "good.pt"
    torch.save(models.Net().state_dict(), good)
    (project / "truncated.pt").write_bytes(good.read_bytes()[:200])
    return project


class _Calls:
    """Pickles as a call of ``function`` (an `os` function: a module torch blocks)."""

    def __init__(self, function):
        self.function = function

    def __reduce__(self):
        return (self.function, ())


CHECKPOINT_REFUSED = "a PyTorch checkpoint holding what torch.load(weights_only=True) refuses"


@pytest.mark.parametrize("name,refused", [
    ("with_object.pt", ": a pickled _checkpoint_models.Wide)"),
    ("legacy.pt", ": a pickled _checkpoint_models.Wide)"),
    ("pickled_module.pt", ": a pickled _checkpoint_models.Net)"),
    ("blocked.pt", f": {os.name}.getcwd, from the module {os.name}, which torch blocks)"),
    ("protocol4.pt", ": the pickle opcode FRAME (pickle protocol 4; torch.save writes protocol 2 by default))"),
])
def test_a_checkpoint_that_weights_only_refuses_is_called_one_and_says_what_is_refused(checkpoints, capsys, name,
                                                                                      refused):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--weights", name)
    assert_usage_error(code, err, f"--weights {name}: not a plain state dict ({CHECKPOINT_REFUSED}{refused}; "
                       "untrace loads only those, saved with torch.save(model.state_dict(), PATH)")
    assert "not a PyTorch checkpoint" not in err and "Warning" not in err
    assert leftovers(checkpoints) == []


@pytest.mark.parametrize("name,fragments", [
    ("garbage.pt", ["garbage.pt", "not a plain state dict", "untrace loads only"]),
    ("arrays.npz", ["arrays.npz", "not a plain state dict (a zip archive that torch.save did not write, such as an "
                    ".npz file)"]),
    ("empty.pt", ["empty.pt", "not a plain state dict", "untrace loads only"]),
    ("truncated.pt", ["truncated.pt", "not a plain state dict", "untrace loads only"]),
    ("pickled_module.pt", ["pickled_module.pt", "not a plain state dict", "Net", "untrace loads only"]),
    ("tensor.pt", ["tensor.pt", "Tensor", "not a state dict"]),
    ("missing.pt", ["missing.pt", "no such file"]),
    ("folder.pt", ["folder.pt", "folder"]),
])
def test_weights_that_are_not_a_checkpoint(checkpoints, capsys, name, fragments):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--weights", name)
    assert_usage_error(code, err, "--weights", *fragments)
    assert "weights_only=False" not in err and "allowlist" not in err and "trust" not in err
    assert leftovers(checkpoints) == []


def test_state_dict_mismatch_lists_every_key(checkpoints, capsys):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--weights", "mismatch.pt")
    assert_usage_error(code, err, "mismatch.pt", "does not fit Net", '"lin.bias"', '"foo"', '"bar.baz"',
                       "Missing", "Unexpected")


def test_state_dict_size_mismatch(checkpoints, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--weights", "sizes.pt")
    assert_usage_error(code, err, "sizes.pt", "lin.weight", "torch.Size([5, 4])", "torch.Size([3, 4])")


def test_good_weights_are_loaded(checkpoints, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "--weights", "good.pt")
    assert code == 0, err


# --------------------------------------------------------------------------- outputs


def test_export_output_in_a_missing_folder(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "nowhere/a.onnx")
    assert_usage_error(code, err, "-o nowhere/a.onnx", "does not exist")
    assert leftovers(project) == []


def test_export_output_is_a_folder(project, capsys):
    (project / "out").mkdir()
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "out")
    assert_usage_error(code, err, "-o out", "folder")
    assert leftovers(project) == []


def test_output_paths_are_checked_before_the_target_runs(project, capsys):
    # boom() raises: the output mistake must be reported first, without running it
    code, err = untrace(capsys, "export", "m.py:boom", "--input", "x:2x4", "-o", "nowhere/a.onnx")
    assert_usage_error(code, err, "nowhere")
    assert "bad config" not in err


def test_export_output_under_a_file(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "m.py/a.onnx")
    assert_usage_error(code, err, "-o m.py/a.onnx", "m.py is not a folder")
    assert (project / "m.py").read_text() == MODEL


def test_export_output_that_is_the_target_file(project, capsys):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "m.py")
    assert_usage_error(code, err, "-o m.py", "TARGET")
    assert (project / "m.py").read_text() == MODEL


@pytest.mark.parametrize("flag", ["--json", "--html"])
def test_verify_report_in_a_missing_folder(project, capsys, flag):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none",
                        flag, "nowhere/r.out")
    assert_usage_error(code, err, f"{flag} nowhere/r.out", "does not exist")
    assert leftovers(project) == []


@pytest.mark.parametrize("flag", ["--json", "--html"])
def test_verify_report_is_a_folder(project, capsys, flag):
    (project / "out").mkdir()
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none", flag, "out")
    assert_usage_error(code, err, f"{flag} out", "folder")
    assert leftovers(project) == []


def test_verify_writes_no_json_when_the_html_cannot_be_written(project, capsys):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none",
                        "--json", "a.json", "--html", "missing/b.html")
    assert_usage_error(code, err, "--html missing/b.html")
    assert not (project / "a.json").exists()
    assert leftovers(project) == []


def test_verify_json_and_html_on_one_file(project, capsys):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none",
                        "--json", "r.out", "--html", "r.out")
    assert_usage_error(code, err, "--json", "--html", "r.out")


def test_verify_report_over_its_own_inputs(project, capsys):
    np.savez(project / "in.npz", x=np.ones((2, 4), np.float32))
    code, err = untrace(capsys, "verify", "m.py:build", "--inputs", "in.npz", "--compare", "none",
                        "--json", "in.npz")
    assert_usage_error(code, err, "--json in.npz", "--inputs")
    assert np.load(project / "in.npz")["x"].shape == (2, 4)


def test_export_file_mode_follows_the_umask(project, capsys, umask_022):
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "a.onnx")
    assert code == 0, err
    assert stat.S_IMODE(os.stat(project / "a.onnx").st_mode) == umask_022 == default_mode()
    assert leftovers(project) == ["a.onnx"]


def test_verify_report_modes_follow_the_umask(project, capsys, umask_022):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none",
                        "--json", "r.json", "--html", "r.html")
    assert code == 0, err
    for name in ("r.json", "r.html"):
        assert stat.S_IMODE(os.stat(project / name).st_mode) == umask_022, name
    assert leftovers(project) == ["r.html", "r.json"]


# --------------------------------------------------------------------------- verify's numbers


@pytest.mark.parametrize("argv,fragment", [
    (["--rtol", "nan"], "--rtol and --atol"),
    (["--atol", "-1"], "--rtol and --atol"),
    (["--search", "5", "--search-seconds", "-1"], "--search-seconds"),
])
def test_verify_tolerances_and_limits_that_mean_nothing(project, capsys, argv, fragment):
    code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none", *argv)
    assert_usage_error(code, err, fragment)


# --------------------------------------------------------------------------- --inputs


def test_inputs_that_are_an_npy_file(project, capsys):
    np.save(project / "x.npy", np.zeros((2, 4), np.float32))
    code, err = untrace(capsys, "verify", "m.py:build", "--inputs", "x.npy", "--compare", "none")
    assert_usage_error(code, err, "--inputs x.npy", ".npz")


def test_inputs_with_an_object_array_name_the_file_and_the_array(project, capsys):
    np.savez(project / "in.npz", x=np.array([{"a": 1}, None], dtype=object))
    code, err = untrace(capsys, "verify", "m.py:build", "--inputs", "in.npz", "--compare", "none")
    assert_usage_error(code, err, "--inputs in.npz: array 'x' is an array of Python objects, and untrace does not "
                       "load object arrays", "np.savez(")
    assert "allow_pickle" not in err and "Object arrays cannot be loaded" not in err


def test_inputs_with_a_member_numpy_cannot_read_name_the_file_and_the_member(project, capsys):
    import zipfile

    with zipfile.ZipFile(project / "bad.npz", "w") as archive:
        archive.writestr("x.npy", b"\x93NUMPY not a header")
    code, err = untrace(capsys, "verify", "m.py:build", "--inputs", "bad.npz", "--compare", "none")
    assert_usage_error(code, err, "--inputs bad.npz: array 'x' cannot be read (", "write the file again with np.savez")
    with zipfile.ZipFile(project / "text.npz", "w") as archive:
        archive.writestr("x.txt", "hello")
    code, err = untrace(capsys, "verify", "m.py:build", "--inputs", "text.npz", "--compare", "none")
    assert_usage_error(code, err, "--inputs text.npz: 'x.txt' is not a .npy array")


def test_inputs_that_are_not_arrays(project, capsys):
    (project / "in.npz").write_bytes(b"\x80\x04garbage")
    code, err = untrace(capsys, "verify", "m.py:build", "--inputs", "in.npz", "--compare", "none")
    assert_usage_error(code, err, "--inputs in.npz", ".npz")
    assert "allow_pickle" not in err and "trust" not in err


# --------------------------------------------------------------------------- the real executable


def test_the_real_command_reports_a_users_mistake_in_one_line(project):
    result = run_untrace("export", "m.py:boom", "--input", "x:2x4", "-o", "a.onnx", cwd=project)
    err = result.stderr.decode()
    assert_usage_error(result.returncode, err, "ValueError: bad config", f"m.py:{line_of(MODEL, 'HELPER')}")
    assert leftovers(project) == []


def test_a_genuine_bug_is_still_an_internal_error(project, capsys, monkeypatch):
    import lowering.exporter

    def broken(*args, **kwargs):
        raise RuntimeError("lowering bug")

    monkeypatch.setattr(lowering.exporter, "export", broken)
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4")
    assert code == 2 and "internal error: RuntimeError: lowering bug" in err
    assert leftovers(project) == []


def test_a_construct_that_cannot_be_lowered_keeps_exit_1(project, capsys):
    (project / "grow.py").write_text(textwrap.dedent(
        """\
        import torch


        class Grow(torch.nn.Module):
            def forward(self, x):
                out = []
                while x.sum() > 0:
                    out.append(x)
                    x = x - 1
                return out
        """))
    code, err = untrace(capsys, "export", "grow.py:Grow", "--input", "x:2x4")
    assert code == 1, err
    assert "cannot lower grow.py:Grow" in err and "a fixed number of outputs" in err
    assert "internal error" not in err and leftovers(project) == []


def test_a_construct_that_cannot_be_lowered_does_not_run_forward(project, capsys):
    # only a failure that may be the inputs' (a bug, or a LoweringError mirroring a torch
    # error) is checked against eager PyTorch; forward here would leave a file behind
    (project / "side.py").write_text(textwrap.dedent(
        """\
        import pathlib

        import torch


        class Side(torch.nn.Module):
            def forward(self, x):
                pathlib.Path("forward_ran").touch()
                return x
        """))
    code, err = untrace(capsys, "export", "side.py:Side", "--input", "x:2x4")
    assert code == 1 and "cannot lower side.py:Side" in err, err
    assert not (project / "forward_ran").exists()


# ------------------------------------------------- outputs go where a redirection would


def test_export_through_a_symlink_writes_its_target_and_keeps_the_link(project, capsys):
    (project / "models").mkdir()
    (project / "latest.onnx").symlink_to("models/net.onnx")
    code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "latest.onnx")
    assert code == 0, err
    assert (project / "latest.onnx").is_symlink() and os.readlink(project / "latest.onnx") == "models/net.onnx"
    assert (project / "models" / "net.onnx").stat().st_size > 0


@pytest.mark.parametrize("flag", ["export", "--json", "--html"])
def test_outputs_into_a_named_pipe_are_written_into_it(project, capsys, flag):
    import threading

    os.mkfifo(project / "out")
    got: list[bytes] = []

    def read():
        with open(project / "out", "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if flag == "export":
        code, err = untrace(capsys, "export", "m.py:build", "--input", "x:2x4", "-o", "out")
    else:
        code, err = untrace(capsys, "verify", "m.py:build", "--input", "x:2x4", "--compare", "none", flag, "out")
    reader.join(20)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(project / "out").st_mode) and got and got[0]


@pytest.mark.parametrize("command", ["export", "verify"])
def test_an_output_may_not_overwrite_the_configuration(project, capsys, command):
    (project / "pyproject.toml").write_text("[tool.untrace]\nopset = 18\n")
    flag = "-o" if command == "export" else "--json"
    code, err = untrace(capsys, command, "m.py:build", "--input", "x:2x4", *(["--compare", "none"] if command == "verify" else []),
                        flag, "pyproject.toml")
    assert_usage_error(code, err, f"{flag} pyproject.toml", "a configuration file this run reads")
    assert (project / "pyproject.toml").read_text() == "[tool.untrace]\nopset = 18\n"
