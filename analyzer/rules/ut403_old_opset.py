"""UT403 old-opset.

Not discovered until `analyzer/engine.py` appends `callsite_facts` (rename to
`ut403_old_opset.py` then). "Below what the module's ops need" waits for the UT3xx op
table; this rule checks the fixed floor.
"""

from analyzer.fixes.callsite_fact import CallSiteFact
from analyzer.rules.base import Rule

MIN_OPSET = 13


def detect(facts):
    for fact in facts:
        if isinstance(fact, CallSiteFact) and fact.kind == "old-opset" and int(fact.detail) < MIN_OPSET:
            yield RULE.diagnostic(
                fact.site,
                f"`opset_version={fact.detail}` is below {MIN_OPSET}: before opset 13, `Split`, `Squeeze`, "
                "`Unsqueeze`, `ReduceSum` take their axes as attributes, so axes computed from shapes cannot be "
                "exported, and the torch.export-based exporter only converts down to it on a best-effort basis",
                f"use `opset_version={MIN_OPSET}` or later (18 is the default of current exporters)",
            )


RULE = Rule(
    code="UT403",
    name="old-opset",
    summary=f"An exporter call asks for an ONNX opset below {MIN_OPSET}.",
    what=f"Reports a literal `opset_version=N` with N < {MIN_OPSET} in a `torch.onnx.export` call.",
    why="Opsets before 13 lack the input-based forms of `Split`, `Squeeze`, `Unsqueeze` and `ReduceSum` axes and "
        "bfloat16 in most ops, so shape-dependent code either fails to export or is exported with its shapes "
        "frozen; the torch.export-based exporter (the default since torch 2.9) emits opset 18 and converts down "
        "only on a best-effort basis.",
    example="torch.onnx.export(model, (x,), \"m.onnx\", opset_version=11)",
    use_instead="torch.onnx.export(model, (x,), \"m.onnx\", opset_version=18)",
    detect=detect,
    severity="warning",
    valid=(
        "import torch\ndef export(m, x):\n    torch.onnx.export(m, (x,), 'n.onnx', opset_version=17)\n",
        "import torch\ndef export(m, x, opset):\n    torch.onnx.export(m, (x,), 'n.onnx', opset_version=opset)\n",
    ),
    invalid=(
        "import torch\ndef export(m, x):\n    torch.onnx.export(m, (x,), 'n.onnx', opset_version=11)\n",
    ),
)
