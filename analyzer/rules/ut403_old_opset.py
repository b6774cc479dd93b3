"""UT403 old-opset.

Two floors for a literal `opset_version=N`: the fixed one (13, where the input-based axes
of `Split`/`Squeeze`/`Unsqueeze`/`ReduceSum` arrived), and the first opset at which
torch.onnx lowers each op of the exported class's `forward` (from the generated op table;
only when the class was resolved in the scanned tree and the op's aten op is certain).
"""

from analyzer.analyses.kinds import op_table
from analyzer.diagnostics import path_ref
from analyzer.fixes.callsite_fact import CallSiteFact, forward_ops
from analyzer.rules.base import Rule

MIN_OPSET = 13


def ops_needing_more(callsite: CallSiteFact, opset: int) -> list[tuple[int, object]]:
    """(first opset, op fact) for each op of the exported forward that torch.onnx cannot
    lower at ``opset``, highest requirement first."""
    needs = []
    for op in forward_ops(callsite):
        first = op_table.torch_onnx_first_opset(op.op)
        if first is not None and first > opset:
            needs.append((first, op))
    return sorted(needs, key=lambda n: (-n[0], n[1].site.path, n[1].site.line, n[1].site.column))


def _where(op, here: str) -> str:
    return f"line {op.site.line}" if op.site.path == here else f"{path_ref(op.site.path)}:{op.site.line}"


def detect(facts):
    for fact in facts:
        if not (isinstance(fact, CallSiteFact) and fact.kind == "old-opset"):
            continue
        opset = int(fact.detail)
        needs = ops_needing_more(fact, opset)
        if needs:
            required = max(needs[0][0], MIN_OPSET)
            named = ", ".join(f"`{op_table.display_name(op.op)}` ({_where(op, fact.site.path)}) at opset {first}"
                              for first, op in needs[:3]) + (", ..." if len(needs) > 3 else "")
            yield RULE.diagnostic(
                fact.site,
                f"`opset_version={opset}` is below what `{fact.module_class}.forward` needs: torch.onnx first "
                f"lowers {named}",
                f"use `opset_version={max(required, 18)}`",
            )
        elif opset < MIN_OPSET:
            yield RULE.diagnostic(
                fact.site,
                f"`opset_version={opset}` is below {MIN_OPSET}: before opset 13, `Split`, `Squeeze`, "
                "`Unsqueeze`, `ReduceSum` take their axes as attributes, so axes computed from shapes cannot be "
                "exported, and the torch.export-based exporter only converts down to it on a best-effort basis",
                f"use `opset_version={MIN_OPSET}` or later (18 is the default of current exporters)",
            )


RULE = Rule(
    code="UT403",
    name="old-opset",
    summary="An exporter call asks for an ONNX opset below 13, or below what the exported module's ops need.",
    what=f"Reports a literal `opset_version=N` in a `torch.onnx.export` call when N < {MIN_OPSET}, or when the "
         "exported module's class (resolved in the scanned tree, in this file or another) calls an op that "
         "torch.onnx first lowers at a later opset: `F.grid_sample` (16), `torch.tril`/`triu` (14), "
         "`F.scaled_dot_product_attention` (14), `F.fold` (18)... The op floors come from torch.onnx's own "
         "symbolic registry, through the generated op table (`make optable`).",
    why="Opsets before 13 lack the input-based forms of `Split`, `Squeeze`, `Unsqueeze` and `ReduceSum` axes and "
        "bfloat16 in most ops, so shape-dependent code either fails to export or is exported with its shapes "
        "frozen; the torch.export-based exporter (the default since torch 2.9) emits opset 18 and converts down "
        "only on a best-effort basis. An op whose ONNX operator appeared later (GridSample in 16, Trilu in 14, "
        "Col2Im in 18) cannot be exported at all at an older opset.",
    example="torch.onnx.export(model, (x,), \"m.onnx\", opset_version=11)",
    use_instead="torch.onnx.export(model, (x,), \"m.onnx\", opset_version=18)",
    detect=detect,
    severity="warning",
    valid=(
        "import torch\ndef export(m, x):\n    torch.onnx.export(m, (x,), 'n.onnx', opset_version=17)\n",
        "import torch\ndef export(m, x, opset):\n    torch.onnx.export(m, (x,), 'n.onnx', opset_version=opset)\n",
        "import torch\nimport torch.nn.functional as F\nclass Warp(torch.nn.Module):\n"
        "    def forward(self, x: torch.Tensor, grid: torch.Tensor):\n        return F.grid_sample(x, grid)\n"
        "def main():\n    m = Warp().eval()\n    torch.onnx.export(m, (torch.zeros(1), torch.zeros(1)), 'w.onnx', "
        "opset_version=16)\n",
    ),
    invalid=(
        "import torch\ndef export(m, x):\n    torch.onnx.export(m, (x,), 'n.onnx', opset_version=11)\n",
        "import torch\nimport torch.nn.functional as F\nclass Warp(torch.nn.Module):\n"
        "    def forward(self, x: torch.Tensor, grid: torch.Tensor):\n        return F.grid_sample(x, grid)\n"
        "def main():\n    m = Warp().eval()\n    torch.onnx.export(m, (torch.zeros(1), torch.zeros(1)), 'w.onnx', "
        "opset_version=14)\n",
    ),
)
