"""UT103 shape-dependent-branch (off by default)."""

from analyzer.analyses.kinds.facts import BranchFact
from analyzer.analyses.kinds.levels import Level
from analyzer.rules.base import Rule
from analyzer.rules.script_advice import script_advice


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if isinstance(fact, BranchFact) and not fact.exits_loop and fact.level == Level.SHAPE:
            message = (f"branch on tensor shape (`{fact.predicate}`): fixed at export time unless that axis "
                       f"is static")
            yield RULE.diagnostic(
                fact.site, message,
                "fine when the axis is static; for a dynamic axis use `untrace export --dynamic` (lowered to an "
                "ONNX If over Shape) or `torch._check` the shape" + script_advice(facts, fact))


RULE = Rule(
    code="UT103",
    name="shape-dependent-branch",
    summary="A Python branch decided by tensor shapes (off by default).",
    what="Reports branches on `.shape`, `.size()`, `len(t)`, `.numel()`. Not on the rank (`.dim()`, `.ndim`): "
         "a graph has one rank per input, so a rank branch is static.",
    why="Exporters evaluate the condition for the example shapes. With static shapes that is right; with a "
        "dynamic axis the legacy exporter silently keeps one branch and the dynamo exporter specialises "
        "the axis. Off by default because most shape branches are on static axes.",
    example="def forward(self, x):\n    if x.shape[0] > 1:\n        x = x.mean(0)\n    return x",
    use_instead="def forward(self, x):\n    torch._check(x.shape[0] > 1)\n    return x.mean(0)",
    detect=detect,
    default_enabled=False,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if self.flag:\n            x = x + 1\n        return x\n",
        # the rank is static, even of a tensor whose sizes depend on data
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.dim() == 3:\n            x = x.unsqueeze(0)\n"
        "        idx = torch.nonzero(x > 0)\n        if idx.ndim != 2 or x.ndimension() < 2:\n            raise ValueError\n        return x\n",
    ),
    invalid=("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.shape[0] == 3:\n            x = x.unsqueeze(0)\n        return x\n",),
)
