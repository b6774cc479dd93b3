"""On every corpus model with data-dependent control flow, verify shows the untrace ONNX
matching eager PyTorch on every input, the traced export diverging on at least one, and
the source line where it does."""

import pytest

from lowering import verify
from tests.export.corpus import corpus_names, has_data_dependent_control_flow, load

MODELS = [n for n in corpus_names() if has_data_dependent_control_flow(load(n)[1])]
# Control flow lowered to something other than If/Loop carries no branch probe, so verify
# cannot point at the line where the trace diverges (it still finds that it does).
NO_PROBE = {
    "salient_tokens": "its comprehension filters lower to Compress, which has no branch probe yet",
}


def test_enough_models():
    assert len(MODELS) >= 15


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=NO_PROBE[n], strict=True))
                                  if n in NO_PROBE else n for n in MODELS])
def test_untrace_matches_and_trace_diverges_where_it_says(name):
    module, path = load(name)
    report = verify(module.build(), module.inputs(), compare=("trace",))
    data = report.to_dict()
    assert data["ok"], data["systems"]["untrace"]
    trace = data["systems"]["trace"]
    diverged = [i for i, r in enumerate(trace["per_input"]) if not r["match"]] if trace["exported"] else [0]
    assert diverged, "the traced export matched eager on every input"
    assert data["divergence"], "verify did not say where the trace diverges"
    assert all(d["line"] > 0 and d["path"] for d in data["divergence"])
