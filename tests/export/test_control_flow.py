"""Control flow lowered from source: every model matches eager PyTorch on onnxruntime on
inputs that take every branch, with If/Loop nodes where the source has data-dependent
control flow, and the module is never called during export."""

import re

import numpy as np
import onnxruntime as ort
import pytest
import torch

from lowering import LoweringError, export
from lowering.interpreter import _flatten
from tests.export import models


def node_types(graph, acc=None):
    acc = {} if acc is None else acc
    for node in graph.node:
        acc[node.op_type] = acc.get(node.op_type, 0) + 1
        for attr in node.attribute:
            if attr.g.node:
                node_types(attr.g, acc)
    return acc


def run(model, example, inputs, dynamic_shapes=None):
    def forbidden(*a, **k):
        raise AssertionError("export called the module")

    original = torch.nn.Module.__call__
    torch.nn.Module.__call__ = forbidden
    try:
        proto = export(model, example, dynamic_shapes=dynamic_shapes)
    finally:
        torch.nn.Module.__call__ = original
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for args in inputs:
        with torch.no_grad():
            want = [w for w in _flatten(model(*args))[0]]
        got = session.run(None, {n: a.numpy() for n, a in zip(names, args)})
        assert len(got) == len(want)
        for w, o in zip(want, got):
            w = np.asarray(w.detach().numpy() if isinstance(w, torch.Tensor) else w)
            assert w.shape == o.shape, (w.shape, o.shape)
            np.testing.assert_allclose(o, w, rtol=1e-4, atol=1e-5)
    return node_types(proto.graph)


X = torch.tensor([1.0, -2.0, 3.0, 0.5])

CASES = [
    ("graph-if", models.GraphIf(), [(X,), (-X,)], {"If": 1}),
    ("early-return", models.EarlyReturn(), [(X,), (-X,), (-3 * X.abs(),)], {"If": 2}),
    ("while-counter", models.WhileCounter(), [(X,), (X / 100,), (X * 40,)], {"Loop": 1}),
    ("break-static-loop", models.BreakInStaticLoop(), [(X,), (X * 10,), (X / 10,)], {"If": 1}),
    ("continue-static-loop", models.ContinueInStaticLoop(), [(X,), (-X * 2,), (-X / 4,)], {"If": 1}),
    ("return-in-loop", models.ReturnInLoop(), [(X,), (X - 10,), (X * 5,)], {"If": 1}),
    ("ternary", models.Ternary(), [(X,), (-X,)], {"If": 1}),
    ("torch-cond", models.TorchCond(), [(X,), (-X,)], {"If": 1}),
]


@pytest.mark.parametrize("name,model,inputs,must_have", CASES, ids=[c[0] for c in CASES])
def test_matches_eager_on_every_branch(name, model, inputs, must_have):
    types = run(model.eval(), inputs[0], inputs)
    for op, count in must_have.items():
        assert types.get(op, 0) >= count, types


def test_static_branches_fold_away():
    types = run(models.GraphIf(flag=False).eval(), (X, torch.ones(4)), [(X, torch.ones(4)), (-X, torch.ones(4))])
    assert types.get("If") == 1  # only the data-dependent one


def test_dynamic_axis_loop_uses_shape():
    types = run(models.ShapeLoop(), (torch.ones(3),), [(torch.ones(3),), (torch.ones(7),), (torch.ones(1),)],
                dynamic_shapes={"x": {0: "n"}})
    assert types.get("Loop") == 1 and types.get("Shape", 0) >= 1


def test_static_axis_loop_unrolls():
    types = run(models.ShapeLoop(), (torch.ones(3),), [(torch.ones(3),)])
    assert "Loop" not in types


def test_one_sided_assignment_is_refused_with_location():
    with pytest.raises(LoweringError) as info:
        export(models.OneSided(), (X,))
    err = info.value
    # The code after the `if` is lowered once per side: on the else side `y` is unbound.
    assert err.path.endswith("models.py") and err.line == 101
    assert re.fullmatch(r"name `y` is not defined here \(lowered for the inputs where the data-dependent `if` at "
                        r"\S+models.py:99 is false\)", err.message)
    assert "eager raises NameError here" in str(err)


def _probe_outputs(model, x):
    proto = export(model, (x,), probes=True)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    values = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    return {n.split("|", 2)[2]: v.tolist() for n, v in zip(names, values) if n.startswith("probe|")}


def test_probes_record_each_branch_side_and_trip_count():
    assert _probe_outputs(models.GraphIf(), X) == {"26|if|branch": [1]}
    assert _probe_outputs(models.GraphIf(), -3 * X) == {"26|if|branch": [0]}
    assert _probe_outputs(models.WhileCounter(), X * 4) == {"9|while|trips": [5]}
    # Inside an unrolled loop: one entry per iteration, -1 where the check was not reached.
    assert _probe_outputs(models.ReturnInLoop(), torch.tensor([1.0, 2.0])) == {"82|if|branch": [0, 0, 0, 1, -1]}


def test_probes_do_not_change_the_outputs():
    plain = export(models.EarlyReturn(), (X,))
    probed = export(models.EarlyReturn(), (X,), probes=True)
    assert [o.name for o in plain.graph.output] == [o.name for o in probed.graph.output][: len(plain.graph.output)]
