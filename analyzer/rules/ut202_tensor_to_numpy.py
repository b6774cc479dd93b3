"""UT202 tensor-to-numpy."""

from analyzer.analyses.kinds.facts import EscapeFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, EscapeFact) and fact.target == "numpy":
            message = (f"tensor converted to NumPy (`{fact.expression}`): the computation leaves the graph here, "
                       f"and the rest of the chain (NumPy calls on the result, `torch.from_numpy` of theirs) is "
                       f"frozen to the example input as constants")
            yield RULE.diagnostic(fact.site, message, "use the equivalent torch operation")


RULE = Rule(
    code="UT202",
    name="tensor-to-numpy",
    summary="A tensor converted to NumPy (`.numpy()`, `np.*(t)`).",
    what="Reports `.numpy()` and calls of `numpy` functions with tensor arguments.",
    why="NumPy code does not appear in the trace: its result is baked into the graph as a constant.",
    example="def forward(self, x):\n    m = np.median(x.detach().numpy())\n    return x - m",
    use_instead="def forward(self, x):\n    return x - x.median()",
    detect=detect,
    valid=("import numpy as np\nimport torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x * np.sqrt(2.0)\n",),
    invalid=(
        "import numpy as np\nimport torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        m = np.median(torch.relu(x))\n        return x - m\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        a = torch.relu(x).numpy()\n        return x\n",
    ),
)
