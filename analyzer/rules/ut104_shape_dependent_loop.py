"""UT104 shape-dependent-loop (off by default)."""

from analyzer.analyses.kinds.facts import LoopFact
from analyzer.analyses.kinds.levels import Level
from analyzer.rules.base import Rule
from analyzer.rules.script_advice import script_advice


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if isinstance(fact, LoopFact) and max(fact.bound_level, fact.exit_level) == Level.SHAPE:
            message = f"loop trip count depends on tensor shape (`{fact.header}`): unrolled for the example shape"
            yield RULE.diagnostic(
                fact.site, message,
                "fine for a static axis; for a dynamic one `untrace export --dynamic` lowers it to an ONNX Loop"
                + script_advice(facts, fact))


RULE = Rule(
    code="UT104",
    name="shape-dependent-loop",
    summary="A loop whose trip count comes from tensor shapes (off by default).",
    what="Reports loops over `range(x.shape[i])`, `range(x.size(1))` and the like.",
    why="The tracer unrolls the loop for the example's size; with a dynamic axis the graph is wrong for "
        "every other size.",
    example="def forward(self, x):\n    for t in range(x.size(1)):\n        h = self.cell(x[:, t], h)",
    use_instead="Keep the time axis static at export, or export with `untrace export --dynamic x:1=T`.",
    detect=detect,
    default_enabled=False,
    valid=("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for i in range(4):\n            x = x + i\n        return x\n",),
    invalid=("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for t in range(x.size(1)):\n            x = x + t\n        return x\n",),
)
