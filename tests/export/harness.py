"""Export a small model, run it on onnxruntime and compare with eager PyTorch on copies of
the inputs (some test models update their inputs in place). Shared by the export tests
that build their models inline."""

from __future__ import annotations

import copy

import numpy as np
import onnxruntime as ort
import torch

from lowering import export
from lowering.interpreter import _flatten

# Inputs of three elements whose sum is -0.5, 0.75, 1.75, 3.5 and 6.75: a `while s > 0`
# with `s = s - 1` runs 0, 1, 2, 4 and 7 times, an `if s > 0` takes both sides, and
# x[0], x[1] come in both orders (the generated programs of the property and corpus tests).
LOOP_INPUTS = [
    torch.tensor([-1.0, 0.0, 0.5]),
    torch.tensor([0.25, 0.5, 0.0]),
    torch.tensor([1.0, 0.5, 0.25]),
    torch.tensor([0.5, 2.0, 1.0]),
    torch.tensor([3.0, 2.5, 1.25]),
]


def export_and_compare(model: torch.nn.Module, example: tuple, inputs: list[tuple] | None = None, *,
                       dynamic_shapes=None, rtol=1e-4, atol=1e-5) -> list:
    """Export on `example`, then check every input set (default: the example) against
    eager; returns the ONNX outputs of the last input set."""
    proto = export(model, copy.deepcopy(example), dynamic_shapes=dynamic_shapes)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = None
    for args in inputs or [example]:
        got = assert_session_matches(session, model, args, rtol=rtol, atol=atol)
    return got


def assert_session_matches(session: ort.InferenceSession, model: torch.nn.Module, args: tuple, *,
                           rtol=1e-4, atol=1e-5, dtypes: bool = True) -> list:
    """Run `session` on the tensors of `args` and compare with eager `model` on a copy of
    them: same number of outputs, shapes, (with `dtypes`) dtypes, and values."""
    names = [i.name for i in session.get_inputs()]
    feeds = [a for a in _flatten(list(args))[0] if isinstance(a, torch.Tensor)]
    got = session.run(None, {n: a.numpy() for n, a in zip(names, feeds)})
    with torch.no_grad():
        want = [w for w in _flatten(model(*copy.deepcopy(args)))[0] if w is not None]
    assert len(got) == len(want), (len(got), len(want))
    for w, o in zip(want, got):
        w = np.asarray(w.detach().numpy() if isinstance(w, torch.Tensor) else w)
        if dtypes:
            assert w.dtype == o.dtype, f"dtype {o.dtype} != eager {w.dtype}"
        assert w.shape == o.shape, f"shape {o.shape} != eager {w.shape}"
        np.testing.assert_allclose(o, w, rtol=rtol, atol=atol)
    return got
