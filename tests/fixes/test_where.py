"""`analyzer.fixes.where`: `if pred: y = A / else: y = B` -> `y = torch.where(pred, A, B)`.

Proven on small models: the rewritten source parses, UT101 no longer fires there, and
eager outputs are identical before and after on inputs that take both branches."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer.engine import analyze_file
from analyzer.fixes.where import rewrite_where, side_effect_free, where_lines
from analyzer.frontend import parse_module
from analyzer.rules import rule_by_code

GATED = textwrap.dedent("""\
    import torch
    from torch import nn


    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.scale = 0.5

        def forward(self, x):
            h = self.proj(x)
            if h.mean() > 0:
                y = h * self.scale + x
            else:
                y = torch.tanh(h) - x
            return y * 2
    """)

CLAMPED = textwrap.dedent("""\
    import torch
    from torch import nn


    class Clamped(nn.Module):
        def forward(self, x, t):
            if (x.amax() > t).all():
                out = torch.clamp(x, max=1.0) / t
            else:
                out = x
            return out + 1
    """)


def ut101_lines(path: str, source: str) -> list[int]:
    facts, _ = analyze_file(path, source)
    return sorted(d.line for d in rule_by_code("UT101").detect(facts))


def build(source: str, name: str):
    namespace: dict = {}
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - our own test model
    torch.manual_seed(0)
    return namespace[name]().eval()


def both_ways(source: str, name: str, inputs: list[tuple]) -> None:
    facts, _ = analyze_file("m.py", source)
    lines = where_lines(facts, "m.py")
    assert lines, "the model has a UT101 `if` to rewrite"
    result = rewrite_where(source, lines)
    assert result.rewritten == lines and not result.skipped, result.skipped
    parse_module(result.source, strict=True)  # parses, and the front end models all of it
    assert "torch.where(" in result.source and ut101_lines("m.py", result.source) == []

    before, after = build(source, name), build(result.source, name)
    after.load_state_dict(before.state_dict())
    with torch.no_grad():
        for args in inputs:
            torch.testing.assert_close(after(*args), before(*args), rtol=0, atol=0)


def test_gated_model_same_outputs_on_both_branches():
    model = build(GATED, "Gated")
    # inputs on both sides of the predicate, found deterministically
    gen = torch.Generator().manual_seed(1)
    sides = {}
    with torch.no_grad():
        for _ in range(200):
            x = torch.randn(3, 4, generator=gen) * 3
            sides.setdefault(bool(model.proj(x).mean() > 0), x)
            if len(sides) == 2:
                break
    assert set(sides) == {True, False}
    x_pos, x_neg = sides[True], sides[False]
    both_ways(GATED, "Gated", [(x_pos,), (x_neg,)])


def test_clamped_model_with_keyword_call_same_outputs_on_both_branches():
    x = torch.linspace(-2, 2, 12).reshape(3, 4)
    assert bool(x.amax() > 1.0) and not bool(x.amax() > 5.0)  # one input per branch
    both_ways(CLAMPED, "Clamped", [(x, torch.tensor(1.0)), (x, torch.tensor(5.0))])


@pytest.mark.parametrize("body,why", [
    ("    if x.sum() > 0:\n        y = x\n", "no plain `else`"),
    ("    if x.sum() > 0:\n        y = x\n    else:\n        z = x\n", "different names"),
    ("    if x.sum() > 0:\n        y = x\n        y = y + 1\n    else:\n        y = x\n", "exactly one assignment"),
    ("    if x.sum() > 0:\n        y = x[0]\n    else:\n        y = x\n", "side effects or raise"),
    ("    if x.sum() > 0:\n        y = torch.randn(3)\n    else:\n        y = x\n", "side effects or raise"),
    ("    if x.sum() > 0:\n        y = x.add_(1)\n    else:\n        y = x\n", "side effects or raise"),
    ("    if x.sum() > 0:\n        y = helper(x)\n    else:\n        y = x\n", "side effects or raise"),
    ("    if x.sum() > 0:\n        y = x  # keep\n    else:\n        y = -x\n", "comments"),
])
def test_unsafe_shapes_are_left_alone_with_a_reason(body, why):
    source = "import torch\ndef f(x):\n" + body + "    return y\n"
    result = rewrite_where(source, [3])
    assert result.source == source and result.rewritten == []
    assert why in result.skipped[3]


def test_without_import_torch_nothing_is_rewritten():
    source = "from torch import where\ndef f(x):\n    if x.sum() > 0:\n        y = x\n    else:\n        y = -x\n    return y\n"
    result = rewrite_where(source, [3])
    assert result.source == source and "not imported" in result.skipped[3]


def test_only_the_given_lines_are_rewritten():
    source = ("import torch\ndef f(x):\n    if x.sum() > 0:\n        y = x\n    else:\n        y = -x\n"
              "    if x.mean() > 0:\n        z = x\n    else:\n        z = -x\n    return y + z\n")
    result = rewrite_where(source, [7])
    assert result.rewritten == [7]
    assert result.source.splitlines()[2] == "    if x.sum() > 0:"
    assert "    z = torch.where(x.mean() > 0, x, -x)" in result.source.splitlines()


def test_side_effect_free_expressions():
    import libcst as cst

    def ok(text):
        return side_effect_free(cst.parse_expression(text))

    assert ok("a.b * 2 + -c") and ok("torch.exp(x) / (y ** 2)") and ok("torch.clamp(x, min=0)")
    assert not ok("x.exp()") and not ok("torch.nn.functional.relu(x)") and not ok("torch.rand_like(x)")
    assert not ok("[x]") and not ok("f(x)") and not ok("x if a else y") and not ok("torch.cat(*xs)")


def test_a_comment_on_the_if_line_is_kept():
    source = ("import torch\ndef f(x):\n    # why\n    if x.sum() > 0:  # note\n        y = x\n    else:\n        y = -x\n"
              "    return y\n")
    result = rewrite_where(source, [4])
    assert result.source == "import torch\ndef f(x):\n    # why\n    y = torch.where(x.sum() > 0, x, -x)  # note\n    return y\n"


def test_rewriting_the_corpora_always_gives_parseable_source():
    """Whatever is or is not rewritten, the result parses and the skips say why."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "corpora"
    seen = 0
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        facts, _ = analyze_file(str(path), source)
        lines = where_lines(facts, str(path))
        result = rewrite_where(source, lines)
        parse_module(result.source)
        assert sorted(result.rewritten + list(result.skipped)) == lines
        seen += bool(lines)
    assert seen >= 5


def _load(source: str, name: str):
    import sys
    import types

    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    try:
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - a corpus model
    finally:
        del sys.modules[name]
    return module


def test_rewritten_corpus_models_give_the_same_eager_outputs():
    """Every single-file corpus model the rewrite changes: same outputs on all its inputs
    (which take every branch; tests/test_corpora_eager.py checks that)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "corpora"
    changed = 0
    for path in sorted(root.glob("*.py")):
        source = path.read_text()
        result = rewrite_where(source, where_lines(analyze_file(str(path), source)[0], str(path)))
        if not result.rewritten:
            continue
        changed += 1
        before, after = _load(source, "corpus_before"), _load(result.source, "corpus_after")
        torch.manual_seed(0)
        m_before = before.build().eval()
        torch.manual_seed(0)
        m_after = after.build().eval()
        with torch.no_grad():
            for args_before, args_after in zip(before.inputs(), after.inputs()):
                torch.testing.assert_close(m_after(*args_after), m_before(*args_before), rtol=0, atol=0)
    assert changed >= 1
