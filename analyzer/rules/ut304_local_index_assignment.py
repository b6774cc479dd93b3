"""UT304 local-index-assignment (off by default)."""

from analyzer.analyses.kinds.facts import InplaceFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, InplaceFact) and fact.target == "local" and fact.how != "mask-lower-rank":
            yield RULE.diagnostic(
                fact.site, f"in-place index assignment into a tensor made here (`{fact.expression}`)",
                "fine for the legacy exporter; `torch.where` / `index_put` out of place avoid the ScatterND chain")


RULE = Rule(
    code="UT304",
    name="local-index-assignment",
    summary="An in-place index write into a tensor the code made itself (off by default).",
    what="Reports `t[idx] = v`, `index_put_` and the in-place methods that write at positions or copy in "
         "(`index_add_`, `index_copy_`, `index_fill_`, `scatter_`, `scatter_add_`, `masked_fill_`, "
         "`masked_scatter_`, `copy_`) where `t` was made by the code being checked "
         "(`torch.zeros(...)`, `x.new_zeros(...)`, `x.clone()`, an op's result) and is not a view of another tensor.",
    why="Nothing, for `torch.onnx.export(dynamo=False)`: the trace records the write as `copy_` / `index_put` into "
        "that tensor and the ONNX graph computes the same values. It exports as Slice/ScatterND chains, and with "
        "repeated integer indices ScatterND leaves the result undefined where PyTorch takes the last write.",
    example="def forward(self, x):\n    y = torch.zeros_like(x)\n    y[:, 0] = x[:, 0]\n    return y",
    use_instead="def forward(self, x):\n    return torch.cat([x[:, :1], torch.zeros_like(x[:, 1:])], dim=1)",
    detect=detect,
    default_enabled=False,
    valid=("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x[0] = 1\n        return x\n",),
    invalid=("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        y = torch.zeros_like(x)\n"
             "        y[:, 0] = x[:, 0]\n        return y\n",),
)
