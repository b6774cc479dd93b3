"""UT301 inplace-index-assignment."""

from analyzer.analyses.facts import InplaceFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, InplaceFact):
            if fact.how == "inplace-input":
                message = f"in-place operation on a forward input (`{fact.expression}`)"
                suggestion = "use the out-of-place form (`x = x.add(1)`) so the caller's tensor and the graph agree"
            else:
                message = f"in-place index assignment (`{fact.expression}`)"
                suggestion = ("use `torch.where(mask, v, t)`, `t.masked_fill(mask, v)` or `t.index_put((idx,), v)` "
                              "out of place")
            yield RULE.diagnostic(fact.site, message, suggestion)


RULE = Rule(
    code="UT301",
    name="inplace-index-assignment",
    summary="An in-place write into a tensor: `t[idx] = v`, `index_put_`, in-place ops on inputs.",
    what="Reports index assignment into tensors, `index_put_` and friends, and in-place methods "
         "(`x.add_()`, `x.masked_fill_()`) on `forward`'s inputs.",
    why="In-place writes export as ScatterND/index_put chains whose semantics differ from PyTorch's with "
        "repeated indices and aliasing views, and an in-place op on an input mutates the caller's tensor in "
        "eager mode but not in ONNX.",
    example="def forward(self, x):\n    x[x < 0] = 0\n    return x",
    use_instead="def forward(self, x):\n    return x.masked_fill(x < 0, 0)",
    detect=detect,
    valid=("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x.masked_fill(x < 0, 0)\n",),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x[x < 0] = 0\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x.add_(1)\n        return x\n",
    ),
)
