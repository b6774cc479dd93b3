"""UT102 data-dependent-loop."""

from analyzer.analyses.kinds.facts import LoopFact
from analyzer.analyses.kinds.levels import Level
from analyzer.rules.base import Rule
from analyzer.rules.script_advice import script_advice


def detect(facts):
    facts = list(facts)
    for fact in facts:
        if not isinstance(fact, LoopFact):
            continue
        if fact.bound_level == Level.DATA and fact.construct == "comprehension":
            message = (f"comprehension over a tensor sized by tensor values (`{fact.header}`): tracing makes one "
                       f"item per row of the example input")
        elif fact.bound_level == Level.DATA:
            what = "`while` condition" if fact.construct == "while" else "trip count"
            message = f"loop {what} depends on tensor values (`{fact.header}`): tracing unrolls it for the example input"
        elif fact.exit_level == Level.DATA:
            lines = ", ".join(str(n) for n in fact.exit_lines)
            message = (f"loop exits early on tensor values (break/return at line {lines}): tracing unrolls it "
                       f"to the example input's trip count")
        else:
            continue
        suggestion = ("compute every iteration and mask the result (`torch.where`), bound the loop by a constant, "
                      "rewrite it with `torch._higher_order_ops.while_loop(cond_fn, body_fn, carried)`, or "
                      "`untrace export` it (lowered to an ONNX Loop)" + script_advice(facts, fact))
        if fact.no_fix:
            suggestion += f" (not rewritten automatically: {fact.no_fix})"
        yield RULE.diagnostic(fact.site, message, suggestion, fact.fix)


