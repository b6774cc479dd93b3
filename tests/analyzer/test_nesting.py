"""The screen of deep input (`frontend.nesting`): a text deeper than MAX_DEPTH is refused
where it goes too deep, and only such a text (the scan never lets a deeper one through,
tested against CPython's own parse); every recursive pass works at the bound, with room
to spare on the stack; ordinary code costs no question to CPython."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.frontend import ParseError, nesting, parse_module
from analyzer.frontend.nesting import MAX_DEPTH, Deepest, Scan, cpython_parse, screen

ROOT = Path(__file__).resolve().parents[2]

# Expressions of (about) n levels, each in its own way of nesting.
SHAPES = {
    "calls": lambda n: "x" + ".relu()" * (n // 2),
    "subscripts": lambda n: "x" + "[0]" * n,
    "nested subscripts": lambda n: "x[" * n + "0" + "]" * n,
    "nested calls": lambda n: "torch.relu(" * n + "x" + ")" * n,
    "attributes": lambda n: "x" + ".a" * n,
    "binary": lambda n: " + ".join(["x"] * n),
    "power": lambda n: " ** ".join(["x"] * n),
    "unary": lambda n: "-" * n + "x",
    "not": lambda n: "not " * n + "x",
    "and": lambda n: " and ".join(["x"] * n),
    "ternary": lambda n: "x if c else " * n + "x",
    "lambda": lambda n: "(" + "lambda: " * n + "x)()",
    "lists": lambda n: "[" * n + "x" + "]" * n,
    "dicts": lambda n: "{'a': " * n + "x" + "}" * n,
    "strings": lambda n: " ".join(["'a'"] * n),
    "comprehension": lambda n: "[x " + " ".join(f"for a{i} in x" for i in range(n)) + "]",
    "f-string": lambda n: 'f"{x' + ".relu()" * (n // 2) + '}"',
}


def model(expression: str, blocks: int = 0) -> str:
    """A forward that computes ``expression`` inside ``blocks`` nested `if`s, then
    branches on a tensor (a UT101 that an analysis stopped short would miss)."""
    inner = "    " * (blocks + 2)
    head = "".join("    " * (i + 2) + f"if c{i}:\n" for i in range(blocks))
    return ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x, c):\n" + head
            + f"{inner}y = {expression}\n        if x.sum() > 0:\n            x = -x\n        return x, y\n")


def deepest_allowed(shape: str, blocks: int = 0) -> int:
    lo, hi = 1, MAX_DEPTH + 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if screen(model(SHAPES[shape](mid), blocks)).refusal is None:
            lo = mid
        else:
            hi = mid - 1
    return lo


def depth(text: str) -> int:
    tree, error = cpython_parse(text)
    assert tree is not None, error
    return Deepest(tree, text).depth


# -------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_one_level_past_the_bound_is_refused_where_it_goes_past(shape):
    """Past the deepest the screen lets through, the text is refused: deeper than
    MAX_DEPTH, or (brackets) deeper than CPython's 200 brackets, with CPython's words."""
    n = deepest_allowed(shape)
    assert depth(model(SHAPES[shape](n))) <= MAX_DEPTH
    deeper = model(SHAPES[shape](n + 2))
    with pytest.raises(ParseError) as refused:
        parse_module(deeper, "deep.py")
    assert refused.value.line == 6, refused.value.message  # `y = ...`
    if refused.value.message == "syntax error: too many nested parentheses":
        assert n >= 190
    else:
        assert depth(deeper) > MAX_DEPTH
        assert refused.value.message.startswith("expression nested")
        assert f"up to {MAX_DEPTH} deep" in refused.value.message


def test_the_place_is_where_it_goes_too_deep():
    """As CPython points at the 201st bracket: the first node past the bound."""
    source = "x = " + "-" * (MAX_DEPTH + 50) + "y\n"
    with pytest.raises(ParseError) as refused:
        parse_module(source)
    # the module, `x = ...`, then the unary minuses: the one that is level MAX_DEPTH + 1
    assert (refused.value.line, refused.value.column) == (1, 4 + MAX_DEPTH)
    assert refused.value.message.startswith(f"expression nested {MAX_DEPTH + 52:,} deep;")


def test_an_elif_chain_counts_as_statements():
    source = "def f(x):\n    if x == 0:\n        pass\n" + "".join(
        f"    elif x == {i}:\n        pass\n" for i in range(1, MAX_DEPTH + 5))
    with pytest.raises(ParseError) as refused:
        parse_module(source)
    assert refused.value.message.startswith("statements nested")


def test_code_too_deep_for_cpython_is_refused_at_its_line():
    source = "a = 1\n\n" + "b = (c" + "\n   .relu()" * 5000 + ")\n"
    with pytest.raises(ParseError) as refused:
        parse_module(source)
    assert (refused.value.line, refused.value.column) == (3, 1)
    assert "too deep for Python's own parser" in refused.value.message


def test_every_text_given_to_libcst_is_screened(monkeypatch):
    """A function's own lines (read by the lowering) are screened like a file."""
    from analyzer.frontend.function_source import SourceFile

    source = "def f(x):\n    return x" + ".relu()" * 4000 + "\n"
    namespace: dict = {}
    code = compile("def f(x):\n    return x\n", "m.py", "exec")
    exec(code, namespace)
    assert SourceFile(source.encode(), "m.py").function(namespace["f"].__code__) is None
    with pytest.raises(ParseError):
        SourceFile(source.encode(), "m.py").module()


