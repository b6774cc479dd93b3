"""`untrace verify` arguments and exit codes: 0 match, 1 mismatch, 2 usage or internal error,
never a traceback. (Run in-process through lowering.verification.cli; the `untrace` entry point
only registers these two functions.)"""

import argparse
import json

import numpy as np
import pytest
import torch

from lowering.verification import cli
from tests.verify import toys

TARGET = "tests/verify/toys.py:build_branchy"
X = np.array([[1.0, -0.5, 2.0, 0.25], [0.5, 1.5, -1.0, 3.0]], dtype=np.float32)


def run(*argv) -> int:
    parser = argparse.ArgumentParser(prog="untrace verify")
    cli.add_arguments(parser)
    return cli.run(parser.parse_args(list(argv)))


@pytest.fixture
def npz(tmp_path):
    path = tmp_path / "inputs.npz"
    np.savez(path, **{"0/x": X, "1/x": -X})
    return str(path)


def test_match_exits_0_and_writes_json(tmp_path, npz, capsys):
    out = tmp_path / "r.json"
    assert run(TARGET, "--inputs", npz, "--compare", "trace", "--json", str(out)) == 0
    data = json.loads(out.read_text())
    assert data["ok"] is True and data["n_inputs"] == 2
    assert [p["match"] for p in data["systems"]["trace"]["per_input"]] == [True, False]
    text = capsys.readouterr().out
    assert "OK: the untrace ONNX matches eager PyTorch on all 2 inputs" in text
    assert f"toys.py:{toys.line_of('BRANCHY_IF')}" in text


def test_random_inputs_from_input_specs(tmp_path, capsys):
    assert run(TARGET, "--input", "x:3x4:float32", "--compare", "none", "--json", "-") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_inputs"] == 4 and {i["origin"] for i in data["inputs"]} == {"random"}
    assert data["inputs"][0]["arguments"] == [{"name": "x", "shape": [3, 4], "dtype": "float32"}]


def test_mismatch_exits_1(tmp_path, npz, capsys):
    from lowering.verification.systems import quiet

    wrong = tmp_path / "traced.onnx"
    with quiet():
        torch.onnx.export(toys.build_branchy(), (torch.from_numpy(X),), str(wrong), dynamo=False)
    assert run(TARGET, "--inputs", npz, "--onnx", str(wrong), "--compare", "none") == 1
    assert "MISMATCH" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["tests/verify/nowhere.py:build", "--input", "x:2x4"], "no such file"),
    (["tests/verify/toys.py:no_such_factory", "--input", "x:2x4"], "no attribute"),
    ([TARGET], "give the inputs"),
    ([TARGET, "--input", "y:2x4"], "forward takes"),
    ([TARGET, "--input", "x:2x4:complex"], "unknown dtype"),
    ([TARGET, "--input", "x:2x4", "--compare", "jit"], "unknown system"),
    ([TARGET, "--input", "x:2x4", "--search", "-1"], "--search"),
    ([TARGET, "--inputs", "missing.npz"], "--inputs"),
    ([TARGET, "--input", "x:2x4", "--onnx", "missing.onnx"], "--onnx"),
])
def test_usage_errors_exit_2_without_traceback(argv, message, capsys):
    assert run(*argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_npz_keys_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.npz"
    np.savez(path, **{"0/x": X, "0/z": X})
    assert run(TARGET, "--inputs", str(path)) == 2
    assert "not a parameter of forward" in capsys.readouterr().err


def test_unwritable_report_exits_2(tmp_path, npz, capsys):
    assert run(TARGET, "--inputs", npz, "--compare", "none", "--html", str(tmp_path / "no" / "r.html")) == 2
    err = capsys.readouterr().err
    assert "--html" in err and "does not exist" in err


def test_internal_error_exits_2_without_traceback(monkeypatch, npz, capsys):
    import lowering.verification.api as api

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(api, "verify", broken)
    assert run(TARGET, "--inputs", npz) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err
