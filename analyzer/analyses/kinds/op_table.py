"""What the op table says about a PyTorch call, for the UT3xx/UT4xx rules.

Reads the generated literals of ``analyzer.data.onnx_ops`` (never torch or onnx). A name
the table does not list is *unknown* (a newer torch API, a name we cannot resolve):
rules stay quiet on it rather than guess.
"""

from __future__ import annotations

from analyzer.data.onnx_ops import LOWERED, TORCH_ONNX_FIRST, UNTRACE_OPSETS

__all__ = ["UNTRACE_OPSETS", "display_name", "is_known", "untrace_first_opset", "untrace_last_opset", "untrace_lowers", "torch_onnx_first_opset"]


def is_known(op: str) -> bool:
    return op in LOWERED


def untrace_lowers(op: str, opset: int) -> bool | None:
    """Whether ``untrace export`` lowers ``op`` at ``opset``; None when ``op`` is unknown."""
    if op not in LOWERED:
        return None
    span = LOWERED[op]
    return span is not None and span[0] <= opset <= span[1]


def untrace_first_opset(op: str) -> int | None:
    span = LOWERED.get(op)
    return span[0] if span else None


def untrace_last_opset(op: str) -> int | None:
    span = LOWERED.get(op)
    return span[1] if span else None


def torch_onnx_first_opset(op: str) -> int | None:
    """The first opset at which torch.onnx's TorchScript exporter lowers ``op``'s aten op,
    when that is known with certainty."""
    return TORCH_ONNX_FIRST.get(op)


def display_name(op: str) -> str:
    """``torch.nn.functional.x`` as users write it (``F.x``); other names as they are."""
    if op.startswith("torch.nn.functional."):
        return "F." + op[len("torch.nn.functional."):]
    if op == "operator.floordiv":
        return "//"
    return op
