"""UT303 onnx-semantics-differ.

Each entry below was measured: eager PyTorch against onnxruntime on the graphs of
torch.onnx's TorchScript exporter (``dynamo=False``), its torch.export-based exporter and
``untrace export`` (torch 2.13, onnxruntime 1.23). Checked and found to agree, so not
listed: ``F.interpolate`` in every mode with and without ``align_corners`` (upsampling and
downsampling, scale and size), ``round`` (both round half to even), ``remainder``/``fmod``
signs, ``div(rounding_mode="floor"/"trunc")``, ``clamp`` with min > max, avg/max pooling
with ``ceil_mode``, ``grid_sample`` padding modes, ``argmax``/``max(dim)`` ties (first
index in both). ``max_unpool`` (ONNX MaxUnpool indexes the whole flattened tensor,
PyTorch each (N, C) plane) is not listed either: no exporter emits it with PyTorch's
indices: the legacy one and untrace refuse, the torch.export-based one decomposes it.
"""

from analyzer.analyses.kinds import op_table
from analyzer.analyses.kinds.facts import OpFact
from analyzer.rules.base import Rule

# op -> (what differs, what to do instead)
_TIE_ORDER = (
    "the order of tied values' indices differs: ONNX `TopK` returns the lower index first, PyTorch's "
    "{name} does not promise an order (measured: indices differ between eager and onnxruntime with all three "
    "exporters)",
    "if the indices matter, break ties explicitly (add a tiny index-dependent term), or use "
    "`torch.sort(..., stable=True)`, which orders ties as ONNX does (`untrace export` lowers it; torch.onnx's "
    "exporters refuse it)",
)
_FLOOR_DIVIDE = (
    "torch.onnx's TorchScript exporter (`dynamo=False`) lowers {name} to ONNX `Div`, which truncates toward "
    "zero: `-7 // 2` gives -3 in ONNX and -4 in PyTorch (integers and floats; the torch.export-based exporter "
    "and untrace are correct)",
    "use `torch.div(a, b, rounding_mode=\"floor\")`, which every exporter lowers correctly, or export without "
    "`dynamo=False`",
)
ENTRIES = {
    "torch.topk": _TIE_ORDER, "Tensor.topk": _TIE_ORDER,
    "torch.sort": _TIE_ORDER, "Tensor.sort": _TIE_ORDER,
    "torch.argsort": _TIE_ORDER, "Tensor.argsort": _TIE_ORDER,
    "torch.msort": _TIE_ORDER, "Tensor.msort": _TIE_ORDER,
    "torch.floor_divide": _FLOOR_DIVIDE, "Tensor.floor_divide": _FLOOR_DIVIDE,
    "operator.floordiv": _FLOOR_DIVIDE,
}
# A stable sort orders ties by index, as ONNX TopK does.
_STABLE_SORTS = frozenset({"torch.sort", "Tensor.sort", "torch.argsort", "Tensor.argsort"})


def detect(facts):
    for fact in facts:
        if not isinstance(fact, OpFact) or fact.op not in ENTRIES:
            continue
        if fact.op in _STABLE_SORTS and dict(fact.keywords).get("stable") is True:
            continue
        what, instead = ENTRIES[fact.op]
        name = f"`{fact.written}`" if fact.op == "operator.floordiv" else f"`{op_table.display_name(fact.op)}`"
        yield RULE.diagnostic(fact.site, what.format(name=name), instead)


RULE = Rule(
    code="UT303",
    name="onnx-semantics-differ",
    summary="An op whose ONNX lowering gives different results from PyTorch on some inputs.",
    what="Reports calls resolved with certainty to PyTorch ops whose exported ONNX graph was measured to "
         "disagree with eager PyTorch on some inputs: `topk`, `sort`, `argsort` and `msort` (the order of tied "
         "values' indices; a sort with `stable=True` is not reported) and `floor_divide` / `//` between tensors "
         "(rounding of negative quotients by the legacy exporter).",
    why="The exported model runs without error and agrees on most inputs, so the difference shows up late, as "
        "a different detection order or an off-by-one index. Off by default: ties and negative quotients are "
        "rare in floating-point activations, so most reported calls are harmless; select it (`--select UT303`) "
        "when you compare exported models bit for bit or feed them integer data.",
    example="def forward(self, scores: torch.Tensor):\n    return scores.argsort(dim=-1)",
    use_instead="def forward(self, scores: torch.Tensor):\n    return torch.argsort(scores, dim=-1, stable=True)",
    detect=detect,
    severity="warning",
    default_enabled=False,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
        "        return torch.sort(x, dim=1, stable=True)\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
        "        return torch.div(x, 2, rounding_mode='floor')\n",
    ),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
        "        return torch.topk(x, 3).indices\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n        return x // 2\n",
    ),
)
