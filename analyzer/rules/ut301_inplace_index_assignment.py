"""UT301 inplace-index-assignment."""

from analyzer.analyses.kinds.facts import InplaceFact
from analyzer.rules.base import Rule

_INTO = {"input": "a forward input", "parameter": "a parameter or buffer", "view": "a view of another tensor"}


def detect(facts):
    for fact in facts:
        if isinstance(fact, InplaceFact) and (fact.target != "local" or fact.how == "mask-lower-rank"):
            into = _INTO.get(fact.target, "a forward input")
            if fact.how == "mask-lower-rank":
                message = (f"boolean-mask write through a mask of fewer dimensions than its target (`{fact.expression}`): "
                           f"the legacy exporter's Where / ScatterND has shapes onnxruntime rejects")
                suggestion = ("give the mask the target's dimensions and write out of place: "
                              "`t = t.masked_fill(mask.unsqueeze(-1), v)` or `torch.where(mask.unsqueeze(-1), v, t)`")
            elif fact.how == "inplace-input":
                message = f"in-place operation on {into} (`{fact.expression}`)"
                suggestion = "use the out-of-place form (`x = x.add(1)`) so the caller's tensor and the graph agree"
            else:
                message = f"in-place index assignment into {into} (`{fact.expression}`)"
                suggestion = ("use `torch.where(mask, v, t)`, `t.masked_fill(mask, v)` or `t.index_put((idx,), v)` "
                              "out of place")
            if fact.no_fix:
                suggestion += f" (not rewritten automatically: {fact.no_fix})"
            yield RULE.diagnostic(fact.site, message, suggestion, fact.fix)


RULE = Rule(
    code="UT301",
    name="inplace-index-assignment",
    summary="An in-place write into a forward input, a parameter or buffer, or a view: `t[idx] = v`, `index_put_`, "
            "`x.add_()`.",
    what="Reports index assignment (`t[idx] = v`), `index_put_` and friends into a tensor that is a forward input, "
         "a parameter or buffer, or a view of another tensor (`v = t[0]`, `t.view(...)`, `t.T`), and in-place "
         "methods (`x.add_()`, `x.masked_fill_()`) on inputs and views. Writes into a tensor the code made itself "
         "(`torch.zeros(...)`, `x.clone()`, an op's result) are UT304, off by default: the legacy tracer records "
         "them faithfully -- except a write through a boolean mask of fewer dimensions than its target (`y[m] = 0.0` "
         "with `m = y[:, 0] > 0`) of a value that does not hold the masked rows, reported here wherever it writes. "
         "Unsafe fix (`--fix --unsafe-fixes`): a write into an argument of `forward` (no default) -> `x = x.clone()` at "
         "the top of `forward`, so every write lands in the copy: the outputs are the same, bit for bit, but the "
         "caller's tensor is no longer modified (code that reads it back would see the difference). Writes in "
         "helpers, into views and into parameters are left, with the reason.",
    why="The trace records a write into an input, a buffer or a view as a copy into that one tensor: the caller's "
        "tensor or the module's buffer is not updated by the ONNX graph, and the other tensors that share the "
        "storage of a view keep their old values in the graph while eager PyTorch changes them. A write through a "
        "mask of fewer dimensions becomes a Where or ScatterND whose shapes onnxruntime rejects, when loading the "
        "graph or for any input whose mask counts other rows than the example's (benchmarks/data/mask_writes.md).",
    example="def forward(self, x):\n    x[x < 0] = 0\n    return x",
    use_instead="def forward(self, x):\n    return x.masked_fill(x < 0, 0)",
    detect=detect,
    fixes=((
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, valid):\n        x[~valid] = 0.0\n"
        "        x.mul_(0.5)\n        return x.sum(-1)\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, valid):\n        x = x.clone()\n"
        "        x[~valid] = 0.0\n        x.mul_(0.5)\n        return x.sum(-1)\n",
    ),),
    not_fixed=((
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor = None):\n        x[0] = 1.0\n"
        "        return x\n",
        "`x` has a default",
    ),),
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x.masked_fill(x < 0, 0)\n",
        # writes into tensors made here are traced faithfully (UT304)
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, idx):\n        y = torch.zeros(4, 3)\n"
        "        y[:, 0] = 1\n        y[y > 0] = 2\n        z = x.clone()\n        z[idx] = 0\n"
        "        z.index_put_((idx,), x[0], accumulate=True)\n        return y + z\n",
    ),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x[x < 0] = 0\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x.add_(1)\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        y = x * 1\n        v = y[0]\n"
        "        v[:] = 7\n        return y\n",
        # a mask of fewer dimensions than the tensor it writes into, made here or not
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        y = x.clone()\n"
        "        y[y[:, 0] > 0] = 0.0\n        return y\n",
    ),
)
