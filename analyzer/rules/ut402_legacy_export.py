"""UT402 legacy-export-of-hazardous-module.

Reports every explicit `dynamo=False`, except when the exported class was resolved in
the scanned tree (defined in this file, or imported from another one: the engine
attaches its facts to the call site, and the other file becomes a dependency of this
file's cached result) and its `forward` has no UT1xx/UT2xx hazard.
"""

from analyzer.fixes.callsite_fact import CallSiteFact, describe, forward_hazards
from analyzer.rules.base import Rule


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if not (isinstance(fact, CallSiteFact) and fact.kind == "legacy-export"):
            continue
        hazards = forward_hazards(fact, shape=False)
        if fact.class_facts is not None and not hazards:
            continue  # a class of the scanned tree with no hazard: tracing it is faithful
        if hazards:
            sites = ", ".join(describe(h, fact.site.path) for h in hazards[:3]) + (", ..." if len(hazards) > 3 else "")
            message = (f"`dynamo=False` traces `{fact.module_class}`, whose forward has data-dependent control flow "
                       f"or value escapes ({sites}): the legacy tracer records only the path the example input "
                       "takes, and the ONNX graph is silently wrong on the others")
        else:
            message = ("`dynamo=False` uses the legacy tracer, which records only the path the example input "
                       "takes through every data-dependent branch, loop and `.item()`: the ONNX graph is silently "
                       "wrong for inputs that would take another path")
        yield RULE.diagnostic(
            fact.site, message,
            "drop `dynamo=False` (the torch.export-based exporter reports data-dependent control flow instead of "
            "baking one path in) and rewrite the hazards with `torch.where`/`torch.cond`, or use `untrace export`",
        )


RULE = Rule(
    code="UT402",
    name="legacy-export-of-hazardous-module",
    summary="`torch.onnx.export(..., dynamo=False)` on a module with trace hazards.",
    what="Reports an explicit `dynamo=False` passed to `torch.onnx.export`. When the exported module's class is "
         "found in the scanned tree (in the same file, or imported from another checked file), only if its "
         "`forward` has data-dependent branches, loops, tensor iteration or tensor-to-Python escapes "
         "(UT1xx/UT2xx), which the message lists with their files.",
    why="The legacy exporter runs `forward` once on the example input and records the operations that ran: "
        "every Python `if`, loop bound and `.item()` is frozen at the value it had for that input, with only a "
        "TracerWarning. The exported graph gives wrong results, without an error, for inputs that take "
        "another path.",
    example="torch.onnx.export(model, (x,), \"m.onnx\", dynamo=False)",
    use_instead="torch.onnx.export(model, (x,), \"m.onnx\")  # dynamo=True: data-dependent flow is an error, "
                "not a silent guess",
    detect=detect,
    severity="warning",
    valid=(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
        "def main():\n    m = Net().eval()\n    torch.onnx.export(m, (torch.zeros(1),), 'n.onnx', dynamo=False)\n",
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n"
        "            return x\n        return -x\n"
        "def main():\n    m = Net().eval()\n    torch.onnx.export(m, (torch.zeros(1),), 'n.onnx', dynamo=True)\n",
    ),
    invalid=(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n"
        "            return x\n        return -x\n"
        "def main():\n    m = Net().eval()\n    torch.onnx.export(m, (torch.zeros(1),), 'n.onnx', dynamo=False)\n",
        "import torch\ndef export(m, x):\n    torch.onnx.export(m, (x,), 'n.onnx', dynamo=False)\n",
    ),
)
