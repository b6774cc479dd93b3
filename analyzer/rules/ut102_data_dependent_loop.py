"""UT102 data-dependent-loop."""

from analyzer.analyses.kinds.facts import LoopFact
from analyzer.analyses.kinds.levels import Level
from analyzer.rules.base import Rule
from analyzer.rules.script_advice import script_advice


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if not isinstance(fact, LoopFact):
            continue
        if fact.bound_level == Level.DATA and fact.construct == "comprehension":
            message = (f"comprehension over a tensor sized by tensor values (`{fact.header}`): tracing makes one "
                       f"item per row of the example input")
        elif fact.bound_level == Level.DATA:
            what = "`while` condition" if fact.construct == "while" else "trip count"
            message = f"loop {what} depends on tensor values (`{fact.header}`): tracing unrolls it for the example input"
        elif fact.exit_level == Level.DATA:
            lines = ", ".join(str(n) for n in fact.exit_lines)
            message = (f"loop exits early on tensor values (break/return at line {lines}): tracing unrolls it "
                       f"to the example input's trip count")
        else:
            continue
        suggestion = ("compute every iteration and mask the result (`torch.where`), bound the loop by a constant, "
                      "rewrite it with `torch._higher_order_ops.while_loop(cond_fn, body_fn, carried)`, or "
                      "`untrace export` it (lowered to an ONNX Loop)" + script_advice(facts, fact))
        if fact.no_fix:
            suggestion += f" (not rewritten automatically: {fact.no_fix})"
        yield RULE.diagnostic(fact.site, message, suggestion, fact.fix)


RULE = Rule(
    code="UT102",
    name="data-dependent-loop",
    summary="A loop whose trip count, condition, `break` or early `return` depends on tensor values.",
    what="Reports `while` loops on tensor values, `for` loops over `range(...)` of a tensor-derived count, "
         "and any loop (even `range(const)` or a `ModuleList`) that leaves early through a `break` or "
         "`return` under a tensor-valued condition.",
    why="The tracer runs the loop once and records the iterations the example input took: the ONNX graph "
        "always runs exactly that many, whatever the input.",
    example="def forward(self, x):\n    while x.norm() > 1:\n        x = x / 2\n    return x",
    use_instead="def forward(self, x):\n    for _ in range(MAX_STEPS):\n        x = torch.where(x.norm() > 1, x / 2, x)\n    return x",
    detect=detect,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n"
        "        for i in range(3):\n            x = x + i\n        return x\n",
    ),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        while x.norm() > 1:\n            x = x / 2\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for i in range(10):\n            x = x * 0.5\n"
        "            if x.abs().max() < 1e-3:\n                break\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        n = int(x.sum())\n        for i in range(n):\n            x = x + 1\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for e in torch.nonzero(x):\n"
        "            x = x + e.sum()\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, sizes):\n"
        "        for p in torch.split(x, sizes.tolist()):\n            x = x + p.sum()\n        return x\n",
    ),
)