# -------------------------------------------------------------------------- soundness

# (template, the precedence its operand needs, the precedence of the result): 0 lambda,
# 1 ternary, 2 or, 3 and, 4 not, 5 comparison, 6 +, 7 @, 8 unary, 9 **, 10 an atom. An
# operand of lower precedence is parenthesized (no level, one bracket).
_WRAPPERS = [
    ("-{}", 8, 8), ("not {}", 4, 4), ("{}.a", 10, 10), ("{}[0]", 10, 10), ("{}()", 10, 10),
    ("f({})", 0, 10), ("f(a, {})", 0, 10), ("[{}]", 0, 10), ("(a, {})", 0, 10), ("{{'k': {}}}", 0, 10),
    ("lambda: {}", 0, 0), ("lambda a, b=1: {}", 0, 0), ("(lambda a={}, b=1: 0)", 0, 10),
    ("{} if c else a", 2, 1), ("a if {} else b", 2, 1), ("a if c else {}", 0, 1), ("{} and a", 3, 3),
    ("a or {}", 3, 2), ("{} + a", 6, 6), ("a ** {}", 8, 9), ("a < {} < b", 6, 5), ("[{} for a in b]", 0, 10),
    ("[a for a in {}]", 2, 10), ("f'{{{}}}'", 1, 10), ("f({}, ')')", 0, 10), ("f(\n{}\n)", 0, 10),
    ("( # ((\n{})", 0, 10), ("{} @ a", 7, 7), ("'s'.join({})", 0, 10), ("{} + ('a' 'b' 'c' 'd')", 6, 6),
]


@st.composite
def nests(draw):
    """A module: blocks and `elif`s around one expression nested in many ways, around the
    bound."""
    count = draw(st.integers(MAX_DEPTH - 60, MAX_DEPTH + 200))
    wrappers = draw(st.lists(st.sampled_from(_WRAPPERS), min_size=count, max_size=count))
    expression, precedence, brackets = "x", 10, 0
    for template, needs, gives in wrappers:
        inner = expression if precedence >= needs else f"({expression})"
        opened = template.count("(") + template.count("[") + template.count("{{") + (inner is not expression)
        if brackets + opened > 190:  # CPython's limit is 200
            continue
        if template.startswith("f'") and ("'" in inner or '"' in inner or "\n" in inner):
            continue
        brackets += opened
        expression, precedence = template.format(inner), gives
    blocks = draw(st.integers(0, 30))
    elifs = draw(st.integers(0, 30))
    lines = ["import torch"]
    for i in range(blocks):
        lines.append("    " * i + f"if c{i}:")
    indent = "    " * blocks
    lines.append(indent + "if a:")
    lines.append(indent + "    pass")
    for i in range(elifs):
        lines.append(indent + f"elif b{i}:")
        lines.append(indent + "    pass")
    lines.append(indent + "else:")
    lines.append(indent + "    y = " + expression.replace("\n", "\n" + indent + "    "))
    return "\n".join(lines) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nests())
def test_the_scan_never_lets_through_what_is_too_deep(text):
    tree, error = cpython_parse(text)
    if tree is None:
        return
    measured = Deepest(tree, text).depth
    scan = Scan(text)
    if measured > MAX_DEPTH:
        assert scan.may_be_too_deep
        assert screen(text).refusal is not None
    else:
        assert screen(text).refusal is None


def fields(body: str) -> str | None:
    read = nesting._read_fields(body + '"""', 0, '"""')
    return read[0] if read is not None else None


