"""Coverage counted from probe outputs, on a hand-built ONNX model with probes."""

import numpy as np
import torch

from lowering.verification import verify
from lowering.verification.coverage import CoverageCounter, observe, parse_probe
from lowering.verification.systems import OnnxRunner
from tests.verify.fake_probes import BRANCH, INNER, TRIPS, FakeEquivalent, branch_and_loop_model


def test_parse_probe_names():
    p = parse_probe("probe|/a|b/m.py|12|while|trips")
    assert (p.path, p.line, p.construct, p.kind) == ("/a|b/m.py", 12, "while", "trips")
    assert parse_probe("output") is None
    assert parse_probe("probe|broken") is None


def counter_for(xs):
    runner = OnnxRunner(branch_and_loop_model())
    counter = CoverageCounter()
    counter.declare(runner.probes)
    for x in xs:
        real, values = runner.run((torch.tensor(x, dtype=torch.float32),), ["x"])
        counter.add(observe(runner.probes, values))
    return runner, {(s.line, s.construct): s for s in counter.entries()}, counter


def test_runner_splits_real_outputs_from_probes():
    runner = OnnxRunner(branch_and_loop_model())
    assert [p.name for p in runner.probes] == [BRANCH, TRIPS, INNER]
    real, values = runner.run((torch.tensor([1.0, 2.0, 3.0, 4.0]),), ["x"])
    assert len(real) == 1 and np.allclose(real[0], [2, 4, 6, 8])
    assert [v.tolist() for v in values] == [[1], [4], [1, 1]]


def test_counts_per_input_and_covered_definitions():
    _, sites, counter = counter_for([[1, 2, 3, 4], [1, 2, 3, 5], [-1, -2, -3, -4]])
    outer, loop, inner = sites[(3, "if")], sites[(7, "while")], sites[(9, "if")]
    assert (outer.then, outer.else_, outer.covered) == (2, 1, True)
    assert loop.trip_counts == {0, 4, 5} and loop.covered
    # reached on two inputs, both iterations positive: the else side is never taken
    assert (inner.then, inner.else_, inner.covered) == (2, 0, False)
    assert inner.missing() == ["else"]
    assert counter.uncovered() == ["toy.py:9"]
    d = inner.to_dict()
    assert d["then"] == 2 and d["else"] == 0 and d["trip_counts"] is None and d["covered"] is False


def test_one_trip_count_or_only_zero_trips_is_not_covered():
    _, sites, _ = counter_for([[1, 2, 3, 4], [4, 3, 2, 1]])
    assert sites[(7, "while")].trip_counts == {4}
    assert sites[(7, "while")].missing() == ["trips-other"]
    _, sites, _ = counter_for([[-1, -2, -3, -4], [-5, -2, -3, -4]])
    assert sites[(7, "while")].missing() == ["trips>0", "trips-other"]
    assert sites[(9, "if")].missing() == ["then", "else"]  # never reached


def test_loop_body_probe_counts_both_sides_within_one_input():
    _, sites, _ = counter_for([[1, -0.5, 3, 4]])
    inner = sites[(9, "if")]
    assert (inner.then, inner.else_) == (1, 1) and inner.covered


def test_gains_names_the_sides_an_input_would_add():
    runner, _, counter = counter_for([[1, 2, 3, 4]])
    _, values = runner.run((torch.tensor([-1.0, -2.0, -3.0, -4.0]),), ["x"])
    gains = counter.gains(observe(runner.probes, values))
    assert (("toy.py", 3, "if"), "else") in gains and (("toy.py", 7, "while"), "trips-other") in gains


def test_verify_with_a_given_model_reports_coverage_in_json():
    inputs = [(torch.tensor([1.0, 2.0, 3.0, 4.0]),), (torch.tensor([-1.0, -2.0, -3.0, -4.0]),)]
    report = verify(FakeEquivalent.build(), inputs, onnx_model=branch_and_loop_model(), compare=())
    assert report.ok
    data = report.to_dict()
    by_line = {c["line"]: c for c in data["coverage"]}
    assert by_line[3] == {"path": "toy.py", "line": 3, "construct": "if", "then": 1, "else": 1,
                          "trip_counts": None, "covered": True, "missing": []}
    assert by_line[7]["trip_counts"] == [0, 4] and by_line[7]["then"] is None and by_line[7]["covered"]
    assert data["uncovered"] == ["toy.py:9"]
    assert data["record"]["untrace_model"] == "given" and data["record"]["probes"] is True
