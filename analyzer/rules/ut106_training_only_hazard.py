"""UT106 training-only-hazard (off by default)."""

from analyzer.analyses.kinds.facts import TrainingOnlyFact
from analyzer.rules.base import Rule

# The hazard rules whose findings in training-only code this rule reports instead.
_HAZARD_CODES = ("UT101", "UT102", "UT105", "UT201", "UT202", "UT301")


def detect(facts):
    from analyzer.rules import rule_by_code  # the registry imports this module

    hazards = [rule_by_code(code) for code in _HAZARD_CODES]
    for fact in facts:
        if not isinstance(fact, TrainingOnlyFact):
            continue
        for rule in hazards:
            for d in rule.detect([fact.unwrapped()]):
                yield RULE.diagnostic(fact.site, f"in training-only code, {d.code}: {d.message}", d.suggestion)


RULE = Rule(
    code="UT106",
    name="training-only-hazard",
    summary="A hazard (UT101/UT102/UT105/UT201/UT202/UT301) in code that runs only in training (off by default).",
    what="Reports the hazards of the default rules in code an eval-mode export never runs: under `if self.training` "
         "(alone or and-ed with anything, or passed on as a `training` argument), behind a training-target "
         "parameter defaulting to None (`if labels is not None:` with `labels=None`: loss computation, label "
         "checks, decoder inputs shifted from labels), and after `if not self.training: return`. The default "
         "rules skip this code, and what it assigns does not make later code data-dependent (a LayerDrop flag).",
    why="Nothing: an export of the module in eval mode with no labels does not run it. Enable it "
        "(`--extend-select UT106`, or `extend-select = [\"UT106\"]` under `[tool.untrace]`) to trace a model in "
        "training mode or with its loss.",
    example="def forward(self, x, labels=None):\n    if labels is not None and labels.max() >= 10:\n"
            "        raise ValueError('label out of range')\n    return self.fc(x)",
    use_instead="def forward(self, x, labels=None):\n    if labels is not None:\n"
                "        torch._check(labels.max().item() < 10)\n    return self.fc(x)",
    detect=detect,
    default_enabled=False,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if self.training:\n"
        "            x = x * (torch.rand_like(x) > 0.1)\n        return x\n",
    ),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if self.training and x.sum() > 0:\n"
        "            x = x * 2\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, labels=None):\n        loss = None\n"
        "        if labels is not None:\n            loss = (x - labels).abs().sum().item()\n        return x, loss\n",
    ),
)
