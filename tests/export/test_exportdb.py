"""PyTorch's ExportDB (`torch/_export/db/examples`, shipped with torch): a control-flow
suite written by others. Each example is exported from source by untrace and compared
with eager PyTorch on onnxruntime on its example inputs (and `extra_args` when given).

`EXPECTED_FAILURES` names the examples untrace refuses, each with the reason; the test
fails if one of them starts passing (strict xfail), so the README count stays true.
"""

import copy

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch._export.db.examples import all_examples

from lowering import LoweringError, export
from lowering.interpreter import _flatten

CASES = dict(sorted(all_examples().items()))

EXPECTED_FAILURES: dict[str, str] = {
    "tensor_setattr": "draws torch.randn in forward; no ONNX graph reproduces torch's generator",
}


def _check(case):
    model = copy.deepcopy(case.model).eval()
    proto = export(model, case.example_args, kwargs=case.example_kwargs, dynamic_shapes=_dynamic(case))
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    arg_sets = [case.example_args] + ([case.extra_args] if case.extra_args is not None else [])
    for args in arg_sets:
        leaves = [a for a in _flatten((list(args), case.example_kwargs))[0] if isinstance(a, torch.Tensor)]
        feeds = {i.name: a.detach().numpy() for i, a in zip(session.get_inputs(), leaves)}
        with torch.no_grad():  # eager on copies: some examples mutate their inputs
            eager_args, eager_kwargs = copy.deepcopy((args, case.example_kwargs))
            want = [w for w in _flatten(copy.deepcopy(case.model)(*eager_args, **eager_kwargs))[0]]
        got = session.run(None, feeds)
        want = [np.asarray(w.detach().numpy() if isinstance(w, torch.Tensor) else w) for w in want if w is not None]
        assert len(got) == len(want)
        for w, o in zip(want, got):
            np.testing.assert_allclose(o, w, rtol=1e-4, atol=1e-5)


def _dynamic(case):
    """ExportDB's torch.export Dim specs -> untrace's {name: {axis: symbol}}."""
    if not case.dynamic_shapes:
        return None
    out = {}
    for name, spec in case.dynamic_shapes.items():
        if isinstance(spec, dict):
            out[name] = {axis: getattr(dim, "__name__", f"{name}_{axis}") for axis, dim in spec.items()}
    return out or None


@pytest.mark.parametrize("name", list(CASES))
def test_exportdb_example(name):
    case = CASES[name]
    try:
        _check(case)
    except LoweringError as exc:
        if name in EXPECTED_FAILURES:
            pytest.xfail(f"{EXPECTED_FAILURES[name]} ({exc.message})")
        pytest.fail(f"refused: {exc}")
    assert name not in EXPECTED_FAILURES, f"{name} now passes: remove it from EXPECTED_FAILURES"


def test_exportdb_is_complete():
    assert len(CASES) >= 30
