"""Front end: every Python construct models to IR (strict mode: no Opaque), the IR
verifies, prints canonically, and bad input becomes ParseError (never another exception)."""

from pathlib import Path

import pytest

from analyzer.analyses.engine.regions import annotate_regions
from analyzer.frontend import ParseError, Unmodelled, ir, parse_module, print_function, verify

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def test_all_syntax_models_without_opaque():
    source = (HERE / "fixtures" / "all_syntax.py").read_text()
    # async/await and yield are Opaque on purpose (never in exportable forward code).
    with pytest.raises(Unmodelled, match="await"):
        parse_module(source, "all_syntax.py", strict=True)
    module = parse_module(source, "all_syntax.py")
    assert verify(module) == []
    forward = module.classes()["Model"].methods()["forward"]
    opaque = [s for s in ir.walk_statements(forward.body) if isinstance(s, ir.Opaque)]
    opaque += [e for s in ir.walk_statements(forward.body) for c in ir.child_expressions(s)
               for e in ir.walk_expression(c) if isinstance(e, ir.OpaqueExpr)]
    assert opaque == []
    kinds = {type(s).__name__ for s in ir.walk_statements(forward.body, into_defs=True)}
    assert {"Assign", "AugAssign", "If", "Loop", "With", "Try", "Assert", "Delete", "Match",
            "FunctionDef", "Return", "Break", "Continue", "Pass", "Global", "Nonlocal", "Raise"} <= kinds


@pytest.mark.parametrize("path", sorted((ROOT / "corpora").rglob("*.py")), ids=lambda p: p.name)
def test_corpus_models_strictly(path):
    module = parse_module(path.read_bytes(), str(path), strict=True)
    assert verify(module) == []


def test_canonical_text_with_region_results():
    source = (
        "def f(x, c):\n"
        "    if c > 0:\n"
        "        y = x\n"
        "        tmp = 1\n"
        "    else:\n"
        "        y = -x\n"
        "    while y.sum() > 0:\n"
        "        y = y - 1\n"
        "        k = 2\n"
        "    return y\n"
    )
    fn = parse_module(source, "f.py").functions()["f"]
    annotate_regions(fn)
    assert print_function(fn) == (
        "L1    def f(x, c) {\n"
        "L2      if (c > 0) -> (y) {\n"
        "L3        y = x\n"
        "L4        tmp = 1\n"
        "        } else {\n"
        "L6        y = (-x)\n"
        "        }\n"
        "L7      while (y.sum() > 0) carried (y) {\n"
        "L8        y = (y - 1)\n"
        "L9        k = 2\n"
        "        }\n"
        "L10     return y\n"
        "      }\n"
    )


def test_statement_spans_cover_the_head():
    source = "def f(x):\n    if x.sum() > 0:  # comment\n        return x\n    return -x\n"
    fn = parse_module(source, "f.py").functions()["f"]
    head = fn.body[0].span
    assert (head.line, head.column, head.end_line, head.end_column) == (2, 5, 2, 19)


def _pending_spans(module):
    """(resolver, node, last) of every IR span not resolved yet."""
    spans = []
    for stmt in ir.walk_statements(module.body, into_defs=True):
        spans.append(stmt.span)
        for child in ir.child_expressions(stmt):
            spans.extend(e.span for e in ir.walk_expression(child) if getattr(e, "span", None) is not None)
    return [(span._resolver, span._node, span._last) for span in spans
            if span._values is None and span._resolver is not None]


@pytest.mark.parametrize("path", [*sorted((ROOT / "corpora").rglob("*.py")), HERE / "fixtures" / "all_syntax.py"],
                         ids=lambda p: p.name)
def test_positions_per_statement_and_texts_match_the_whole_file(path):
    """A span resolves from its top-level statement's code alone (with the statement's
    line from CPython's parser), and an expression's text comes from its own code: both
    as the position pass over the whole file gives them."""
    from analyzer.frontend.positions import _resolve

    module = parse_module(path.read_bytes(), str(path))
    pending = _pending_spans(module)
    assert module.syntax._statement_lines() is not None
    per_statement = [resolver.resolve(node, last) for resolver, node, last in pending]
    texts = [resolver.text_of(node) for resolver, node, last in pending]
    whole = module.syntax.positions()
    for (resolver, node, last), got, text in zip(pending, per_statement, texts):
        expected = _resolve(whole, node, last)
        assert got == expected, (type(node).__name__, got, expected)
        if text is not None and got[0] > 0:
            assert text == module.text(ir.Span(*got)), type(node).__name__  # a Span of numbers: sliced from the lines


def test_decorated_and_semicolon_statements_get_their_lines():
    source = "import torch  # c\n\n# lead\n@dec\nclass A:\n    def f(self):\n        return (1 +\n            2)\na = 1; b = (2)\n"
    module = parse_module(source, "m.py")
    spans = [(type(s).__name__, s.span.line, s.span.column, s.span.end_line, s.span.end_column)
             for s in ir.walk_statements(module.body, into_defs=True)]
    assert spans == [("Import", 1, 1, 1, 13), ("ClassDef", 5, 1, 5, 8), ("FunctionDef", 6, 5, 6, 10),
                     ("Return", 7, 9, 8, 15), ("Assign", 9, 1, 9, 6), ("Assign", 9, 8, 9, 15)]
    assert module.text(module.body[-1].value.span) == "2"  # its own parentheses are not in its span


def test_verify_reports_broken_ir():
    module = parse_module("def f():\n    pass\n", "f.py")
    module.body[0].body.append(ir.Break(ir.Span(2, 5, 2, 10)))
    assert verify(module) == ["f.py:2: break outside a loop"]


@pytest.mark.parametrize("source", [
    "def f(:\n", 'print "python 2"\n', b"\xff\xfe\x00x = 1", b"x = '\xff'\n", "x = 1\x00\n",
])
def test_bad_input_is_a_parse_error(source):
    with pytest.raises(ParseError):
        parse_module(source, "bad.py")


@pytest.mark.parametrize("source", [
    "x = " + "(" * 300 + "1" + ")" * 300 + "\n",
    "".join("    " * i + "if x:\n" for i in range(100)) + "    " * 100 + "pass\n",
    "x = " + " + ".join(["a"] * 5000) + "\n",
])
def test_pathological_nesting_parses_or_refuses_cleanly(source):
    try:
        module = parse_module(source, "deep.py")
    except ParseError as exc:
        assert "nest" in exc.message or "syntax" in exc.message or "too long to analyse" in exc.message
    else:
        assert verify(module) == []


def test_empty_file_is_fine():
    assert parse_module("", "empty.py").body == []


def test_libcst_validates_nodes_again_after_a_parse():
    """The front end parses without libcst's node validation (its parser builds valid
    trees); nodes made afterwards, as the fixes make them, are validated again, after a
    parse that fails too."""
    import libcst as cst

    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Integer("not a number")
    with pytest.raises(ParseError):
        parse_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Integer("not a number")


@pytest.mark.parametrize("literal", ["0", "00", "0x1F", "0o17", "0b101", "1_000", "1e5", "1.", ".5", "1_0.0_1",
                                     "3.14e-2", "1E+3", "08.5", "0e0", "1_000.000_1e1_0"])
def test_number_literals_have_their_python_values(literal):
    import ast

    (stmt,) = parse_module(f"x = {literal}\n").body
    assert stmt.value.value == ast.literal_eval(literal) and type(stmt.value.value) is type(ast.literal_eval(literal))
