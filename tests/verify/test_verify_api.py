"""verify() end to end on toy models: the untrace ONNX matches eager, the traced export
diverges where the first input's branch side differs, and the JSON contract holds."""

import json

import jsonschema
import pytest
import torch

from lowering.verification import VerifyReport, verify
from lowering.verification.report_json import dumps
from tests.verify import toys

COMPARISON = {
    "type": "object",
    "required": ["match", "max_abs", "max_rel", "cosine"],
    "properties": {
        "match": {"type": "boolean"},
        "max_abs": {"type": ["number", "null"]},
        "max_rel": {"type": ["number", "null"]},
        "cosine": {"type": ["number", "null"]},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["ok", "n_inputs", "systems", "coverage", "uncovered", "record"],
    "properties": {
        "ok": {"type": "boolean"},
        "n_inputs": {"type": "integer"},
        "systems": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["exported", "error", "per_input"],
                "properties": {
                    "exported": {"type": "boolean"},
                    "error": {"type": ["string", "null"]},
                    "per_input": {"type": "array", "items": COMPARISON},
                },
            },
        },
        "coverage": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["path", "line", "construct", "then", "else", "trip_counts", "covered"],
                "properties": {
                    "path": {"type": "string"},
                    "line": {"type": "integer"},
                    "construct": {"enum": ["if", "while", "for", "cond", "ifexp"]},
                    "then": {"type": ["integer", "null"]},
                    "else": {"type": ["integer", "null"]},
                    "trip_counts": {"type": ["array", "null"], "items": {"type": "integer"}},
                    "covered": {"type": "boolean"},
                },
            },
        },
        "uncovered": {"type": "array", "items": {"type": "string", "pattern": r"^.+:\d+$"}},
        "record": {
            "type": "object",
            "required": ["versions", "opset", "dynamic_axes", "inputs", "metrics", "hazards"],
            "properties": {
                "versions": {"type": "object", "required": ["torch", "onnx", "onnxruntime"]},
                "opset": {"type": "integer"},
                "hazards": {"type": "array"},
            },
        },
    },
}

X = torch.tensor([[1.0, -0.5, 2.0, 0.25], [0.5, 1.5, -1.0, 3.0]])
IF_LINE = toys.line_of("BRANCHY_IF")
TOYS_PATH = "tests/verify/toys.py"


@pytest.fixture(scope="module")
def branchy() -> VerifyReport:
    return verify(toys.BranchyToy().eval(), [(X,), (-X,), (2 * X,)], compare=("trace",))


def test_untrace_matches_and_trace_diverges(branchy):
    assert branchy.ok
    assert [c.match for c in branchy.systems["untrace"].per_input] == [True, True, True]
    trace = branchy.systems["trace"]
    assert trace.exported and trace.error is None
    assert [c.match for c in trace.per_input] == [True, False, True]
    assert trace.tracer_warnings >= 1  # counted, not printed


def test_divergence_names_the_branch_line(branchy):
    assert [(d.path, d.line, d.traced, d.inputs, d.took) for d in branchy.divergence] == [
        (TOYS_PATH, IF_LINE, "then", [1], ["else"])]


def test_coverage_of_the_branch(branchy):
    [site] = branchy.coverage
    assert (site.path, site.line, site.construct, site.then, site.else_) == (TOYS_PATH, IF_LINE, "if", 2, 1)
    assert branchy.uncovered == []


def test_json_contract(branchy):
    data = json.loads(dumps(branchy))
    jsonschema.validate(data, SCHEMA)
    assert data == branchy.to_dict() | {}  # to_dict() is JSON-ready as is
    assert data["n_inputs"] == 3 and set(data["systems"]) == {"untrace", "trace"}
    record = data["record"]
    assert record["tolerances"] == {"rtol": 1e-4, "atol": 1e-5}
    assert record["metrics"]["trace"]["matched"] == 2 and record["metrics"]["untrace"]["matched"] == 3
    assert record["inputs"][0]["arguments"] == [{"name": "x", "shape": [2, 4], "dtype": "float32"}]
    assert any(h["code"] == "UT101" and h["line"] == IF_LINE for h in record["hazards"])
    assert TOYS_PATH in record["sources"]


def test_nested_outputs_are_flattened_in_order():
    report = verify(toys.NestedOutputsToy(), [(X,), (-X,)], compare=())
    assert report.ok
    assert all(c.match and c.shapes_agree for c in report.systems["untrace"].per_input)


def test_inputs_are_cloned_for_a_model_that_writes_into_them():
    x = X.clone()
    report = verify(toys.MutatingToy(), [(x,), (x * 3,)], compare=("trace",))
    assert torch.equal(x, X)
    assert report.ok and all(c.match for c in report.systems["trace"].per_input)


def test_inputs_of_different_sizes_get_dynamic_axes():
    report = verify(toys.BranchyToy().eval(), [(X,), (torch.ones(5, 4),), (-torch.ones(1, 4),)], compare=("trace",))
    assert report.ok
    assert report.systems["untrace"].dynamic_axes == {"x": {0: "x_dim0"}}
    assert report.systems["trace"].per_input[1].match and not report.systems["trace"].per_input[2].match


def test_an_input_eager_rejects_is_reported_not_compared():
    report = verify(toys.RaisingToy(), [(X.abs(),), (X,)], compare=())
    assert report.inputs[1].eager_error.startswith("AssertionError")
    assert report.ok  # judged on the inputs eager accepts
    assert "eager raised" in report.systems["untrace"].per_input[1].error


def test_wrong_onnx_model_is_a_mismatch():
    import io

    from lowering.verification.systems import quiet

    traced = io.BytesIO()
    model = toys.BranchyToy().eval()
    with quiet():
        torch.onnx.export(model, (X,), traced, dynamo=False)
    report = verify(model, [(X,), (-X,)], onnx_model=traced.getvalue(), compare=())
    assert not report.ok
    assert [c.match for c in report.systems["untrace"].per_input] == [True, False]
    assert report.coverage == [] and not report.has_probes


def test_dynamo_refusal_is_recorded():
    report = verify(toys.BranchyToy().eval(), [(X,), (-X,)], compare=("dynamo",))
    dynamo = report.to_dict()["systems"]["dynamo"]
    assert dynamo["exported"] is False
    assert dynamo["error"] and "data-dependent" in dynamo["error"]
    assert all(p["match"] is False for p in dynamo["per_input"])
    assert report.ok  # a peer's refusal is not a failure


def test_unknown_peer_is_refused():
    with pytest.raises(ValueError, match="unknown system"):
        verify(toys.BranchyToy(), [(X,)], compare=("jit",))
