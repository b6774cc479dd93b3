"""`SourceFile.function` (one def parsed from its own lines) gives exactly the IR the
whole file's parse gives that def: every node, every field, every span, the qualname;
over every def of real library files and of the corpora, compiled (never imported) to
get their code objects."""

import dataclasses
import sysconfig
import types
from pathlib import Path

import pytest

from analyzer.frontend import ir, parse_module
from analyzer.frontend.function_source import SourceFile
from lowering.interp.functions import _find_def

ROOT = Path(__file__).parents[2]
SITE = Path(sysconfig.get_paths()["purelib"])
LIBRARY_FILES = [
    "transformers/modeling_utils.py",
    "transformers/masking_utils.py",
    "transformers/models/bert/modeling_bert.py",
    "transformers/models/llama/modeling_llama.py",
    "transformers/models/gpt2/modeling_gpt2.py",
    "timm/models/vision_transformer.py",
    "timm/layers/attention.py",
    "torchvision/models/resnet.py",
    "torchvision/models/detection/_utils.py",
]
FILES = [SITE / p for p in LIBRARY_FILES if (SITE / p).exists()] + sorted((ROOT / "corpora").rglob("*.py"))


def dump(node):
    """Everything the IR holds, as plain values (spans as their numbers)."""
    if isinstance(node, ir.Span):
        return ("Span", node.line, node.column, node.end_line, node.end_column)
    if dataclasses.is_dataclass(node):
        return (type(node).__name__, *[(f.name, dump(getattr(node, f.name))) for f in dataclasses.fields(node)])
    if isinstance(node, (list, tuple)):
        return (type(node).__name__, *[dump(x) for x in node])
    if isinstance(node, dict):
        return ("dict", *[(dump(k), dump(v)) for k, v in node.items()])
    assert node is None or isinstance(node, (str, int, float, complex, bytes, bool, type(...))), type(node)
    return node


def function_codes(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if not const.co_name.startswith("<"):
                yield const
            yield from function_codes(const)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SITE) if p.is_relative_to(SITE) else p.name))
def test_each_def_parsed_alone_has_the_whole_files_ir(path):
    data = path.read_bytes()
    module = parse_module(data, str(path))
    source = SourceFile(data, str(path))
    defs = [c for c in function_codes(compile(data, str(path), "exec", dont_inherit=True))
            if _find_def(module.body, c.co_firstlineno, c.co_name) is not None]
    assert defs or "corpora" in str(path)
    alone_parsed = 0
    for code in defs:
        alone = source.function(code)
        if alone is None:
            continue  # left to the whole parse: a bodiless def whose header ends at the margin
        alone_parsed += 1
        whole = _find_def(module.body, code.co_firstlineno, code.co_name)
        assert dump(alone) == dump(whole), f"{code.co_qualname} at line {code.co_firstlineno}"
    assert alone_parsed >= 0.95 * len(defs)


def test_a_file_that_does_not_decode_is_left_to_the_whole_parse():
    source = SourceFile(b"# -*- coding: no-such-codec -*-\ndef f():\n    return 1\n", "bad.py")
    code = compile("def f():\n    return 1\n", "bad.py", "exec").co_consts[0]
    assert source.function(code) is None


def test_indented_nested_and_decorated_defs_keep_file_positions():
    text = ("import functools\r\n\r\nclass A:\r\n    @functools.cache\r\n    def f(self, x=(1,\r\n2)):\r\n"
            "        def g(y):\r\n            return [y,\r\n  x]\r\n        return g\r\n"
            "@functools.cache\r\n@functools.cache\r\ndef h(): return 1\r\n")
    data = text.encode()
    module = parse_module(data, "m.py")
    source = SourceFile(data, "m.py")
    codes = [c for c in function_codes(compile(data, "m.py", "exec", dont_inherit=True)) if c.co_name != "A"]
    assert [c.co_qualname for c in codes] == ["A.f", "A.f.<locals>.g", "h"]
    for code in codes:
        alone = source.function(code)
        assert alone is not None
        assert dump(alone) == dump(_find_def(module.body, code.co_firstlineno, code.co_name))
    assert source.function(codes[1]).qualname == "A.f.<locals>.g"
    assert [source.function(c).span.line for c in codes] == [5, 7, 13]


def test_a_def_ends_at_its_last_statement_even_one_without_code():
    text = ("def k(a,\n):\n    x = f(\n        a,\n)\n    # the end\n    pass\nk(1)\n"
            "def m(\n    a,\n):\n    \"\"\"A docstring alone.\"\"\"\n")
    module = parse_module(text, "m.py")
    source = SourceFile(text.encode(), "m.py")
    k, m = function_codes(compile(text, "m.py", "exec", dont_inherit=True))
    alone = source.function(k)
    assert isinstance(alone.body[-1], ir.Pass)
    assert dump(alone) == dump(_find_def(module.body, k.co_firstlineno, k.co_name))
    # m's code runs its first line only, and its header ends at the margin: cut there,
    # the lines do not parse, and the whole file decides.
    assert source.function(m) is None