@pytest.mark.parametrize("body, code", [
    ("plain", ""),
    ("a {x} b", "{x}"),
    ("{{literal}} {x!r:>{width}}", "{x!r:>{width}}"),
    ("it's {', '.join(names)} (all)", "{'.join(names)}"),
    ("{d['k']}", "{d[']}"),
    ("{f'{y}'}", "{f\x01{y}\x02}"),
    ("unbalanced ( in text {x}", "{x}"),
    ("{f\"{y[\"k\"]}\"}", "{f\x01{y[']}\x02}"),  # Python 3.12: a quote of the string's own kind in a field
])
def test_an_f_string_keeps_its_fields_and_only_them(body, code):
    assert fields(body) == code


@pytest.mark.parametrize("body", [
    "{x + ",  # a field that does not close
    "{'}' + ",  # a brace in a string does not close the field
    "lone } brace",
])
def test_an_f_string_whose_fields_do_not_close_is_not_read(body):
    assert fields(body) is None


def test_python_3_12_nested_f_strings_are_read_to_their_closing_quote():
    """A field may hold a quote of its f-string's own kind (Python 3.12): the scan reads
    such a string to the quote that closes it, so it needs no question to CPython (which
    under 3.11 refuses it: libcst parses it), and a deep one is still found."""
    shallow = 'x = f"{y["k"]}" + f"{z}"\nw = (1, 2)\n'
    scan = Scan(shallow)
    assert not scan.may_be_too_deep and not scan.cpython_may_refuse
    deep = 'x = f"{y["k"]' + ".relu()" * 400 + '}"\n'
    assert Scan(deep).may_be_too_deep
    assert screen(deep).refusal is not None


# -------------------------------------------------------------------------- at the bound

_AT_THE_BOUND = textwrap.dedent("""\
    import os, sys, tempfile, threading
    from analyzer import check_source
    from analyzer.graph import render
    import analyzer.engine, libcst
    source = sys.stdin.read()
    path = os.path.join(tempfile.mkdtemp(), "m.py")
    open(path, "w").write(source)
    done = []
    def run():
        found = check_source(source, "m.py", select=["ALL"])
        assert [d.code for d in found if d.code in ("UT000", "UT101")] == ["UT101"], found
        assert "# data" in render(path, "M.forward", "text")
        assert render(path, "M.forward", "json")
        done.append(sys.getrecursionlimit())
    threading.stack_size({stack})
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    sys.exit(0 if done == [1000] else 3)
""")


def run_python(script: str, *, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script], input=stdin.encode(), capture_output=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("shape, blocks", [
    ("calls", 0), ("nested subscripts", 0), ("nested calls", 0), ("dicts", 0), ("lambda", 0), ("and", 0),
    ("strings", 0), ("comprehension", 0), ("f-string", 0), ("nested subscripts", 80), ("nested calls", 80),
])
def test_every_pass_works_at_the_bound_on_half_the_main_threads_stack(shape, blocks):
    """The deepest the screen lets through is analysed in full (the UT101 of the `if`,
    the graph), in a thread with 4 MB of stack, half of what the main thread of `untrace`
    and of its workers has; the recursion limit is put back afterwards. The deepest
    needs (measured): libcst's parse of 80 nested blocks around 200 nested calls, 3.4 MB;
    6 frames a level in the passes, 1,600 in all, under nesting.RECURSION_LIMIT."""
    source = model(SHAPES[shape](deepest_allowed(shape, blocks)), blocks)
    proc = run_python(_AT_THE_BOUND.format(stack=4 * 1024 * 1024), stdin=source)
    assert proc.returncode == 0, (proc.returncode, proc.stderr.decode()[-3000:])


def test_cpython_builds_its_tree_within_its_default_room_however_high_the_limit():
    """CPython builds `ast` objects by recursing in C as deep as the recursion limit lets
    it; under the raised limit of the passes a very deep text would overflow a small
    stack instead of raising RecursionError."""
    script = textwrap.dedent("""\
        import sys, threading
        from analyzer.frontend.nesting import cpython_parse, stack_room
        text = "x = y" + ".relu()" * 9000 + "\\n"
        out = []
        def run():
            with stack_room():
                out.append(type(cpython_parse(text)[1]).__name__)
        threading.stack_size(1024 * 1024)
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
        print(out)
    """)
    proc = run_python(script, timeout=60)
    assert (proc.returncode, proc.stdout.decode().strip()) == (0, "['RecursionError']"), proc.stderr.decode()


