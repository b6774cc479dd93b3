"""Every corpus model exports from source and matches eager PyTorch on onnxruntime on
all of its inputs (rtol 1e-4, atol 1e-5), with If/Loop wherever it has data-dependent
control flow. Known gaps are strict xfails with their reason."""

import inspect

import pytest

from lowering import LoweringError, export
from tests.export.corpus import (
    corpus_names, dynamic_axes, export_and_compare, groups, has_data_dependent_control_flow, load,
)

KNOWN_GAPS: dict[str, str] = {}  # name -> reason; a strict xfail (fails once the model passes)

# Models whose outputs' structure depends on the input size: one graph per input shape.
STATIC_SHAPES = {
    "image_pyramid": "returns one tensor per pyramid level, and the number of levels depends on the image size",
}


@pytest.mark.parametrize("name", corpus_names())
def test_corpus_model_exports_and_matches_eager(name):
    module, path = load(name)
    try:
        counts = export_and_compare(module.build(), module.inputs(), static=name in STATIC_SHAPES)
    except LoweringError as exc:
        if name in KNOWN_GAPS:
            pytest.xfail(f"{KNOWN_GAPS[name]} ({exc.message})")
        raise
    assert name not in KNOWN_GAPS, f"{name} now passes: remove it from KNOWN_GAPS"
    if has_data_dependent_control_flow(path):
        assert counts.get("If", 0) + counts.get("Loop", 0) > 0, f"no If/Loop in {counts}"


def test_variable_length_output_is_refused_with_dynamic_shapes():
    module, _ = load("image_pyramid")
    model = module.build()
    params = list(inspect.signature(type(model).forward).parameters)[1:]
    group = groups(module.inputs())[0]
    with pytest.raises(LoweringError, match="returns a list whose length depends on the input"):
        export(model, group[0], dynamic_shapes=dynamic_axes(params, group))
