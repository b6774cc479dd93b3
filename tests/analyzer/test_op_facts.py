"""Which calls become `OpFact`s: only those resolved to PyTorch with certainty, and only
those an eval-mode export runs."""

from analyzer.analyses.kinds.facts import OpFact
from analyzer.engine import analyze_file


def ops(source: str) -> list[tuple[int, str]]:
    facts, _ = analyze_file("<string>", "import torch\nimport torch.nn.functional as F\n" + source)
    ops = sorted((f for f in facts if isinstance(f, OpFact)), key=lambda f: (f.site.line, f.site.column))
    return [(f.site.line - 2, f.op) for f in ops]


def test_functions_methods_modules_and_floordiv():
    src = ("class M(torch.nn.Module):\n"
           "    def __init__(self):\n        super().__init__()\n        self.pool = torch.nn.MaxPool2d(2)\n"
           "    def forward(self, x: torch.Tensor):\n"
           "        y = F.relu(self.pool(x))\n"
           "        return y.sort(dim=1), y // 2\n")
    assert ops(src) == [(6, "torch.nn.functional.relu"), (6, "torch.nn.MaxPool2d"), (7, "Tensor.sort"),
                        (7, "operator.floordiv")]


def test_methods_of_assumed_tensors_are_not_ops():
    src = "class M(torch.nn.Module):\n    def forward(self, x):\n        return x.sort(dim=1), x // 2\n"
    assert ops(src) == []


def test_training_only_code_is_not_exported():
    src = ("class M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
           "        if self.training:\n            x = x + torch.rand(x.shape)\n"
           "        if not self.training:\n            x = torch.tanh(x)\n        else:\n            x = self.noise(x)\n"
           "        return torch.sigmoid(x)\n"
           "    def noise(self, x):\n        return torch.randn_like(x)\n")
    assert ops(src) == [(6, "torch.tanh"), (9, "torch.sigmoid")]


def test_code_for_non_tensors_quantized_or_scripting_is_not_exported():
    src = ("class M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
           "        if not isinstance(x, torch.Tensor):\n            x = torch.rand(3)\n"
           "        if x.is_quantized:\n            x = x.dequantize()\n"
           "        if torch.jit.is_scripting():\n            x = torch.randn_like(x)\n"
           "        return torch.sigmoid(x)\n")
    assert ops(src) == [(9, "torch.sigmoid")]


def test_code_after_an_eval_mode_early_return_is_not_exported():
    src = ("class M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
           "        if not self.training or self.p == 0:\n            return torch.tanh(x)\n"
           "        return x * torch.rand(x.shape)\n")
    assert ops(src) == [(4, "torch.tanh")]


def test_calls_chained_from_one_start_are_each_an_op():
    """`x.argsort().argsort()`: two calls that start where `x` does, two ops."""
    src = ("class M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
           "        return x.argsort(dim=0).argsort(dim=0)\n")
    assert ops(src) == [(3, "Tensor.argsort"), (3, "Tensor.argsort")]