def test_the_recursion_limit_is_put_back():
    from analyzer import check_source

    before = sys.getrecursionlimit()
    check_source(model(SHAPES["calls"](100)), "m.py")
    assert sys.getrecursionlimit() == before


# -------------------------------------------------------------------------- real code


def test_the_bundled_corpora_are_let_through_without_a_question():
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "corpora").rglob("*.py"))]
    assert len(texts) > 50
    assert [t for t in texts if Scan(t).cpython_may_refuse or Scan(t).may_be_too_deep] == []


REAL = ROOT / ".real-trees"


def test_real_model_code_is_far_from_the_bound():
    """timm and transformers: nothing is refused, and the scan asks CPython about one
    file in a thousand (the deepest real code, 131 levels: transformers'
    integrations/gguf/dequant.py, a bytes literal of 128 adjacent parts)."""
    files = sorted((REAL / "timm").rglob("*.py")) + sorted((REAL / "transformers" / "transformers" / "integrations").rglob("*.py"))
    assert len(files) > 300, "the real trees are not unpacked: `make test` unpacks them (make real-trees)"
    asked = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert screen(text).refusal is None, path
        scan = Scan(text)
        if scan.may_be_too_deep:
            asked.append(path.name)
            assert depth(text) <= MAX_DEPTH // 2
    assert asked == ["dequant.py"]
    assert depth((REAL / "transformers/transformers/integrations/gguf/dequant.py").read_text()) == 131


# -------------------------------------------------------------------------- time


def _generated_nodes(source: str) -> int:
    """How many libcst nodes are written out as code while a file is checked."""
    import libcst

    from analyzer import check_source

    real = libcst.CSTNode._codegen
    count = [0]

    def counting(self, state, **kwargs):
        count[0] += 1
        return real(self, state, **kwargs)

    libcst.CSTNode._codegen = counting
    try:
        check_source(source, "m.py", select=["ALL"])
    finally:
        libcst.CSTNode._codegen = real
    return count[0]


def test_the_texts_of_a_chain_of_calls_cost_linear_work():
    """Each call of `x.relu().relu()...` has the chain before it as its text: written
    out call by call, n calls cost n^2 (4,000 calls: a minute, before the crash). Once a
    text is long, the texts are cut from the code of their statement."""
    def chain(n: int) -> str:
        return ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                f"        if (x{'.relu()' * n}).sum() > 0:\n            x = -x\n        return x\n")

    small, large = _generated_nodes(chain(60)), _generated_nodes(chain(120))
    assert large < 2.5 * small, (small, large)


def test_walking_an_elif_chain_takes_one_step_a_statement():
    """An `elif` chain nests one `If` in the next: walked with nested generators, each
    statement passed through every one of them (n^2), and a chain deeper than the
    recursion limit did not walk at all."""
    from analyzer.frontend import ir

    chain: list = [ir.Pass()]
    for i in range(3000):
        chain = [ir.If(ir.Name(f"c{i}"), [ir.Pass()], chain)]
    walked = list(ir.walk_statements(chain))
    assert len(walked) == 3000 * 2 + 1
    assert isinstance(walked[0], ir.If) and walked[0].test.id == "c2999"


@pytest.mark.parametrize("source, values", [
    ("a and b and c and d", ["a", "b", "c", "d"]),
    ("a and (b and c) and d", ["a", "(b and c)", "d"]),
    ("(a and b) and c", ["(a and b)", "c"]),
    ("a and b or c and d", None),
    ("a or b or (c or d)", ["a", "b", "(c or d)"]),
])
def test_and_or_chains_flatten_as_pythons_tree_does(source, values):
    from analyzer.frontend import ir
    from analyzer.frontend.printer import expr_text

    expression = parse_module(f"x = {source}\n").body[0].value
    assert isinstance(expression, ir.BoolOp)
    if values is None:  # `or` of two `and`s
        assert expression.op == "or" and [v.op for v in expression.values] == ["and", "and"]
    else:
        assert [expr_text(v) for v in expression.values] == values


def test_a_long_and_chain_is_built_without_recursing_into_it():
    """libcst nests `a and b and c` as `(a and b) and c`; the builder walks the left
    operands: the IR is one BoolOp, whatever the length (the screen bounds it first)."""
    from analyzer.frontend import ir

    source = "x = " + " and ".join(f"v{i}" for i in range(MAX_DEPTH - 3)) + "\n"
    expression = parse_module(source).body[0].value
    assert isinstance(expression, ir.BoolOp) and len(expression.values) == MAX_DEPTH - 3
    assert [v.id for v in expression.values[:3]] == ["v0", "v1", "v2"]
