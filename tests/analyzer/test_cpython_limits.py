"""The screen that decides when CPython is asked about its own nesting limits: it must
never say "cannot be refused" for a text CPython refuses (tested against CPython's
parser itself), and it must let ordinary files through without asking."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.frontend.cpython_limits import may_exceed_cpython_limits

LIMITS = ("too many nested parentheses", "too many levels of indentation")


def cpython_refuses_for_a_limit(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<t>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        return error.msg in LIMITS
    except (MemoryError, RecursionError, ValueError):
        return False
    return False


def nested(depth: int, opener: str = "(", closer: str = ")") -> str:
    return "x = " + opener * depth + "1" + closer * depth + "\n"


def indented(levels: int, unit: str = " ") -> str:
    lines = [unit * i + "if x:" for i in range(levels)] + [unit * levels + "pass"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", [
    nested(201), nested(1000), nested(300, "[", "]"), nested(250, "{", "}"),
    "x = " + "f(" * 210 + "1" + ")" * 210 + "\n",
    # a string between the brackets changes nothing
    "x = " + "(" * 201 + "')'" + ")" * 201 + "\n",
    indented(101), indented(120, "\t"), indented(101).replace("\n", "\r"),
])
def test_what_cpython_refuses_is_always_asked(text):
    assert cpython_refuses_for_a_limit(text)
    assert may_exceed_cpython_limits(text)


@pytest.mark.parametrize("text", [
    nested(30), indented(20), indented(20, "\t"),
    # brackets in strings and comments are not nesting
    "s = '" + "(" * 500 + "'\n", 's = """' + "[" * 500 + '\n' + "]" * 10 + '"""\n',
    "# " + "(" * 500 + "\n" + "x = 1\n", "s = '\\'' + '(((' # ')))\n",
    "t = r'\\'(' + \")\"\n",
])
def test_ordinary_text_is_let_through_without_asking(text):
    assert not cpython_refuses_for_a_limit(text)
    assert not may_exceed_cpython_limits(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["(", ")", "[", "]", "{", "}", "'", '"', "#", "\\", "\n", " ", "\t", "x", "f", "1", ",",
                                 "'''", '"""', "(" * 40, ")" * 40, " " * 30]), max_size=60))
def test_never_says_no_where_cpython_refuses(pieces):
    text = "".join(pieces)
    if cpython_refuses_for_a_limit(text):
        assert may_exceed_cpython_limits(text)


def test_the_bundled_corpora_need_no_question():
    corpora = Path(__file__).resolve().parents[2] / "corpora"
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpora.rglob("*.py"))]
    assert len(texts) > 50
    asked = [t for t in texts if may_exceed_cpython_limits(t)]
    assert asked == []
