"""A method of a top-level class gets its positions from the code generation of that
method alone (`positions.MemberPositions`): every node has the range that the
generation of its whole class gives it, which is what findings were reported with."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from analyzer.frontend import parse_module
from analyzer.frontend.positions import Positions, cpython_ast, member_lines, statement_lines

ROOT = Path(__file__).resolve().parents[2]
REAL_TREES = ROOT / ".real-trees"

CORNERS = '''\
import torch


class Tabs(torch.nn.Module):
\tdef forward(self, x):
\t\tif x.sum() > 0:
\t\t\treturn x
\t\treturn -x


class Mixed:
    """A docstring."""
    scale = 2; shift = 3  # two statements on one line

    # a comment before a decorated method
    @staticmethod
    @torch.no_grad()
    def helper(x,
               y=(1,
                  2)):
        text = """a string
   over lines"""
        return x + \\
            y[0]

    class Inner:
        def f(self): return 1

    def forward(self, x): return x * self.scale
'''


def _compare(text: str) -> int:
    """Nodes compared; asserts each member's positions equal its class's."""
    tree = cst.parse_module(text)
    parsed = cpython_ast(text)
    lines = statement_lines(text, tree, parsed)
    assert lines is not None
    compared = 0
    for index, starts in member_lines(tree, parsed).items():
        whole = Positions(tree, tree.body[index], lines[index])
        body = tree.body[index].body
        indent = body.indent if body.indent is not None else tree.default_indent
        for k, member in enumerate(body.body):
            piece = Positions(tree, member, starts[k], indent)
            stack = [member]
            while stack:
                node = stack.pop()
                stack.extend(node.children)
                assert piece.get(node) == whole.get(node), (k, type(node).__name__)
                compared += 1
    return compared


def test_corner_cases_have_their_class_positions():
    assert _compare(CORNERS) > 100


def test_spans_of_methods_are_the_class_positions():
    module = parse_module(CORNERS, "corners.py")
    forward = module.classes()["Mixed"].methods()["forward"]
    assert (forward.span.line, forward.span.column) == (29, 5)
    helper = module.classes()["Mixed"].methods()["helper"]
    ret = helper.body[-1]
    assert (ret.span.line, ret.span.column, ret.span.end_line) == (23, 9, 24)
    tabs = module.classes()["Tabs"].methods()["forward"].body[0]
    assert (tabs.span.line, tabs.span.column) == (6, 3)


@pytest.mark.skipif(not REAL_TREES.is_dir(), reason="the real trees are unpacked by `make real-trees`")
def test_real_classes_have_their_class_positions():
    files = sorted(REAL_TREES.glob("*/**/*.py"))
    compared = 0
    for path in random.Random(25).sample(files, 25):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            compared += _compare(text)
        except cst.ParserSyntaxError:
            continue
    assert compared > 5_000
