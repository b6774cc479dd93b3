"""UT404 dynamic-axis-on-shape-hazard."""

from analyzer.fixes.callsite_fact import CallSiteFact, describe, forward_hazards
from analyzer.rules.base import Rule


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if not (isinstance(fact, CallSiteFact) and fact.kind == "dynamic-export"):
            continue
        hazards = forward_hazards(fact, shape=True)
        if not hazards:
            continue
        sites = ", ".join(describe(h, fact.site.path) for h in hazards[:3]) + (", ..." if len(hazards) > 3 else "")
        yield RULE.diagnostic(
            fact.site,
            f"`{fact.detail}` declares dynamic axes, but `{fact.module_class}.forward` branches or loops on tensor "
            f"shapes ({sites}): the legacy exporter bakes in the example's path (silently wrong for other "
            "sizes) and the torch.export-based exporter specializes the axis to the example's size",
            "make the shape-dependent code shape-agnostic (`torch.where`, masking, `torch.cond`), or export one "
            "model per size and drop the dynamic axis",
        )


RULE = Rule(
    code="UT404",
    name="dynamic-axis-on-shape-hazard",
    summary="Dynamic axes are declared for a module whose forward branches or loops on tensor shapes.",
    what="Reports `dynamic_axes=` / `dynamic_shapes=` in an exporter call when the exported module's class is "
         "found in the scanned tree (this file or another checked file) and its `forward` (or what it calls) "
         "has a shape-dependent branch or loop (the UT103/UT104 sites, listed in the message).",
    why="A branch or trip count decided by a size is evaluated once, for the example input's size. The legacy "
        "exporter records that path and labels the axis dynamic anyway, so the graph is silently wrong for "
        "other sizes; the torch.export-based exporter specializes the axis to the example's size (or fails "
        "with a constraint violation), so the declared dynamism does not exist.",
    example="class Net(nn.Module):\n    def forward(self, x):\n        if x.shape[1] > 256:\n"
            "            x = x[:, :256]\n        return self.head(x)\n\n"
            "torch.onnx.export(Net().eval(), (x,), \"m.onnx\", dynamic_axes={\"x\": {1: \"length\"}})",
    use_instead="class Net(nn.Module):\n    def forward(self, x):\n"
                "        x = x[:, :256]  # a no-op when shorter: no branch on the size\n        return self.head(x)",
    detect=detect,
    valid=(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
        "def main():\n    m = Net().eval()\n"
        "    torch.onnx.export(m, (torch.zeros(2),), 'n.onnx', dynamic_axes={'x': {0: 'b'}})\n",
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        if x.shape[0] > 1:\n"
        "            x = x - x.mean(0)\n        return x\n"
        "def main():\n    m = Net().eval()\n    torch.onnx.export(m, (torch.zeros(2),), 'n.onnx')\n",
    ),
    invalid=(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        if x.shape[0] > 1:\n"
        "            x = x - x.mean(0)\n        return x\n"
        "def main():\n    m = Net().eval()\n"
        "    torch.onnx.export(m, (torch.zeros(2),), 'n.onnx', dynamic_axes={'x': {0: 'b'}})\n",
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        for i in range(x.size(0)):\n            x = x + i\n        return x\n"
        "def main():\n    m = Net().eval()\n"
        "    torch.export.export(m, (torch.zeros(2),), dynamic_shapes={'x': {0: torch.export.Dim('b')}})\n",
    ),
)
