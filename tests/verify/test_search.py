"""Input search: from inputs that take one side, find inputs that take the other."""

import torch

from lowering.verification import verify
from lowering.verification.coverage import CoverageCounter, observe
from lowering.verification.search import search
from lowering.verification.systems import OnnxRunner
from tests.verify import toys
from tests.verify.fake_probes import branch_and_loop_model

SMALL = torch.tensor([0.01, -0.02, 0.03, 0.005])


def test_search_finds_the_then_side_of_a_threshold():
    report = verify(toys.ThresholdToy(), [(SMALL,)], compare=("trace",), search=200)
    assert report.uncovered == []
    [site] = report.coverage
    assert site.line == toys.line_of("THRESHOLD_IF") and site.then >= 1 and site.else_ >= 1
    found = [i for i in report.inputs if i.origin == "search"]
    assert found and report.search.evaluations <= 200
    assert report.ok  # the untrace ONNX matches eager on the found inputs too
    # and the traced export, traced on the small input, is wrong on what search found
    assert not all(c.match for c in report.systems["trace"].per_input)
    assert report.divergence and report.divergence[0].traced == "else"


def test_search_stops_when_covered_and_reports_what_it_used():
    report = verify(toys.ThresholdToy(), [(SMALL,), (SMALL * 1e5,)], compare=(), search=50)
    assert report.uncovered == [] and report.search.evaluations == 0 and not report.search.found


def test_index_inputs_stay_in_the_embedding_range():
    ids = torch.tensor([[1, 2, 3], [4, 5, 1]])
    report = verify(toys.IndexToy().eval(), [(ids,)], compare=(), search=200)
    assert report.uncovered == []
    for args in (i for i in report.inputs if i.origin == "search"):
        assert args.arguments[0]["dtype"] == "int64"
    assert report.ok  # eager accepted every found input: no index beyond the table


def test_budget_bounds_the_evaluations_and_uncovered_is_reported():
    runner = OnnxRunner(branch_and_loop_model())
    counter = CoverageCounter()
    counter.declare(runner.probes)
    start = (torch.tensor([1.0, 2.0, 3.0, 4.0]),)
    counter.add(observe(runner.probes, runner.run(start, ["x"])[1]))
    result = search(lambda a: runner.run(a, ["x"]), runner.probes, counter, [start], budget=3)
    assert result.evaluations <= 3
    assert result.missing == counter.missing_sides() and result.missing


def test_search_on_a_fake_probe_model_covers_every_side():
    runner = OnnxRunner(branch_and_loop_model())
    counter = CoverageCounter()
    counter.declare(runner.probes)
    start = (torch.tensor([1.0, 2.0, 3.0, 4.0]),)
    counter.add(observe(runner.probes, runner.run(start, ["x"])[1]))
    result = search(lambda a: runner.run(a, ["x"]), runner.probes, counter, [start], budget=200, seed=1)
    assert result.missing == [] and counter.uncovered() == []
    assert len(result.found) >= 2 and result.evaluations <= 200
