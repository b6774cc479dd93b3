"""The scriptability check against `torch.jit.script` itself: for each snippet, the
check names a construct exactly when scripting really fails (and the one it names is
what TorchScript complains about), and stays silent when scripting succeeds."""

from __future__ import annotations

import importlib.util
import textwrap
import warnings

import pytest

from analyzer.analyses.kinds.analysis import KindAnalyzer
from analyzer.analyses.kinds.facts import ScriptabilityFact
from analyzer.analyses.project.index import ClassKey, Project
from analyzer.analyses.reach.scriptability import first_rejection
from analyzer.engine import analyze_file
from analyzer.frontend import parse_module

HEADER = """\
import torch
import numpy as np
from typing import List, Optional


def helper(x, *rest):
    return x


def plain_helper(x):
    return x + 1


class Block(torch.nn.Module):
    def forward(self, x, **options):
        return x


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Identity(), torch.nn.Identity()])
        self.w = torch.nn.Parameter(torch.zeros(1))
"""

# name -> (methods of M, construct the check names or None)
CASES = {
    "plain": ("def forward(self, x):\n    return torch.relu(x) + self.w", None),
    "varargs": ("def forward(self, *xs):\n    return xs[0]", "*xs"),
    "kwargs": ("def forward(self, x, **kw):\n    return x", "**kw"),
    "kwonly_default": ("def forward(self, x, *, y: int = 1):\n    return x", "keyword-only"),
    "comprehension_filter": ("def forward(self, x):\n    ys = [x * i for i in range(3) if i > 0]\n    return ys[0]",
                             "comprehension filter"),
    "comprehension": ("def forward(self, x):\n    ys = [x * i for i in range(3)]\n    return ys[0]", None),
    "generator": ("def forward(self, x):\n    return sum(x * i for i in range(3))", "generator"),
    "try": ("def forward(self, x):\n    try:\n        y = x + 1\n    except Exception:\n        y = x\n    return y",
            "try"),
    "for_else": ("def forward(self, x):\n    for i in range(3):\n        x = x + 1\n    else:\n        x = x * 2\n"
                 "    return x", "for/else"),
    "while_else": ("def forward(self, x):\n    i = 0\n    while i < 3:\n        i += 1\n    else:\n        x = x * 2\n"
                   "    return x", "while/else"),
    "none_default": ("def forward(self, x, mask=None):\n    if mask is not None:\n        x = x * mask\n    return x",
                     None),
    "int_default": ("def forward(self, x, k=2):\n    return x * k", "un-annotated non-tensor argument `k=2`"),
    "annotated_default": ("def forward(self, x: torch.Tensor, k: int = 2):\n    return x * k", None),
    "lambda": ("def forward(self, x):\n    f = lambda t: t + 1\n    return f(x)", "lambda"),
    "nested_def": ("def forward(self, x):\n    def f(t):\n        return t + 1\n    return f(x)", "nested function"),
    "set_literal": ("def forward(self, x):\n    s = {1, 2}\n    return x", "set literal"),
    "import": ("def forward(self, x):\n    import math\n    return x", "import"),
    "walrus": ("def forward(self, x):\n    if (n := x.dim()) > 1:\n        return x\n    return x", ":="),
    "getattr_computed": ("def forward(self, x):\n    name = 'w'\n    return getattr(self, name)", "getattr"),
    "kwargs_expansion": ("def forward(self, x):\n    d = {'dim': 0}\n    return x.sum(**d)", "**"),
    "dict_expansion": ("def forward(self, x):\n    d = {'a': x}\n    e = {**d}\n    return e['a']", "{**d}"),
    "starred_target": ("def forward(self, x):\n    a, *b = [x, x, x]\n    return a", "starred assignment"),
    "numpy": ("def forward(self, x):\n    return torch.from_numpy(np.zeros(3))", "NumPy"),
    "modulelist_variable": ("def forward(self, x):\n    for i in range(2):\n        x = self.layers[i](x)\n    return x",
                            "module list"),
    "modulelist_literal": ("def forward(self, x):\n    return self.layers[-1](self.layers[0](x))", None),
    "modulelist_loop": ("def forward(self, x):\n    for layer in self.layers:\n        x = layer(x)\n    return x", None),
    "called_method": ("def forward(self, x):\n    return self.scale(x)\ndef scale(self, x, *more):\n    return x",
                      "*more"),
    "uncalled_method": ("def forward(self, x):\n    return x\ndef scale(self, x, *more):\n    return x", None),
    "ignored_method": ("def forward(self, x):\n    return self.debug(x)\n@torch.jit.ignore\n"
                       "def debug(self, x):\n    return [y for y in [x] if y is not None][0]", None),
    "called_helper": ("def forward(self, x):\n    return helper(x)", "*rest"),
    "plain_called_helper": ("def forward(self, x):\n    return plain_helper(x)", None),
    "super_call": ("def forward(self, x):\n    return super().forward(x)", "super()"),
    "submodule": ("def forward(self, x):\n    return self.block(x)\n", "**options"),
}


