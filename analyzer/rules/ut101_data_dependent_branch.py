"""UT101 data-dependent-branch."""

from analyzer.analyses.kinds.facts import BranchFact
from analyzer.analyses.kinds.levels import Level
from analyzer.rules.base import Rule
from analyzer.rules.script_advice import script_advice

_SUGGESTION = {
    "assert": "use `torch._check(...)` so the exporter keeps the check, or drop the assert",
    "ifexp": "use `torch.where(cond, a, b)` (both sides are computed) or `torch.cond`",
    "and": "combine tensor conditions with `&` / `torch.logical_and` instead of `and`",
    "or": "combine tensor conditions with `|` / `torch.logical_or` instead of `or`",
    "filter": ("keep a mask instead: stack the items and index with the condition (`torch.stack(items)[keep]`); "
               "`untrace export` lowers the filtered comprehension itself (Compress)"),
}
_DEFAULT = ("rewrite with `torch.where(cond, a, b)` when both branches are cheap, or "
            "`torch.cond(pred, true_fn, false_fn, operands)`; `untrace export` lowers it to an ONNX If")


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if isinstance(fact, BranchFact) and fact.level == Level.DATA and not _counts_iterations(fact):
            what = {"ifexp": "conditional expression", "assert": "assert", "and": "`and`", "or": "`or`",
                    "filter": "comprehension filter"}.get(
                fact.construct, f"`{fact.construct}`")
            message = (f"{what} on tensor values (`{fact.predicate}`): tracing records only the branch the "
                       f"example input takes")
            if fact.exits_loop:  # the loop is UT102; this line is where the fix and a `# noqa` go
                message += "; it ends the loop early, so the trace also fixes how often the loop runs"
            suggestion = _SUGGESTION.get(fact.construct, _DEFAULT)
            if fact.construct in ("if", "elif", "ifexp"):  # scripting keeps these as branches
                suggestion += script_advice(facts, fact)
            if fact.no_fix:
                suggestion += f" (not rewritten automatically: {fact.no_fix})"
            yield RULE.diagnostic(fact.site, message, suggestion, fact.fix)


def _counts_iterations(fact: BranchFact) -> bool:
    """`if steps == self.max_len: break` in a data loop: a Python counter of the loop's
    own iterations, data only because the loop is (its UT102 is the finding). A value of
    its own (`if n == 0: break` over `t.tolist()`) is the branch's finding too."""
    return fact.exits_loop and fact.by_control and fact.type_of("$pred") == "python" and "(" not in fact.predicate


