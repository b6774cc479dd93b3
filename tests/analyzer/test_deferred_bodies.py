"""Deferred top-level function bodies (`frontend.deferred_bodies`), and the methods of a
dependency's classes: a module parsed with them is, once read, the very IR of the module
parsed whole (every field, every span's position and text), on the corpora and on real
library files; a body nobody reads is never parsed; what cannot be deferred safely is
parsed with its file; a file read first as a dependency has, when checked, the findings
and fixes of a file parsed whole."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from analyzer.frontend import ParseError, ir, parse_module
from analyzer.frontend.deferred_bodies import find_deferrable
from analyzer.frontend.spans import Span
from analyzer.runner import check_source

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / ".real-trees"
_SKIPPED_FIELDS = {"syntax", "_methods", "_defs", "_lines"}


def same_ir(a, b, where="module") -> None:
    """Fail with the first difference between two IR trees (a deferred `def` compares as
    the `def` it stands for)."""
    if isinstance(a, Span) or isinstance(b, Span):
        assert isinstance(a, Span) and isinstance(b, Span), where
        assert (a.line, a.column, a.end_line, a.end_column) == (b.line, b.column, b.end_line, b.end_column), where
        assert a.source_text() == b.source_text(), where
        return
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            same_ir(x, y, f"{where}[{i}]")
        return
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        kind = lambda x: ir.FunctionDef if isinstance(x, ir.FunctionDef) else type(x)  # noqa: E731
        assert kind(a) is kind(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
        for f in dataclasses.fields(a):
            if f.name not in _SKIPPED_FIELDS:
                same_ir(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
        return
    assert a == b, f"{where}: {a!r} != {b!r}"


def deferred_defs(module: ir.Module) -> list[ir.DeferredFunctionDef]:
    return [s for s in module.body if isinstance(s, ir.DeferredFunctionDef)]


def _real_files(count: int, seed: int = 0) -> list[Path]:
    files = sorted(p for tree in ("timm", "torchvision", "transformers", "ultralytics") for p in (REAL / tree).rglob("*.py"))
    with_defs = [p for p in files if find_deferrable(p.read_text(encoding="utf-8", errors="replace")) is not None]
    return sorted(random.Random(seed).sample(with_defs, min(count, len(with_defs))))


CORPUS = sorted((ROOT / "corpora").rglob("*.py"))
REAL_SAMPLE = _real_files(40) if REAL.is_dir() else []


@pytest.mark.parametrize("methods", [False, True], ids=["functions", "methods"])
@pytest.mark.parametrize("path", CORPUS + REAL_SAMPLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_deferred_module_is_the_module_parsed_whole(path, methods):
    data = path.read_bytes()
    try:
        whole = parse_module(data, str(path))
    except ParseError as error:
        with pytest.raises(ParseError) as deferred_error:
            parse_module(data, str(path), defer_functions=True, defer_methods=methods)
        assert (deferred_error.value.message, deferred_error.value.line) == (error.message, error.line)
        return
    deferred = parse_module(data, str(path), defer_functions=True, defer_methods=methods)
    same_ir(deferred, whole)


def deferred_methods(module: ir.Module) -> list[ir.DeferredFunctionDef]:
    return [m for c in module.classes().values() for m in c.body if isinstance(m, ir.DeferredFunctionDef)]


def test_the_real_sample_defers_most_methods_of_a_dependency():
    counts = [len(deferred_methods(parse_module(p.read_bytes(), str(p), defer_functions=True, defer_methods=True)))
              for p in REAL_SAMPLE]
    assert sum(counts) >= 200 and sum(1 for c in counts if c) >= 20
    # a checked file's own parse keeps its methods (its analysis reads nearly all of them)
    assert not any(deferred_methods(parse_module(p.read_bytes(), str(p), defer_functions=True)) for p in REAL_SAMPLE)


def test_the_real_sample_defers_most_functions():
    assert REAL_SAMPLE, "the real trees are not unpacked: `make test` unpacks them (make real-trees)"
    counts = [len(deferred_defs(parse_module(p.read_bytes(), str(p), defer_functions=True))) for p in REAL_SAMPLE]
    assert sum(counts) >= 100 and sum(1 for c in counts if c) >= 30


HELPERS = '''import torch


def used(x):
    y = x * 2
    z = y + 1
    return z


def unused(x):
    if x.sum() > 0:
        return x
    return -x


class Net(torch.nn.Module):
    def forward(self, x):
        return used(x)
'''


NET = '''import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    @torch.no_grad()
    def unused(self, x):
        y = x + 1
        return y

    def forward(self, x):
        x = self.proj(x)
        if x.sum() > 0:
            x = x * 2
        return x
'''

USER = '''import torch
from net import Block


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)
'''


def test_a_dependency_method_nobody_reads_is_never_parsed():
    module = parse_module(NET, "net.py", defer_functions=True, defer_methods=True)
    methods = {fn.name: fn for fn in deferred_methods(module)}
    assert set(methods) == {"__init__", "unused", "forward"} and not any(fn.body_read for fn in methods.values())
    assert [type(s).__name__ for s in methods["forward"].body] == ["Assign", "If", "Return"]
    assert methods["forward"].body[1].span.line == 16 and methods["forward"].qualname == "Block.forward"
    assert not methods["unused"].body_read
    same_ir(module, parse_module(NET, "net.py"))


def test_a_file_read_first_as_a_dependency_has_the_findings_and_fixes_of_its_whole_parse(tmp_path):
    from analyzer.runner import check_paths

    (tmp_path / "a_user.py").write_text(USER)
    (tmp_path / "net.py").write_text(NET)
    found = check_paths([str(tmp_path / "a_user.py"), str(tmp_path / "net.py")], select=["ALL"],
                        use_cache=False, jobs=1)
    own = [d for d in found if d.path.endswith("net.py")]
    alone = check_source(NET, str(tmp_path / "net.py"), select=["ALL"])
    assert [(d.code, d.line) for d in own] == [("UT101", 16)]  # the true positive
    assert [(d.code, d.line, d.column, d.fix) for d in own] == [(d.code, d.line, d.column, d.fix) for d in alone]
    assert own[0].fix is not None


def test_a_body_nobody_reads_is_never_parsed():
    module = parse_module(HELPERS, "m.py", defer_functions=True)
    defs = {fn.name: fn for fn in deferred_defs(module)}
    assert set(defs) == {"used", "unused"} and not any(fn.body_read for fn in defs.values())
    assert [type(s).__name__ for s in defs["used"].body] == ["Assign", "Assign", "Return"]
    assert defs["used"].body_read and not defs["unused"].body_read
    assert defs["used"].body[0].span.line == 5


def test_findings_and_fixes_in_deferred_functions_are_those_of_the_whole_parse(monkeypatch):
    source = HELPERS.replace("return used(x)", "return unused(x)")
    deferred = check_source(source, "m.py", select=["ALL"])
    monkeypatch.setattr("analyzer.analyses.project.index.parse_module",
                        lambda s, p, defer_functions=False: parse_module(s, p))
    whole = check_source(source, "m.py", select=["ALL"])
    assert [(d.code, d.line, d.column) for d in deferred] == [("UT101", 11, 5)]
    assert deferred == whole
    assert deferred[0].fix is not None


@pytest.mark.parametrize("text", [
    # a syntax error in a function's body is the file's
    HELPERS.replace("z = y + 1", "z = y +"),
    # `def` in a docstring's example, in the first column
    '"""Use it so:\n\ndef f(x):\n    a = 1\n    b = 2\n    return a\n"""\nx = 1\n',
    # a body that begins on the line of its signature's colon, then goes on
    "def f(a,\n      b): return (a +\n    b +\n    1)\n",
    # a column-0 line inside a body's string cuts the run short: CPython refuses it alone
    'def f():\n    s = """\nnot code\n"""\n    t = 1\n    return s\n',
    # methods: a syntax error in one; a line of a string shallower than the members
    NET.replace("y = x + 1", "y = x +"),
    'class A:\n    def f(self):\n        s = """\n  shallow\n"""\n        t = 1\n        return s\n',
    # a `def` one level deeper, under an `if` of the class body, is not a member
    'class A:\n    if True:\n        def f(self):\n            a = 1\n            b = 2\n            return a\n',
    # a method in a docstring's example
    'class A:\n    """Use it so:\n\n    def f(x):\n        a = 1\n        b = 2\n        return a\n    """\n    x = 1\n',
    # tabs, and a body on the line of the colon
    'class A:\n\tdef f(self):\n\t\ta = 1\n\t\tb = 2\n\t\treturn a\n\tdef g(self): return (1 +\n\t\t2 +\n\t\t3)\n',
])
@pytest.mark.parametrize("methods", [False, True], ids=["functions", "methods"])
def test_what_cannot_be_deferred_is_parsed_with_its_file(text, methods):
    try:
        whole = parse_module(text, "m.py")
    except ParseError as error:
        with pytest.raises(ParseError) as deferred_error:
            parse_module(text, "m.py", defer_functions=True, defer_methods=methods)
        assert (deferred_error.value.message, deferred_error.value.line) == (error.message, error.line)
        return
    deferred = parse_module(text, "m.py", defer_functions=True, defer_methods=methods)
    same_ir(deferred, whole)


def test_the_docstring_example_is_not_a_function():
    text = '"""Use it so:\n\ndef f(x):\n    a = 1\n    b = 2\n    return a\n"""\nx = 1\n'
    assert find_deferrable(text) is not None  # the lines look like a function...
    module = parse_module(text, "m.py", defer_functions=True)
    assert deferred_defs(module) == [] and module.functions() == {}  # ...and are the docstring they are


def test_crlf_and_decorated_functions_keep_their_lines():
    text = ("import torch\r\n\r\n@torch.no_grad()\r\n@staticmethod\r\ndef f(\r\n    x,\r\n):\r\n"
            "    '''Doc.'''\r\n    y = x + 1\r\n    return y\r\n\r\n\r\nz = 1\r\n")
    module = parse_module(text, "m.py", defer_functions=True)
    (fn,) = deferred_defs(module)
    same_ir(module, parse_module(text, "m.py"))
    assert (fn.span.line, fn.body[1].span.line, module.body[-1].span.line) == (5, 9, 13)
