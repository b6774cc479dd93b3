"""Known gaps of the op table: the one place where tests are expected to fail.

Each entry is a strict xfail: when the gap is closed the test starts passing, fails as
XPASS, and the entry has to go.  ``test`` is ``"opinfo"`` (key: registry name and
dtype) or ``"handwritten"`` (key: the case id).  ``docs/ops.md`` lists every entry with
its reason.
"""

from __future__ import annotations

import dataclasses

import torch


@dataclasses.dataclass(frozen=True)
class XFail:
    test: str  # "opinfo" | "handwritten"
    key: str  # registry name (opinfo) or case id (handwritten)
    reason: str
    dtype: torch.dtype | None = None  # opinfo only: None = every dtype


XFAILS: list[XFail] = [
]


def xfail_for(test: str, key: str, dtype: torch.dtype | None = None) -> XFail | None:
    for x in XFAILS:
        if x.test == test and x.key == key and (x.dtype is None or x.dtype == dtype):
            return x
    return None


# ---------------------------------------------------------------------- shape, indexing, nn families

_TIE_ORDER = (
    "ties: torch's order among equal values is unspecified (its CPU topk/unstable sort does not keep "
    "index order on this sample); ONNX TopK puts the lower index first"
)

XFAILS += [
    XFail("opinfo", "torch.topk", _TIE_ORDER, torch.int64),
    XFail("opinfo", "Tensor.topk", _TIE_ORDER, torch.int64),
    XFail("opinfo", "torch.sort", _TIE_ORDER, torch.bool),
    XFail("opinfo", "Tensor.sort", _TIE_ORDER, torch.bool),
    XFail("opinfo", "torch.argsort", _TIE_ORDER, torch.bool),
    XFail("opinfo", "Tensor.argsort", _TIE_ORDER, torch.bool),
]
