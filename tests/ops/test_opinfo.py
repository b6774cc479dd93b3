"""Every registered op that has an OpInfo, checked against eager PyTorch on the OpInfo's
own sample inputs (float32, plus int64/bool where the OpInfo takes them).

A sample passes when onnxruntime agrees with eager (rtol 1e-4 / atol 1e-5, exact for
int64/bool; dtype and shape equal) -- also with symbolic input dims for float32.  A
sample the lowering refuses with ``LoweringError`` is "refused", not passed; any other
exception or disagreement fails the test.  Each (name, dtype) must pass at least one
float32 sample.  Known gaps are strict xfails in ``tests/ops/xfails.py``.
"""

from __future__ import annotations

import pytest
import torch

from . import harness
from .xfails import xfail_for

torch.set_grad_enabled(False)


def _cases():
    for name in harness.opinfo_names():
        for dtype in harness.tested_dtypes(name):
            marks = []
            x = xfail_for("opinfo", name, dtype)
            if x is not None:
                marks.append(pytest.mark.xfail(reason=x.reason, strict=True))
            yield pytest.param(name, dtype, id=f"{name}-{str(dtype).removeprefix('torch.')}", marks=marks)


@pytest.mark.parametrize(("qualname", "dtype"), list(_cases()))
def test_opinfo(qualname, dtype):
    results = harness.run_opinfo(qualname, dtype)
    failures = list(harness.iter_failures(results))
    assert not failures, f"{qualname} {dtype}: " + "\n".join(failures)
    counts = harness.summarize(results)
    if dtype == torch.float32:
        assert counts["passed"] > 0, f"{qualname}: no float32 sample lowered ({counts}); " + "; ".join(
            r.detail for r in results[:3]
        )
