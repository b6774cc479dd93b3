"""A toy engine and toy rules, so the driver can be tested on its own.

The driver's contract with the engine is ``analyze_file(path, source, project) ->
(facts, deps)`` and with the rules ``rule.detect(facts) -> diagnostics``. These fakes
honour it with :mod:`ast` and a handful of obvious patterns:

- ``if <anything with .sum()/.max()/.any()>:``  -> BranchFact(DATA)  -> UT101
- ``if <anything with .shape>:``                -> BranchFact(SHAPE) -> UT103 (default off)
- ``<expr>.item()``                             -> EscapeFact        -> UT201, with a safe fix
  deleting ``.item()`` (``.tolist()``: the same fix, marked unsafe)
- a syntax error or undecodable bytes          -> ParseErrorFact    -> UT000
- ``from helper import f`` where ``helper.py`` is a project file: a dependency.

Run as a script it is the ``untrace`` command with the fakes installed
(``python tests/cli/fakes.py check ...``).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import sys
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from analyzer.analyses.kinds.facts import BranchFact, EscapeFact, ParseErrorFact, Site  # noqa: E402
from analyzer.analyses.kinds.levels import Level  # noqa: E402
from analyzer.diagnostics import Edit, Fix  # noqa: E402
from analyzer.rules.base import Rule  # noqa: E402

CALLS = {"n": 0}  # analyze_file calls in this process


def _decode(source):
    if isinstance(source, str):
        return source
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    text = source.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def _function_of(tree):
    owner = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for inner in ast.walk(item):
                        owner.setdefault(id(inner), f"{node.name}.{item.name}")
    return owner


def fake_analyze_file(path, source, project=None):
    CALLS["n"] += 1
    try:
        text = _decode(source)
        tree = ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError, LookupError) as error:
        line = getattr(error, "lineno", None) or 1
        col = getattr(error, "offset", None) or 1
        site = Site(path, line, col, line, col + 1)
        return [ParseErrorFact(site, f"cannot parse: {type(error).__name__}")], {}
    owner = _function_of(tree)
    facts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            site = Site(
                path,
                node.lineno,
                node.col_offset + 1,
                node.test.end_lineno,
                node.test.end_col_offset + 1,
                owner.get(id(node)),
                (owner.get(id(node)),) if owner.get(id(node)) else (),
            )
            if any(k in test for k in (".sum()", ".max()", ".any()")):
                facts.append(BranchFact(site, "if", Level.DATA, test))
            elif ".shape" in test:
                facts.append(BranchFact(site, "if", Level.SHAPE, test))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("item", "tolist"):
            site = Site(
                path,
                node.lineno,
                node.col_offset + 1,
                node.end_lineno,
                node.end_col_offset + 1,
                owner.get(id(node)),
                ("Net.forward", "Net.helper") if "helper" in (owner.get(id(node)) or "") else (),
            )
            facts.append(EscapeFact(site, node.func.attr, "python", ast.unparse(node)))
    deps = {}
    if project is not None:
        files = {Path(f).stem: f for f in getattr(project, "files", ())}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in files:
                dep = files[node.module]
                with open(dep, "rb") as handle:
                    deps[dep] = hashlib.sha256(handle.read()).hexdigest()
    return facts, deps


def _detect_parse(facts):
    for f in facts:
        if isinstance(f, ParseErrorFact):
            yield UT000.diagnostic(f.site, f.message)


def _detect_branch(level):
    def detect(facts):
        rule = UT101 if level == Level.DATA else UT103
        for f in facts:
            if isinstance(f, BranchFact) and f.level == level:
                yield rule.diagnostic(f.site, f"`if` on tensor {level.label}: `{f.predicate}`", "rewrite with torch.where")

    return detect


def _detect_escape(facts):
    for f in facts:
        if isinstance(f, EscapeFact):
            s = f.site
            # replace the trailing `.item()` / `.tolist()` (on the last line of the call)
            suffix = f".{f.how}()"
            fix = Fix(
                f"drop `{suffix}`",
                (Edit(s.end_line, s.end_column - len(suffix), s.end_line, s.end_column, ""),),
                "safe" if f.how == "item" else "unsafe",
            )
            yield UT201.diagnostic(s, f"tensor escapes to Python: `{f.expression}`", "keep it a tensor", fix)


UT000 = Rule(
    code="UT000",
    name="parse-error",
    summary="The file cannot be parsed.",
    what="Reports files that cannot be parsed.",
    why="Nothing else can be checked in them.",
    example="def f(:\n    pass\n",
    use_instead="def f():\n    pass\n",
    detect=_detect_parse,
)
UT101 = Rule(
    code="UT101",
    name="data-dependent-branch",
    summary="Branch on tensor values.",
    what="Reports `if` statements whose condition depends on tensor values.",
    why="The tracer records one side only.",
    example="if x.sum() > 0:\n    x = -x\n",
    use_instead="x = torch.where(x.sum() > 0, -x, x)\n",
    detect=_detect_branch(Level.DATA),
)
UT103 = Rule(
    code="UT103",
    name="shape-dependent-branch",
    summary="Branch on tensor shapes.",
    what="Reports `if` statements on shapes.",
    why="The traced graph bakes in the shape.",
    example="if x.shape[0] > 1:\n    pass\n",
    use_instead="",
    detect=_detect_branch(Level.SHAPE),
    default_enabled=False,
)
UT201 = Rule(
    code="UT201",
    name="tensor-to-python",
    summary="Tensor value turned into a Python value.",
    what="Reports `.item()` and `.tolist()`.",
    why="The value becomes a constant in the trace.",
    example="n = x.sum().item()\n",
    use_instead="n = x.sum()\n",
    detect=_detect_escape,
)
RULES = (UT000, UT101, UT103, UT201)


def install(patch=None):
    """Swap the engine and the registry for the fakes (``patch`` is a pytest
    ``monkeypatch``; without one the swap is permanent, for the script mode)."""
    import analyzer.engine
    import analyzer.rules

    setter = patch.setattr if patch is not None else setattr
    setter(analyzer.engine, "analyze_file", fake_analyze_file)
    setter(analyzer.rules, "all_rules", lambda: RULES)


if __name__ == "__main__":
    install()
    from analyzer.cli import main

    sys.exit(main())