RULE = Rule(
    code="UT101",
    name="data-dependent-branch",
    summary="A Python branch (`if`, ternary, `assert`, `and`/`or`) decided by tensor values.",
    what="Reports `if`/`elif`, conditional expressions, `assert`, and `and`/`or` whose condition is computed "
         "from tensor values, including through helpers and submodules called from `forward`. An `if` that "
         "leaves a loop (`break`/`return`) is reported here and its loop under UT102. "
         "Unsafe fixes (`--fix --unsafe-fixes`): `if`/`else` assigning one name -> `torch.where`; other `if`s "
         "-> `torch.cond` with nested branch functions over the live-in tensors; a ternary -> `torch.where`; "
         "`assert` -> `torch._check(p.item())`; an `if` that returns from the middle of the function (a tensor or a tuple of "
         "tensors on both paths) -> `return torch.cond(...)` (the rest of the function is the other branch; the names it "
         "binds are its locals, and it may call helper methods of the class that only compute their result); "
         "an `elif` chain -> nested `torch.cond`s (first the same "
         "program as `else:` holding an `if`, then one `torch.cond` per pass); Python numbers chosen by a tensor test "
         "(`s = a if p else b`, or an `if`/`else` of plain `n = number` assignments) -> "
         "`torch.sym_ite(p.item(), a, b)`, the same number in eager and a symbolic one under torch.export (refused "
         "for non-numbers and literals of two types); `flag = a and b` of tensors, where `flag` is only tested for "
         "truth -> `torch.logical_and(a, b)`; an `if m.any():` whose branch only writes through the boolean mask `m` "
         "(`out[m] = f(x[m])`, the value reading tensors only through `[m]`) -> the writes alone (a write through an "
         "empty mask writes nothing; the value must be computable on zero rows); a list filtered by a boolean tensor "
         "test (`kept = [f(t) for t in x if p(t)]`, or `kept = []` / `for t in x: if p(t): kept.append(f(t))`) used "
         "only by `torch.stack(kept)` and `len(kept)` -> `torch.stack([f(t) for t in x])[torch.stack([p(t) for t in "
         "x])]` and `kept.shape[0]`, with `torch._check(kept.shape[0] > 0)` where the stack of an empty list "
         "raised (every item is computed: `f` must be free of side effects). When a rewrite cannot be made (side effects, in-place writes, "
         "early returns, non-tensor results, data-dependent shapes) the finding says why.",
    why="`torch.onnx.export(dynamo=False)` evaluates the condition once, on the example input, and records only "
        "that branch: the ONNX graph is silently wrong for inputs that would take the other one. The "
        "torch.export-based exporter stops with a data-dependent control-flow error instead.",
    example="def forward(self, x):\n    if x.sum() > 0:\n        return x * 2\n    return -x",
    use_instead="def forward(self, x):\n    return torch.where(x.sum() > 0, x * 2, -x)",
    detect=detect,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, mask=None):\n"
        "        if mask is not None:\n            x = x * mask\n        if self.training:\n            x = x + 1\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return torch.where(x.sum() > 0, x, -x)\n",
        # parameters and buffers are fixed in the exported model
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(3))\n    def forward(self, x):\n"
        "        if self.scale.sum() > 0:\n            x = x * 2\n        return x\n",
    ),
    fixes=(
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        h = x * 2\n"
            "        if h.sum() > 0:\n            return h, h.mean()\n        h = h - 1\n        return h, h.mean()\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        h = x * 2\n"
            "        def true_fn(h):\n            return h.clone(), h.mean()\n        def false_fn(h):\n"
            "            h = h - 1\n            return h.clone(), h.mean()\n"
            "        return torch.cond(h.sum() > 0, true_fn, false_fn, (h,))\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.mean() > 1:\n"
            "            a, b = x * 2, x + 1\n        elif x.mean() < -1:\n            a, b = -x, x - 1\n"
            "        else:\n            a, b = x, x\n        return a * b\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        def true_fn(x):\n"
            "            a, b = x * 2, x + 1\n            return (a.clone(), b.clone())\n        def false_fn(x):\n"
            "            def true_fn_7(x):\n                a, b = -x, x - 1\n                return (a.clone(), b.clone())\n"
            "            def false_fn_7(x):\n                a, b = x, x\n                return (a.clone(), b.clone())\n"
            "            a, b = torch.cond(x.mean() < -1, true_fn_7, false_fn_7, (x,))\n"
            "            return (a.clone(), b.clone())\n        a, b = torch.cond(x.mean() > 1, true_fn, false_fn, (x,))\n"
            "        return a * b\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        tau = 0.5 if x.mean() > 0 else 2.0\n        return torch.softmax(x / tau, dim=-1)\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        tau = torch.sym_ite((x.mean() > 0).item(), 0.5, 2.0)\n        return torch.softmax(x / tau, dim=-1)\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        usable = x.abs().max() < 5 and x.std() > 0.1\n        scale = 2.0 if usable else 1.0\n"
            "        return x * scale\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        usable = torch.logical_and(x.abs().max() < 5, x.std() > 0.1)\n"
            "        scale = torch.sym_ite(usable.item(), 2.0, 1.0)\n        return x * scale\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.expert = torch.nn.Linear(4, 4)\n"
            "    def forward(self, x: torch.Tensor):\n        out = torch.zeros_like(x)\n"
            "        mask = x.sum(-1) > 0\n        if mask.any():\n            out[mask] = self.expert(x[mask])\n"
            "        return out\n",
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.expert = torch.nn.Linear(4, 4)\n"
            "    def forward(self, x: torch.Tensor):\n        out = torch.zeros_like(x)\n"
            "        mask = x.sum(-1) > 0\n        out[mask] = self.expert(x[mask])\n        return out\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        kept = [t for t in x if t.norm() > 1.0]\n        return torch.stack(kept).mean(0), len(kept)\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        kept = torch.stack([t for t in x.unbind(0)])[torch.stack([t.norm() > 1.0 for t in x.unbind(0)])]\n"
            "        torch._check(kept.shape[0] > 0)\n        return kept.mean(0), kept.shape[0]\n",
        ),
        (
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def forward(self, x):\n'
            '        if x.norm() < 1.0:\n'
            '            return x\n'
            '        d = x - x.mean()\n'
            '        d = d / d.norm()\n'
            '        return x + d\n',
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def forward(self, x):\n'
            '        def true_fn(x):\n'
            '            return x.clone()\n'
            '        def false_fn(x):\n'
            '            d = x - x.mean()\n'
            '            d = d / d.norm()\n'
            '            return x + d\n'
            '        return torch.cond(x.norm() < 1.0, true_fn, false_fn, (x,))\n',
        ),
    ),
    not_fixed=((
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            print(x)\n"
        "            x = -x\n        return x\n",
        "the branch evaluates `print(x)` for its side effects",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        s = 1 if x.mean() > 0 else 0.5\n"
        "        return x * s\n",
        "the sides are numbers of two types",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        ok = x.min() > 0 and x.max() < 9\n"
        "        return ok\n",
        "`ok` is used as more than a truth test",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.norm() < 1.0:\n"
        "            return x\n        d = project(x)\n        return x + d\n",
        "calls `project()`, which untrace cannot prove free of side effects",
    )),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            return x\n        return -x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x if x.mean() > 0 else -x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        assert (x >= 0).all()\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for i in range(3):\n            x = x * 2\n"
        "            if x.sum() > 3:\n                return x\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        kept = [r for r in x.unbind(0) if r.sum() > 0]\n        return torch.stack(kept)\n",
    ),
)