RULE = Rule(
    code="UT102",
    name="data-dependent-loop",
    summary="A loop whose trip count, condition, `break` or early `return` depends on tensor values.",
    what="Reports `while` loops on tensor values, `for` loops over `range(...)` of a tensor-derived count, "
         "and any loop (even `range(const)` or a `ModuleList`) that leaves early through a `break` or "
         "`return` under a tensor-valued condition. "
         "Unsafe fixes (`--fix --unsafe-fixes`): a `while` on a tensor, or a `for` over `range(...)` with one "
         "`if ...: break` opening or closing its body -> `torch._higher_order_ops.while_loop`, carrying the names the "
         "body assigns that are live at the loop head or after it (each a tensor before the loop, of one shape); a "
         "loop of fixed length (a `ModuleList`, `range(const)`) with one `if ...: return v` closing its body and the "
         "function's `return w` after it -> every iteration runs and `torch.where` keeps the first `v` whose test "
         "held; such a loop with one `if ...: break` -> every iteration runs, each carried value keeps what it had "
         "once the test held, and a list it grows, stacked after it, is cut to the iterations that ran; a `for` over "
         "`range(n)`, `n` from tensor values, whose body calls `self.layers[i]` of a `ModuleList` (which bounds `n`) "
         "-> every iteration up to `len(self.layers)` runs, each carried value kept with `torch.where(i < n, ...)`, "
         "and `torch._check(n <= len(self.layers))` where the original raised `IndexError`; a `while` whose body opens with "
         "`if steps == BOUND: break` and closes with `steps += 1` (`steps` from an int literal, `BOUND` static) -> "
         "`for steps in range(start, BOUND)` breaking on the condition kept a tensor (`x.item() != c` becomes "
         "`x.double() != c`), which the masked-break fix then takes; the lists such a loop grows may be stacked or "
         "concatenated (`torch.cat(...).narrow(...)` to the items the original kept); a `break` test `r.item() < c` "
         "is kept a tensor as `r.double() < c` (the same truth value: Python compares in double); the body may call a "
         "helper method of the class that only computes its result; a value the loop first assigns (unbound before it) "
         "takes its first value from the first iteration, run before the `while_loop` (a `range` loop that does not read "
         "its variable, with `torch._check` that it runs at least once where that is not a literal); a `for` over "
         "`range(n)`, `n` from tensor values, that grows a list and indexes one axis of a tensor by its variable "
         "(`x[:, t]`, which bounds `n`) -> every iteration up to `x.size(1)` runs, masked as above, the stacked list "
         "cut to the first `n` items (`.narrow`), with `torch._check` where the original raised. Refused, with the reason and the hand-written form: lists grown in the loop, Python counters, the loop "
         "variable used in arithmetic, side effects, `continue`.",
    why="The tracer runs the loop once and records the iterations the example input took: the ONNX graph "
        "always runs exactly that many, whatever the input.",
    example="def forward(self, x):\n    while x.norm() > 1:\n        x = x / 2\n    return x",
    use_instead="def forward(self, x):\n    for _ in range(MAX_STEPS):\n        x = torch.where(x.norm() > 1, x / 2, x)\n    return x",
    detect=detect,
    valid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n"
        "        for i in range(3):\n            x = x + i\n        return x\n",
    ),
    fixes=(
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for _ in range(10):\n"
            "            x = x * 0.5\n            if x.abs().max() < 1e-3:\n                break\n        return x\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        def loop_cond(_, broke, x):\n"
            "            return torch.logical_and(_ < 10, torch.logical_not(broke))\n"
            "        def loop_body(_, broke, x):\n            x = x * 0.5\n            broke = x.abs().max() < 1e-3\n"
            "            return _ + 1, broke, x\n        _, _, x = torch._higher_order_ops.while_loop(loop_cond, "
            "loop_body, (torch.tensor(0), torch.tensor(False), x.clone()))\n        return x\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        while x.norm() > 1:\n"
            "            x = x / 2\n        return x\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        def loop_cond(x):\n"
            "            return x.norm() > 1\n        def loop_body(x):\n            x = x / 2\n            return x,\n"
            "        x, = torch._higher_order_ops.while_loop(loop_cond, loop_body, (x.clone(),))\n        return x\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for layer in self.layers:\n"
            "            x = layer(x)\n            if x.abs().max() > 10:\n                return x\n        return -x\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        exit_value, exited = None, None\n"
            "        for layer in self.layers:\n            x = layer(x)\n            if exit_value is None:\n"
            "                exit_value, exited = x, x.abs().max() > 10\n            else:\n"
            "                exit_value = torch.where(exited, exit_value, x)\n"
            "                exited = torch.logical_or(exited, x.abs().max() > 10)\n"
            "        return -x if exit_value is None else torch.where(exited, exit_value, -x)\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        outs = []\n"
            "        for _ in range(8):\n            x = x * 0.5\n            outs.append(x)\n"
            "            if x.abs().max() < 1e-3:\n                break\n        return torch.stack(outs)\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        outs = []\n"
            "        stopped, kept = torch.tensor(False), torch.tensor(0)\n        for _ in range(8):\n"
            "            x = torch.where(stopped, x, x * 0.5)\n            outs.append(x)\n"
            "            kept = kept + torch.logical_not(stopped).long()\n"
            "            stopped = torch.logical_or(stopped, x.abs().max() < 1e-3)\n"
            "        return torch.stack(outs).narrow(0, 0, kept.item())\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])\n"
            "    def forward(self, x):\n        for i in range(int(x.mean().abs() * 3)):\n"
            "            x = x + self.layers[i](x)\n        return x\n",
            "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])\n"
            "    def forward(self, x):\n"
            "        loop_stop = torch.scalar_tensor(torch.sym_int((x.mean().abs() * 3).item()), dtype=torch.long)\n"
            "        torch._check((loop_stop <= len(self.layers)).item())\n        for i in range(len(self.layers)):\n"
            "            x = torch.where(i < loop_stop, x + self.layers[i](x), x)\n        return x\n",
        ),
        (
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        steps = 0\n"
            "        while x.max().item() > 1.0:\n            if steps == 8:\n                break\n"
            "            x = x * 0.5\n            steps += 1\n        return x\n",
            "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        steps = 0\n"
            "        def loop_cond(steps, x):\n            return torch.logical_and(steps < 8, "
            "torch.logical_not(torch.logical_not(x.max().double() > 1.0)))\n"
            "        def loop_body(steps, x):\n            x = x * 0.5\n            return steps + 1, x\n"
            "        _, x = torch._higher_order_ops.while_loop(loop_cond, loop_body, (torch.tensor(0), x.clone()))\n"
            "        return x\n",
        ),
        (
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def _step(self, x):\n'
            '        return x * 0.5\n'
            '    def forward(self, x):\n'
            '        for _ in range(10):\n'
            '            x = self._step(x)\n'
            '            if x.abs().max().item() < 1e-3:\n'
            '                break\n'
            '        return x\n',
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def _step(self, x):\n'
            '        return x * 0.5\n'
            '    def forward(self, x):\n'
            '        def loop_cond(_, broke, x):\n'
            '            return torch.logical_and(_ < 10, torch.logical_not(broke))\n'
            '        def loop_body(_, broke, x):\n'
            '            x = self._step(x)\n'
            '            broke = x.abs().max().double() < 1e-3\n'
            '            return _ + 1, broke, x\n'
            '        _, _, x = torch._higher_order_ops.while_loop(loop_cond, loop_body, (torch.tensor(0), torch.tensor(False), x.clone()))\n'
            '        return x\n',
        ),
        (
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def forward(self, x, lengths):\n'
            '        h = x[:, 0] * 0\n'
            '        outs = []\n'
            '        for t in range(int(lengths.max())):\n'
            '            h = h + x[:, t]\n'
            '            outs.append(h)\n'
            '        return torch.stack(outs, dim=1)\n',
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def forward(self, x, lengths):\n'
            '        h = x[:, 0] * 0\n'
            '        outs = []\n'
            '        loop_stop = torch.scalar_tensor(torch.sym_int(lengths.max().item()), dtype=torch.long)\n'
            '        torch._check((loop_stop <= x.size(1)).item())\n'
            '        torch._check((loop_stop > 0).item())\n'
            '        for t in range(x.size(1)):\n'
            '            h = torch.where(t < loop_stop, h + x[:, t], h)\n'
            '            outs.append(h)\n'
            '        return torch.stack(outs, dim=1).narrow(1, 0, loop_stop.clamp(min=0).item())\n',
        ),
        (
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def forward(self, x):\n'
            '        for _ in range(10):\n'
            '            x = x * 0.5\n'
            '            y = x.tanh()\n'
            '            if y.abs().max() < 1e-3:\n'
            '                break\n'
            '        return y\n',
            'import torch\n'
            'class M(torch.nn.Module):\n'
            '    def forward(self, x):\n'
            '        x = x * 0.5\n'
            '        y = x.tanh()\n'
            '        broke = y.abs().max() < 1e-3\n'
            '        def loop_cond(_, broke, x, y):\n'
            '            return torch.logical_and(_ < 10, torch.logical_not(broke))\n'
            '        def loop_body(_, broke, x, y):\n'
            '            x = x * 0.5\n'
            '            y = x.tanh()\n'
            '            broke = y.abs().max() < 1e-3\n'
            '            return _ + 1, broke, x, y\n'
            '        _, _, x, y = torch._higher_order_ops.while_loop(loop_cond, loop_body, (torch.tensor(0 + 1), broke, x.clone(), y.clone()))\n'
            '        return y\n',
        ),
    ),
    not_fixed=((
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])\n"
        "    def forward(self, x):\n        for i in range(int(x.sum())):\n"
        "            x = self.layers[i](x) * i\n        return x\n",
        "the loop variable `i` is used other than as the index of `self.layers`",
    ), (
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        outs = []\n"
        "        while x.abs().max() > 1e-3:\n            x = x * 0.5\n            outs.append(x)\n"
        "        return torch.stack(outs)\n",
        "the loop grows the list `outs` (while_loop carries tensors of one shape); by hand: write each item into a "
        "preallocated tensor of the largest trip count",
    ), (
        'import torch\n'
        'class M(torch.nn.Module):\n'
        '    def forward(self, x, lengths):\n'
        '        h = x[:, 0] * 0\n'
        '        outs = []\n'
        '        for t in range(int(lengths.max())):\n'
        '            h = h + x[:, t] * t\n'
        '            outs.append(h)\n'
        '        return torch.stack(outs, dim=1)\n',
        "nor unrolled up to the axis it indexes: the loop variable `t` is used other than as the index of `x` or in a comparison",
    ), (
        'import torch\n'
        'class M(torch.nn.Module):\n'
        '    def forward(self, x):\n'
        '        for i in range(10):\n'
        '            x = x * 0.5\n'
        '            y = x.tanh() + i\n'
        '            if y.abs().max() < 1e-3:\n'
        '                break\n'
        '        return y\n',
        "`y` may be undefined before the loop (while_loop needs its first value): the body reads the loop variable `i`",
    ),),
    invalid=(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        while x.norm() > 1:\n            x = x / 2\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for i in range(10):\n            x = x * 0.5\n"
        "            if x.abs().max() < 1e-3:\n                break\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        n = int(x.sum())\n        for i in range(n):\n            x = x + 1\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        for e in torch.nonzero(x):\n"
        "            x = x + e.sum()\n        return x\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, sizes):\n"
        "        for p in torch.split(x, sizes.tolist()):\n            x = x + p.sum()\n        return x\n",
        'import torch\n'
        'class M(torch.nn.Module):\n'
        '    def _step(self, x):\n'
        '        return x * 0.5\n'
        '    def forward(self, x):\n'
        '        for _ in range(10):\n'
        '            x = self._step(x)\n'
        '            if x.abs().max().item() < 1e-3:\n'
        '                break\n'
        '        return x\n',
        'import torch\n'
        'class M(torch.nn.Module):\n'
        '    def forward(self, x, lengths):\n'
        '        h = x[:, 0] * 0\n'
        '        outs = []\n'
        '        for t in range(int(lengths.max())):\n'
        '            h = h + x[:, t]\n'
        '            outs.append(h)\n'
        '        return torch.stack(outs, dim=1)\n',
        'import torch\n'
        'class M(torch.nn.Module):\n'
        '    def forward(self, x):\n'
        '        for _ in range(10):\n'
        '            x = x * 0.5\n'
        '            y = x.tanh()\n'
        '            if y.abs().max() < 1e-3:\n'
        '                break\n'
        '        return y\n',
    ),
)
