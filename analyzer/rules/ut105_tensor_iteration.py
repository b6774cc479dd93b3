"""UT105 tensor-iteration."""

from analyzer.analyses.kinds.facts import IterationFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, IterationFact):
            what = {"unpack": "unpacking a tensor", "for": "iterating over a tensor",
                    "comprehension": "iterating over a tensor in a comprehension"}.get(fact.how, f"`{fact.how}()` over a tensor")
            message = f"{what} (`{fact.expression}`): tracing unrolls it over the example's number of rows"
            yield RULE.diagnostic(fact.site, message,
                                  "use `x.unbind(0)` / `x.split(...)` with a static size, or vectorise over the dimension")


RULE = Rule(
    code="UT105",
    name="tensor-iteration",
    summary="A tensor iterated, listed or star-unpacked in Python.",
    what="Reports `for row in t`, `list(t)`, `tuple(t)`, `enumerate(t)`, `zip(t, ...)`, iterating `t.unbind(d)` "
         "and a starred unpacking `a, *rest = t` on a value known to be a single tensor. `a, b = t` is not reported: "
         "every input eager accepts has exactly two rows, and the trace is right for all of them. A tensor sized by "
         "data (`nonzero`, a boolean mask) iterated is a data loop (UT102).",
    why="Python iteration over a tensor runs once per row of the example input: the trace hard-codes that "
        "count and the ONNX graph fails or is wrong for another size.",
    example="def forward(self, x):\n    h = torch.relu(x)\n    return torch.stack([row * 2 for row in h])",
    use_instead="def forward(self, x):\n    return torch.relu(x) * 2",
    detect=detect,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        a, b = x.chunk(2)\n        return a + b\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        h, w = x.amax(0)\n        return h * w\n",
        # sized by data: a data loop (UT102), not a tensor iteration
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for e in torch.nonzero(x):\n"
        "            x = x + e.sum()\n        return x\n",
        # torch.cond returns what its branches return: here a tuple (what --fix writes)
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, h):\n"
        "        def t(h, x):\n            return (h + x, h * 2)\n        def f(h, x):\n            return (h - x, h * 3)\n"
        "        g, h = torch.cond(x.mean() > 0, t, f, (h, x))\n        return g + h\n",
    ),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        h = torch.relu(x)\n        out = 0\n"
        "        for row in h:\n            out = out + row\n        return out\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        a, *rest = torch.softmax(x, 0)\n        return a\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return torch.stack([s.sum() for s in x.unbind(1)])\n",
    ),
)
