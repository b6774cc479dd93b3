"""Every registered op that has an OpInfo, checked against eager PyTorch on the OpInfo's
own sample inputs (float32, plus int64/bool where the OpInfo takes them).

A sample passes when onnxruntime agrees with eager (rtol 1e-4 / atol 1e-5, exact for
integer and bool outputs; dtype and shape equal) -- float32 samples also with symbolic
input dims.  A sample the lowering refuses with ``LoweringError`` is "refused", not
passed; any other exception or disagreement fails the test, and every op must pass at
least one float32 sample.  Names served by the same lowering through the same OpInfo
(``torch.add`` / ``Tensor.add``) are tested once.  Known gaps are strict xfails in
``tests/ops/xfails.py``.
"""

from __future__ import annotations

import pytest
import torch

from . import harness
from .xfails import xfail_for

OPSETS = (17, 23)  # the default 18 is test_opinfo's; opset 20's Gelu is in test_handwritten


def _marks(names, dtype=None):
    for name in names:
        x = xfail_for("opinfo", name, dtype)
        if x is not None:
            return [pytest.mark.xfail(reason=x.reason, strict=True)]
    return []


def _dtype_cases():
    for names in harness.opinfo_groups():
        for dtype in harness.tested_dtypes(names[0]):
            dt = str(dtype).removeprefix("torch.")
            yield pytest.param(names, dtype, id=f"{names[0]}-{dt}", marks=_marks(names, dtype))


def _opset_cases():
    for names in harness.opinfo_groups():
        for opset in OPSETS:
            yield pytest.param(names, opset, id=f"{names[0]}-opset{opset}", marks=_marks(names, _opset_dtype(names[0])))


def _opset_dtype(name):
    dtypes = harness.tested_dtypes(name)
    for dt in (torch.float32, torch.bool, torch.int64):
        if dt in dtypes:
            return dt
    return dtypes[0]


@pytest.mark.parametrize(("names", "dtype"), list(_dtype_cases()))
def test_opinfo(names, dtype):
    with torch.no_grad():
        results = harness.run_opinfo(names[0], dtype)
    failures = list(harness.iter_failures(results))
    assert not failures, f"{names[0]} {dtype}:\n" + "\n".join(failures)
    counts = harness.summarize(results)
    if dtype == torch.float32:
        assert counts["passed"] > 0, f"{names[0]}: no float32 sample lowered ({counts}): " + "; ".join(
            r.detail for r in results[:3]
        )


@pytest.mark.parametrize(("names", "opset"), list(_opset_cases()))
def test_opinfo_opsets(names, opset):
    """Every op at the lowest and highest supported opsets: samples until two pass."""
    dtype = _opset_dtype(names[0])
    with torch.no_grad():
        results = harness.run_opinfo(names[0], dtype, opset, dynamic=False, max_passes=2)
    failures = list(harness.iter_failures(results))
    assert not failures, f"{names[0]} opset {opset}:\n" + "\n".join(failures)
    assert harness.summarize(results)["passed"] > 0, f"{names[0]}: nothing lowered at opset {opset}"
