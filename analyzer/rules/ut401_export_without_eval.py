"""UT401 export-without-eval.

Not discovered until `analyzer/engine.py` appends `callsite_facts` (rename to
`ut401_export_without_eval.py` then).
"""

from analyzer.fixes.callsite_fact import CallSiteFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, CallSiteFact) and fact.kind == "export-without-eval" and (
                fact.own_mode_matters or not fact.own_flag):
            yield RULE.diagnostic(
                fact.site,
                f"`{fact.detail}` is exported while still in training mode on some path to this call: dropout "
                "and batch-norm statistics are exported as in training, and the graph differs from inference",
                f"call `{fact.detail}.eval()` before exporting (on every path), or build it with "
                "`Cls(...).eval()`",
            )


RULE = Rule(
    code="UT401",
    name="export-without-eval",
    summary="An exporter is called on a module that was not put in eval mode first.",
    what="Reports `torch.onnx.export(m, ...)` and `torch.export.export(m, ...)` where `m` was built in the same "
         "function or script (`m = Net(...)`) and not put in eval mode (`m.eval()`, `m.train(False)`, "
         "`Net(...).eval()`) on every path that reaches the call. A module received from elsewhere (a parameter, "
         "a loader's result) is not reported, and neither is a module built here whose own training flag changes "
         "nothing: one that builds no submodule of its own, never reads `self.training`, and is handed no module "
         "in training mode (`Wrapper(model)`: `Cls(...)` puts only the new module and what its `__init__` builds "
         "in training mode; only `.train()` switches the children).",
    why="A freshly built `nn.Module` is in training mode. Exported that way, dropout stays active (or is "
        "dropped in a way that differs from inference) and batch norm uses or updates batch statistics, so "
        "the ONNX model does not compute what the eval-mode model computes; `self.training` branches take "
        "their training side too.",
    example="model = Net()\nmodel.load_state_dict(torch.load(path, weights_only=True))\n"
            "torch.onnx.export(model, (x,), \"net.onnx\")",
    use_instead="model = Net()\nmodel.load_state_dict(torch.load(path, weights_only=True))\nmodel.eval()\n"
                "torch.onnx.export(model, (x,), \"net.onnx\")",
    detect=detect,
    valid=(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def main():\n    m = Net()\n    m.eval()\n    torch.onnx.export(m, (torch.zeros(1),), 'n.onnx')\n",
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def main(debug):\n    m = Net().eval()\n    if debug:\n        m = Net().train(False)\n"
        "    torch.export.export(m, (torch.zeros(1),))\n",
        "import torch\ndef export(m, x):\n    torch.onnx.export(m, (x,), 'n.onnx')\n",
        # a wrapper with no submodule of its own: the wrapped model keeps its own mode
        "import torch\nclass Wrapper(torch.nn.Module):\n    def __init__(self, model):\n        super().__init__()\n"
        "        self.model = model\n    def forward(self, x):\n        return self.model(x) * 2\n"
        "def main(model):\n    torch.export.export(Wrapper(model), (torch.zeros(1),))\n",
    ),
    invalid=(
        "import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.drop = torch.nn.Dropout(0.1)\n    def forward(self, x):\n        return self.drop(x)\n"
        "def main():\n    m = Net()\n    torch.onnx.export(m, (torch.zeros(1),), 'n.onnx')\n",
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x if self.training else x * 2\n"
        "def main(fast):\n    m = Net()\n    if fast:\n        m.eval()\n    torch.export.export(m, (torch.zeros(1),))\n",
        # `.train()` switches the wrapped model too
        "import torch\nclass Wrapper(torch.nn.Module):\n    def __init__(self, model):\n        super().__init__()\n"
        "        self.model = model\n    def forward(self, x):\n        return self.model(x) * 2\n"
        "def main(model):\n    w = Wrapper(model).train()\n    torch.export.export(w, (torch.zeros(1),))\n",
    ),
)
