"""A conformance corpus for `lowering.export`, in the manner of test262: one small file per
construct group of the Python language reference (`statements`, `expressions`,
`functions`, `builtins_*`, `static_calls`), each a table of `Entry`s.

An entry is a few lines that compute `r` from an operand `v`. The table-driven test
(`test_conformance.py`) writes each entry into a `forward` in up to four contexts:

- ``static``: `v` is a Python value (`Entry.static`);
- ``tensor``: `v` is a tensor (`Entry.tensor`, None where that makes no sense);
- ``if``: the lines run under a data-dependent `if` (`x.sum() > 0`);
- ``loop``: the lines run inside a data-dependent `while` whose trip count is the data's,
  `r` summed over the iterations.

(`if` and `loop` take the tensor operand where there is one, else the static one.) Every
export is run on onnxruntime and compared with eager PyTorch on inputs that take both
sides of the `if` and run the loop 0, 1, 2, 4 and 7 times; or, for an entry `refused`,
export must raise a `LoweringError` that names the construct (the `refused` pattern),
the generated file and line, and a way out (its hint). `xfail` marks a context that is
wrong today, with the reason; it is strict, so a fix shows.
"""

from __future__ import annotations

import dataclasses

CONTEXTS = ("static", "tensor", "if", "loop")


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str  # the construct, as the language reference names it
    body: str  # lines that set `r` from `v`
    static: str | None = "3"  # the static operand; None: the construct has no static form
    tensor: str | None = "x[0]"  # the tensor operand; None: the construct takes no tensor
    module: str = ""  # module-level lines (helpers, constants, classes)
    refused: str | None = None  # a regex the refusal's message matches (all contexts)
    refused_in: dict = dataclasses.field(default_factory=dict)  # context -> regex, refused there only
    xfail: dict = dataclasses.field(default_factory=dict)  # context -> reason
    contexts: tuple = CONTEXTS
    eager_runs: bool = True  # False: eager cannot run it either (`yield` in forward): refusal only
    group: str = ""  # filled from the file the entry is in

    def operand(self, context: str) -> str:
        if context == "static":
            return self.static
        if context == "tensor":
            return self.tensor
        return self.tensor if self.tensor is not None else self.static

    def applies(self, context: str) -> bool:
        if context not in self.contexts:
            return False
        return self.operand(context) is not None

    def refusal(self, context: str) -> str | None:
        return self.refused_in.get(context, self.refused)


def _indent(text: str, by: int) -> list[str]:
    lines = [ln for ln in text.strip("\n").split("\n")]
    pad = min(len(ln) - len(ln.lstrip()) for ln in lines if ln.strip())
    return [" " * by + ln[pad:] if ln.strip() else "" for ln in lines]


def forward_source(entry: Entry, context: str) -> str:
    """The module holding `class M` whose forward runs `entry` in `context`."""
    head = ["import dataclasses", "import functools", "import math", "import types", "", "import torch", ""]
    if entry.module.strip():
        head += _indent(entry.module, 0) + [""]
    lines = [f"v = {entry.operand(context)}"]
    if context in ("static", "tensor"):
        lines += _indent(entry.body, 0) + ["return x + r"]
    elif context == "if":
        lines += ["r = 0", "if x.sum() > 0:"] + _indent(entry.body, 4) + ["return x + r"]
    else:
        lines += ["acc = x * 0", "trips = x.sum()", "while trips > 0:"] + _indent(entry.body, 4) + [
            "    acc = acc + r", "    trips = trips - 1", "return x + acc"]
    return "\n".join(head + ["", "class M(torch.nn.Module):", "    def forward(self, x):"]
                     + ["        " + ln if ln else "" for ln in lines]) + "\n"


def all_entries() -> list[Entry]:
    from tests.export.conformance import (builtins_containers, builtins_numbers, builtins_objects, builtins_refused,
                                          expressions, functions, statements, static_calls)

    out = []
    for module in (statements, expressions, functions, builtins_numbers, builtins_containers, builtins_objects,
                   builtins_refused, static_calls):
        group = module.__name__.rsplit(".", 1)[-1]
        out += [dataclasses.replace(e, group=group) for e in module.ENTRIES]
    return out


_GROUP_TITLES = {"statements": "statement", "expressions": "expression", "functions": "function",
                 "builtins_numbers": "builtin", "builtins_containers": "builtin", "builtins_objects": "builtin",
                 "builtins_refused": "builtin, never run", "static_calls": "call"}


def refused_list() -> str:
    """The README's list of what `untrace export` refuses: the corpus's entries refused in
    every context they are written in (a test keeps the two the same)."""
    lines = [f"- {e.name} ({_GROUP_TITLES[e.group]})" for e in all_entries()
             if e.refused is not None and not e.xfail]
    return "\n".join(lines) + "\n"
