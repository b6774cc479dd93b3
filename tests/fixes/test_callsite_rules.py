"""The UT4xx export call-site rules: the call-site pass, the rules' own VALID/INVALID
examples, and the export scripts' `# expect:` markers -- all run through
`callsite_harness.wired_facts`, i.e. as `analyze_file` will run once the engine appends
the call-site facts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.fixes.callsites import CallSiteFact, callsite_facts
from analyzer.frontend import parse_module
from analyzer.rules import all_rules

from .callsite_harness import ut4_rules, wired_facts

HERE = Path(__file__).resolve().parent
# Staged here until the engine is wired; then they move to corpora/export_scripts/.
STAGED = HERE / "export_scripts"
SCRIPTS = sorted((STAGED if STAGED.is_dir() else HERE.parents[1] / "corpora" / "export_scripts").glob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*(UT\d{3}(?:\s*,\s*UT\d{3})*)")
RULES = ut4_rules()


def kinds(source: str) -> list[tuple[int, str, str]]:
    return [(f.site.line, f.kind, f.detail) for f in callsite_facts(parse_module(source))]


def test_the_four_rules_are_there():
    assert [r.code for r in RULES] == ["UT401", "UT402", "UT403", "UT404"]
    assert all(r.invalid and r.valid and r.what and r.why and r.example and r.use_instead for r in RULES)


CASES = [(r, "invalid", i, s) for r in RULES for i, s in enumerate(r.invalid)] + [
    (r, "valid", i, s) for r in RULES for i, s in enumerate(r.valid)]


@pytest.mark.parametrize("rule,kind,index,source", CASES, ids=[f"{r.code}-{k}{i}" for r, k, i, _ in CASES])
def test_rule_example(rule, kind, index, source):
    codes = [d.code for d in rule.detect(wired_facts("<string>", source))]
    assert bool(codes) == (kind == "invalid"), source


def expected(path: Path) -> set[tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, c.strip()) for c in m.group(1).split(",")}
    return out


def test_there_are_export_scripts():
    assert len(SCRIPTS) >= 4


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_export_script_markers(path):
    """All rules (the discovered ones and UT4xx), as `check --select ALL corpora/` will
    report them: with the whole corpus as the project, so imported classes resolve."""
    from analyzer.engine import Project

    corpora = HERE.parents[1] / "corpora"
    project = Project(sorted(corpora.rglob("*.py")), [str(HERE.parents[1])])
    facts = wired_facts(str(path), path.read_text(), project)
    got = {(d.line, d.code) for rule in all_rules() + RULES for d in rule.detect(facts)}
    want = expected(path)
    assert sorted(got - want) == [], "reported but not marked"
    assert sorted(want - got) == [], "marked but not reported"


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_export_scripts_parse_strictly(path):
    parse_module(path.read_text(), str(path), strict=True)


# ----------------------------------------------------------------- the pass itself


PRELUDE = "import torch\nclass Net(torch.nn.Module):\n    pass\n"


def test_aliases_of_the_exporters_are_followed():
    src = ("import torch.onnx as tox\nfrom torch.export import export\nfrom torch import onnx\n"
           "class Net(torch.nn.Module):\n    pass\n"
           "m = Net()\ntox.export(m, ())\nexport(m, ())\nonnx.export(m, ())\n")
    assert [k for _, k, _ in kinds(src)] == ["export-without-eval"] * 3


def test_other_exports_are_not_exporters():
    assert kinds(PRELUDE + "def f():\n    m = Net()\n    m.export(m)\n    json.export(m, opset_version=9)\n") == []


def test_mode_through_assignments_and_chains():
    src = PRELUDE + ("def f():\n    a = Net()\n    b = a\n    c = Net().train().to('cpu')\n    d = Net().cuda().eval()\n"
                     "    torch.onnx.export(b, ())\n    torch.onnx.export(c, ())\n    torch.onnx.export(d, ())\n")
    assert [(line, k) for line, k, _ in kinds(src)] == [(9, "export-without-eval"), (10, "export-without-eval")]


def test_unsure_is_quiet():
    src = PRELUDE + ("def f(flag, items):\n"
                     "    m = Net()\n    prepare(m)\n    torch.onnx.export(m, ())\n"  # handed to unknown code
                     "    k = Net()\n    k.train(flag)\n    torch.onnx.export(k, ())\n"  # mode not a literal
                     "    n = Net()\n    for _ in items:\n        n.eval()\n    torch.onnx.export(n, ())\n"  # loop
                     "    p = Net()\n    try:\n        p.eval()\n    except Exception:\n        pass\n"
                     "    torch.onnx.export(p, ())\n")
    assert kinds(src) == []


def test_branch_that_leaves_does_not_reach_the_export():
    src = PRELUDE + ("def f(flag):\n    m = Net()\n    if flag:\n        raise SystemExit\n    else:\n        m.eval()\n"
                     "    torch.onnx.export(m, ())\n")
    assert kinds(src) == []


def test_nested_functions_are_their_own_scope():
    src = PRELUDE + ("def outer():\n    m = Net()\n    def inner():\n        torch.onnx.export(m, ())\n"
                     "    m.eval()\n    return inner\n")
    assert kinds(src) == []
    src = PRELUDE + "class Exporter:\n    def run(self):\n        m = Net()\n        torch.export.export(m, ())\n"
    (fact,) = callsite_facts(parse_module(src))
    assert fact.site.function == "Exporter.run" and fact.module_class == "Net" and fact.class_is_local


def test_keywords():
    src = ("import torch\ndef f(m, x, shapes):\n"
           "    torch.onnx.export(model=m, args=(x,), f='a.onnx', dynamo=False, opset_version=12, dynamic_axes=None)\n"
           "    torch.export.export(mod=m, args=(x,), dynamic_shapes=shapes)\n"
           "    torch.onnx.export(m, (x,), dynamo=True, opset_version=True)\n")
    assert kinds(src) == [(3, "legacy-export", "torch.onnx.export"), (3, "old-opset", "12"),
                          (4, "dynamic-export", "dynamic_shapes")]


def test_facts_are_frozen_and_carry_a_site():
    (fact,) = callsite_facts(parse_module("import torch\ntorch.onnx.export(m, (), opset_version=7)\n", "s.py"))
    assert isinstance(fact, CallSiteFact) and fact.site.path == "s.py" and fact.site.function is None
    with pytest.raises(AttributeError):
        fact.kind = "x"


def test_loading_the_rules_imports_neither_libcst_nor_the_front_end():
    """A warm `untrace check` loads the rules but answers from the cache."""
    import subprocess
    import sys

    names = [f"analyzer.rules.{p.stem}" for p in (HERE.parents[1] / "analyzer" / "rules").glob("*ut4*.py")]
    assert len(names) == 4
    script = "import sys, importlib\n" + "".join(f"importlib.import_module({n!r})\n" for n in names) + (
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'libcst'}), 'analyzer.frontend' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", script], cwd=HERE.parents[1], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "False"]
