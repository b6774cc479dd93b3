"""``untrace verify``: the untrace ONNX against eager PyTorch and the traced exports, on
inputs that take every side of every branch.

    from lowering.verification import verify
    report = verify(model, [(x1,), (x2,)], search=200)
    report.ok, report.uncovered, report.to_dict()

Modules, one job each: ``inputs`` (cloning, signatures, random and npz inputs),
``systems`` (eager / untrace / trace / dynamo runners), ``compare`` (metrics),
``coverage`` (probe counting), ``search`` (input search), ``record`` (conversion
record), ``report`` (the data), ``report_text`` / ``report_json`` / ``report_html``
(renderings), ``api`` (``verify``), ``cli`` (``untrace verify``).
"""

from lowering.verification.api import verify
from lowering.verification.report import VerifyReport

__all__ = ["VerifyReport", "verify"]
