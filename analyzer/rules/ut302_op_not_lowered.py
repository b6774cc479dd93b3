"""UT302 op-not-lowered."""

from analyzer.analyses.kinds import op_table
from analyzer.analyses.kinds.facts import OpFact, TargetFact
from analyzer.rules.base import Rule

DEFAULT_OPSET = 18  # when no TargetFact says otherwise (the runner always adds one)
# Reported under their own, more specific code (UT202 tensor-to-numpy).
_ESCAPES = frozenset({"Tensor.numpy", "Tensor.__array__"})


def target_opset(facts) -> int:
    return next((f.opset for f in facts if isinstance(f, TargetFact)), DEFAULT_OPSET)


def detect(facts):
    facts = list(facts)
    opset = target_opset(facts)
    for fact in facts:
        if not isinstance(fact, OpFact) or fact.op in _ESCAPES or op_table.untrace_lowers(fact.op, opset) is not False:
            continue  # lowered, or a name the table does not know: quiet
        first = op_table.untrace_first_opset(fact.op)
        head = f"`untrace export` has no ONNX lowering for `{op_table.display_name(fact.op)}` (`{fact.written}`)"
        if first is None:
            message = f"{head} at any opset"
        elif opset < first:
            message = f"{head} at opset {opset}; the first opset with one is {first}"
        else:
            message = f"{head} at opset {opset}; it has one at opsets {first} to {op_table.untrace_last_opset(fact.op)}"
        legacy = op_table.torch_onnx_first_opset(fact.op)
        if legacy is not None and first is None:
            message += f" (torch.onnx's TorchScript exporter lowers it from opset {legacy})"
        yield RULE.diagnostic(
            fact.site, message,
            "rewrite it with ops that have a lowering (see docs/ops.md), or register one with "
            f"`lowering.register_lowering({fact.op!r}, fn)`",
        )


RULE = Rule(
    code="UT302",
    name="op-not-lowered",
    summary="A PyTorch call that `untrace export` cannot lower at the configured opset.",
    what="Reports calls that resolve with certainty to a PyTorch function, a method of a value known to be a "
         "tensor, or an `nn` module, for which untrace's op table has no ONNX lowering at the opset configured "
         "by `[tool.untrace] opset` (default 18). The message names the first opset that has one, or says that "
         "none does, and when torch.onnx's TorchScript exporter lowers it, from which opset. The table is "
         "generated from the lowering registry (`make optable`); calls it does not list, and methods on values "
         "that are only assumed to be tensors (un-annotated `forward` arguments), are not reported.",
    why="`untrace export` stops with a `LoweringError` at the first such call. Off by default: the op table is "
        "untrace's own, and code exported with `torch.onnx.export` (whose exporters decompose many more ops) "
        "does not need it. Select it (`--select UT302`) when you export with untrace.",
    example="def forward(self, x: torch.Tensor):\n    return torch.logcumsumexp(x, dim=-1)",
    use_instead="def forward(self, x: torch.Tensor):\n    m = x.amax(-1, keepdim=True)\n"
                "    return m + torch.log(torch.cumsum(torch.exp(x - m), dim=-1))",
    detect=detect,
    severity="warning",
    default_enabled=False,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
        "        return torch.relu(x).sum(dim=1)\n",
        # `x` is only assumed to be a tensor: its methods are not resolved with certainty
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x.searchsorted(x)\n",
    ),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
        "        return torch.logcumsumexp(x, 0)\n",
        "import torch\nimport torch.nn.functional as F\nclass M(torch.nn.Module):\n"
        "    def forward(self, x: torch.Tensor):\n        return torch.linalg.svd(x)\n",
    ),
)
