"""The smallest real-model cases of benchmarks/zoo, exported by untrace and judged on
onnxruntime against eager PyTorch by the same harness as `make bench`
(benchmarks/real_models.py), in-process.

Every case exports and matches eager on every check input; in particular untrace is
never silently wrong. A case that stops exporting fails here with the refusal's reason.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.zoo import harness
from benchmarks.zoo.registry import find

pytestmark = pytest.mark.slow

FAST_CASES = [
    "timm/resnet18",
    "timm/convnext_atto_dynamic_hw",
    "timm/mobilenetv3_small_100",
    "timm/regnetx_002",
    "torchvision/squeezenet1_0",
    "torchvision/shufflenet_v2_x0_5",
    "torchvision/mobilenet_v3_small",
    "transformers/GPT2",
    "transformers/DistilBert",
    "transformers/T5Encoder",
    "transformers/ConvNext",
]

@pytest.mark.parametrize("key", FAST_CASES)
def test_untrace_matches_eager(key):
    (outcome,) = harness.run_in_process(find(key), ("untrace",), timeout=120)
    assert outcome.status != "wrong", f"silently wrong: {outcome.reason}"
    assert outcome.status == "correct", f"{outcome.error_type}: {outcome.reason} ({outcome.location})"


def test_the_harness_sees_a_graph_that_is_static_where_the_case_is_dynamic():
    """A graph exported without the case's dynamic axes is judged wrong (onnxruntime
    refuses the other batch), never correct: the harness cannot call a static export
    of a dynamic case right."""
    case = find("torchvision/squeezenet1_0")
    static = type(case)(case.name, case.library, case.build, case.inputs, {})
    inputs = case.inputs()
    harness.install_torchvision_ops()
    references = [harness.eager_outputs(case.build(), check) for _, check in inputs.checks]
    outcome = harness.measure(static, "untrace", inputs, references)
    assert outcome.status == "wrong"
    assert outcome.reason.startswith("onnxruntime fails on 'batch 3': ")


def test_compare_names_the_output_that_differs():
    want = [("out.logits", np.array([1.0, 2.0, 3.0], dtype=np.float32)),
            ("out.labels", np.array([1, 2], dtype=np.int64))]
    assert harness.compare([want[0][1] + 1e-5, want[1][1]], want) == ""
    assert harness.compare([want[0][1] + 0.1, want[1][1]], want).startswith("out.logits: max |diff| 0.1")
    assert harness.compare([want[0][1], np.array([1, 3])], want) == "out.labels: 1 of 2 values differ"
    assert harness.compare([want[0][1]], want) == "1 outputs, eager has 2"
