"""UT201 tensor-to-python."""

from analyzer.analyses.kinds.facts import EscapeFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, EscapeFact) and fact.target == "python":
            message = (f"tensor value leaves the graph (`{fact.expression}`): the trace records it as a constant "
                       f"from the example input")
            suggestion = "keep the value as a tensor (0-d tensors work in arithmetic and `torch.where`)"
            if fact.how in ("int", "float"):
                suggestion += (f"; where a Python number is needed (a size, a slice bound), "
                               f"`torch.sym_{fact.how}(t.item())` keeps it symbolic under torch.export")
            if fact.no_fix:
                suggestion += f" (not rewritten automatically: {fact.no_fix})"
            yield RULE.diagnostic(fact.site, message, suggestion, fact.fix)


RULE = Rule(
    code="UT201",
    name="tensor-to-python",
    summary="A tensor turned into a Python number or list (`.item()`, `.tolist()`, `int(t)`, `float(t)`, `bool(t)`).",
    what="Reports `.item()`, `.tolist()`, `int()`, `float()`, `bool()`, `not t` and `math.*` applied to tensors. "
         "An `.item()` that only feeds a runtime check (`torch._check(p.item())`, what `--fix` writes for a tensor "
         "`assert`) is not reported: it is used in no computation. "
         "Unsafe fixes (`--fix --unsafe-fixes`): `int(t)` / `float(t)` -> `torch.sym_int(t.item())` / "
         "`torch.sym_float(...)`; `flag = bool(t)` only tested for truth -> `flag = t`; `a, b = t.tolist()` -> "
         "`a, b = [v.tolist() for v in t.unbind(0)]` (the same items, one symbolic number each); `n = t.item()` "
         "compared by the builtin `max(n, c)` / `min(n, c)` -> `torch.sym_max` / `torch.sym_min` (the same number; "
         "a float when a float is among the arguments); `int(t.item())` / `float(t.item())` -> `torch.sym_int(t.item())` / "
         "`torch.sym_float(...)` (the builtin itself on a Python number); `v = t.item()` / `float(t)` / `int(t)` read "
         "only as one side of a comparison that an `if` / `while` / `assert` tests -> `v = t.double()` / "
         "`t.double()` / `t.long().double()` (the same number, compared in double), so the test becomes a tensor "
         "test that the UT101/UT102 fixes rewrite next.",
    why="A Python number is invisible to the tracer: whatever it feeds is frozen to the example input's value.",
    example="def forward(self, x):\n    scale = x.abs().max().item()\n    return x / scale",
    use_instead="def forward(self, x):\n    return x / x.abs().max()",
    detect=detect,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x / x.abs().max()\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        torch._check((x > 0).all().item(), lambda: 'positive')\n        return x.log()\n",
    ),
    fixes=((
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, lengths):\n        n = int(lengths.max())\n"
        "        return x[:, :n]\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, lengths):\n"
        "        n = torch.sym_int(lengths.max().item())\n        return x[:, :n]\n",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        lo, hi = torch.stack([x.min(), x.max()]).tolist()\n        return (x - lo) / (hi - lo)\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        lo, hi = [v.tolist() for v in torch.stack([x.min(), x.max()]).unbind(0)]\n"
        "        return (x - lo) / (hi - lo)\n",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        amax = x.abs().max().item()\n"
        "        return x / max(amax, 1e-8)\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        amax = x.abs().max().item()\n"
        "        return x / torch.sym_max(amax, 1e-8)\n",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, mask):\n"
        "        n = int(mask.sum(dim=1).max().item())\n        return x[:, :n]\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, mask):\n"
        "        n = torch.sym_int(mask.sum(dim=1).max().item())\n        return x[:, :n]\n",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        peak = x.abs().max().item()\n"
        "        if peak > 1.0:\n            x = x / 2\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        peak = x.abs().max().double()\n"
        "        def true_fn(x):\n            x = x / 2\n            return x\n        def false_fn(x):\n"
        "            return x.clone()\n        x = torch.cond(peak > 1.0, true_fn, false_fn, (x,))\n        return x\n",
    )),
    not_fixed=((
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        sizes = x.long().tolist()\n"
        "        return torch.split(x, sizes)\n",
        "a list of sizes has no symbolic form; keep the sizes a tensor, or check each with "
        "`torch._check_is_size(s)` and their sum against the length by hand",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        peak = x.abs().max().item()\n"
        "        if peak > 1.0:\n            x = x / peak\n        return x\n",
        "a number read only by comparisons that `if`/`while` tests make is kept a tensor, this one has another use",
    )),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        s = x.abs().max().item()\n        return x / s\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        n = int(x.sum())\n        return x * n\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        torch._check(x.sum().item() + 1 > 0)\n        return x\n",
    ),
)