def build_source(methods: str, with_block: bool) -> str:
    init_extra = "        self.block = Block()\n" if with_block else ""
    return HEADER + init_extra + textwrap.indent(methods, "    ") + "\n"


def check(source: str, tmp_path) -> tuple | None:
    path = tmp_path / "model.py"
    path.write_text(source)
    project = Project([path])
    analyzer = KindAnalyzer(project)
    return first_rejection(analyzer, ClassKey(str(path), "M"))


def scripts(source: str, tmp_path) -> str | None:
    """None when torch.jit.script accepts M, else its error."""
    import torch

    path = tmp_path / "model.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"scripted_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.jit.script(module.M())
    except Exception as error:  # noqa: BLE001 - any rejection
        return str(error)
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_torch_jit_script(name, tmp_path):
    methods, construct = CASES[name]
    source = build_source(methods, with_block=name == "submodule")
    found = check(source, tmp_path)
    error = scripts(source, tmp_path)
    if construct is None:
        assert found is None, found
        assert error is None, error
    else:
        assert found is not None and construct in found[0], found
        assert error is not None, "torch.jit.script accepted it"
        in_header = name in ("called_helper", "submodule")  # the construct is in `helper` / `Block`
        assert found[1].endswith("model.py") and (found[2] <= HEADER.count("\n")) == in_header


def test_the_engine_reports_it_for_hazardous_classes_only():
    source = ("import torch\nclass Gate(torch.nn.Module):\n    def forward(self, x, **kw):\n"
              "        if x.sum() > 0:\n            return x\n        return -x\n"
              "class Plain(torch.nn.Module):\n    def forward(self, x, **kw):\n        return x\n")
    facts, _ = analyze_file("<string>", source)
    verdicts = [f for f in facts if isinstance(f, ScriptabilityFact)]
    assert [(v.cls, v.reason, v.where) for v in verdicts] == [("Gate", "**kw", "<string>:3")]


def test_suggestions_propose_scripting_only_when_it_can_work():
    from analyzer import check_source

    scriptable = ("import torch\nclass Gate(torch.nn.Module):\n    def forward(self, x):\n"
                  "        if x.sum() > 0:\n            return x\n        return -x\n")
    rejected = scriptable.replace("def forward(self, x):", "def forward(self, x, **kw):")
    (ok,) = check_source(scriptable, select=["UT101"])
    assert "script `Gate` with `torch.jit.script`" in ok.suggestion
    (no,) = check_source(rejected, select=["UT101"])
    assert "`torch.jit.script` would reject `Gate`: **kw at <stdin>:3" in no.suggestion


def test_parses_every_snippet():
    for methods, _ in CASES.values():
        parse_module(build_source(methods, True), "model.py", strict=True)
