"""The UT101 fixes write the torch module by a name that is the torch module where they
edit (`analyzer.fixes.torch_name`): never `torch.where` where `torch` is a parameter, a
local, a loop, comprehension or `global` variable, or numpy; the alias of
`import torch as th` when `torch` is not bound; no fix, and why, when no name is."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
import torch
from libcst.metadata import MetadataWrapper, PositionProvider

from analyzer.fixes.torch_name import ModuleTorch, globals_in_tree, torch_name
from analyzer.fixes.where import rewrite_where

from .test_branch_fixes import fixed, refused, run, same_eager, ut101

WHERE_IF = """\
if x.sum() > 0:
    y = x * 2
else:
    y = -x
return y
"""
NO_OTHER = ", and no other name here is: add `import torch as th` for a fix"


def model(head: str, signature: str, body: str) -> str:
    """``head`` (its lines first), two blank lines, ``class M`` and its ``forward``, whose
    body starts on line len(head lines) + 5."""
    body = textwrap.indent(textwrap.dedent(body), " " * 8)
    return f"{head}\n\n\nclass M(nn.Module):\n    def forward({signature}):\n{body}"


def forward_of(source: str) -> str:
    return source.split("def forward(", 1)[1]


SHADOWS = {
    "parameter": (
        "import torch\nfrom torch import nn",
        "self, x, torch=None",
        WHERE_IF,
        "`torch` here is a parameter of `forward`, not the torch module" + NO_OTHER,
    ),
    "local": (
        "import torch\nfrom torch import nn",
        "self, x",
        "torch = 2\n" + WHERE_IF,
        "`torch` here is a variable of `forward`, not the torch module" + NO_OTHER,
    ),
    "local assigned after the if": (
        "import torch\nfrom torch import nn",
        "self, x",
        WHERE_IF.replace("return y", "torch = y\nreturn torch"),
        "`torch` here is a variable of `forward`, not the torch module" + NO_OTHER,
    ),
    "loop variable": (
        "import torch\nfrom torch import nn",
        "self, x",
        "for torch in range(2):\n    x = x + 1\n" + WHERE_IF,
        "`torch` here is a loop variable of `forward`, not the torch module" + NO_OTHER,
    ),
    "global": (
        "import numpy\nimport torch\nfrom torch import nn\n\n\ndef use_numpy():\n    global torch\n    torch = numpy",
        "self, x",
        WHERE_IF,
        "a function declares `global torch` (line 7) and may rebind it" + NO_OTHER,
    ),
    "global in forward": (
        "import torch\nfrom torch import nn",
        "self, x",
        "global torch\n" + WHERE_IF,
        "a function declares `global torch` (line 7) and may rebind it" + NO_OTHER,
    ),
    "numpy as torch": (
        "import numpy as torch\nfrom torch import nn",  # `from torch import nn` is the package; `torch` is numpy
        "self, x",
        WHERE_IF,
        "`torch` is bound by `import numpy as torch` in the module, not the torch module" + NO_OTHER,
    ),
    "torch and numpy as torch": (
        "import torch\nimport numpy as torch\nfrom torch import nn",
        "self, x",
        WHERE_IF,
        "`torch` is bound by `import numpy as torch` in the module as well as the torch module" + NO_OTHER,
    ),
    "only an alias, shadowed": (
        "import torch as th\nfrom torch import nn",
        "self, x, th=None",
        WHERE_IF,
        "`torch` is not imported in this module; `th` here is a parameter of `forward`, not the torch module",
    ),
    "only from-imports": (
        "from torch import nn",
        "self, x",
        WHERE_IF,
        "`torch` is not imported in this module",
    ),
    "lazy import after the if": (
        "from torch import nn",
        "self, x",
        WHERE_IF.replace("return y", "import torch\nreturn torch.relu(y)"),
        "`torch` is imported in `forward` only after this line" + NO_OTHER,
    ),
}


@pytest.mark.parametrize("case", SHADOWS, ids=list(SHADOWS))
def test_no_fix_where_no_name_is_the_torch_module_and_the_finding_says_why(case):
    head, signature, body, why = SHADOWS[case]
    source = model(head, signature, body)
    compile(source, "m.py", "exec")
    assert refused(source) == why + ")"


def test_the_alias_torch_was_imported_as_is_written_where_torch_is_not_bound():
    source = model("import torch as th\nfrom torch import nn", "self, x", WHERE_IF)
    after = same_eager(source, [(torch.ones(2, 3),), (-torch.ones(2, 3),)])
    assert "y = th.where(x.sum() > 0, x * 2, -x)" in after
    assert "torch.where" not in after.replace("th.where", "")


def test_a_parameter_named_torch_gets_the_alias_and_the_same_eager_result():
    source = model("import torch\nimport torch as th\nfrom torch import nn", "self, x, torch=None", WHERE_IF)
    after = same_eager(source, [(torch.ones(2, 3),), (-torch.ones(2, 3),)])
    assert "y = th.where(x.sum() > 0, x * 2, -x)" in after


def test_every_rewrite_uses_the_alias():
    """torch.cond, torch._check, torch.where of a ternary, torch.logical_* of and/or/not."""
    head = "import torch as th\nfrom torch import nn"
    cond = model(head, "self, x", """
        if x.mean() > 0 and x.max() < 9:
            x = x * 2
        return x
    """)
    after = same_eager(cond, [(torch.ones(2, 3),), (-torch.ones(2, 3),), (torch.full((2, 3), 10.0),)])
    assert "x = th.cond(th.logical_and(x.mean() > 0, x.max() < 9), true_fn, false_fn, (x,))" in after
    ternary = model(head, "self, x", "return x * 2 if x.mean() > 0 else x - 1\n")
    after = same_eager(ternary, [(torch.ones(2, 3),), (-torch.ones(2, 3),)])
    assert "return th.where(x.mean() > 0, x * 2, x - 1)" in after
    check = model(head, "self, x", "assert (x >= 0).all()\nreturn x + 1\n")
    assert "th._check((x >= 0).all().item())" in fixed(check)
    for after in (fixed(cond), fixed(ternary), fixed(check)):
        compile(after, "m.py", "exec")
        assert "torch." not in forward_of(after)


def test_torch_calls_in_the_branches_count_as_torch_only_through_the_module_name():
    """`th.abs(x)` is a torch function; `torch.abs(x)` where `torch` is a parameter is a
    call on the parameter: not known to be free of side effects, so no `where` (which
    evaluates both sides); a `cond` takes the parameter as one of its operands."""
    body = WHERE_IF.replace("y = x * 2", "y = th.abs(x)")
    after = same_eager(model("import torch as th\nfrom torch import nn", "self, x", body),
                       [(torch.ones(2, 3),), (-torch.ones(2, 3),)])
    assert "y = th.where(x.sum() > 0, th.abs(x), -x)" in after
    shadowed = model("import torch\nimport torch as th\nfrom torch import nn", "self, x, torch",
                     WHERE_IF.replace("y = x * 2", "y = torch.abs(x)"))
    after = fixed(shadowed)
    assert "where" not in after and "y = th.cond(x.sum() > 0, true_fn, false_fn, (torch, x))" in after
    assert "        def true_fn(torch, x):\n            y = torch.abs(x)\n" in after


def test_names_bound_elsewhere_do_not_shadow():
    """A comprehension's variable does not leak (Python 3), a class attribute is not seen
    from a method, another function's local is its own, and a lazy `import torch` before
    the `if` is the module."""
    source = model("import torch\nfrom torch import nn", "self, x", """
        names = [torch for torch in ("a", "b")]
        if x.sum() > 0:
            y = x * 2
        else:
            y = -x
        return y
    """).replace("class M(nn.Module):\n", "class M(nn.Module):\n    torch = None\n\n", 1)
    source += "\n\ndef helper(torch):\n    return torch\n"
    after = same_eager(source, [(torch.ones(2, 3),), (-torch.ones(2, 3),)])
    assert "y = torch.where(x.sum() > 0, x * 2, -x)" in after
    lazy = model("from torch import nn", "self, x", "import torch\n" + WHERE_IF)
    assert "y = torch.where(x.sum() > 0, x * 2, -x)" in same_eager(lazy, [(torch.ones(2, 3),), (-torch.ones(2, 3),)])


def test_a_comprehension_variable_shadows_inside_the_comprehension():
    head = "import torch\nfrom torch import nn"
    body = "rows = [r * 2 if r.sum() > 0 else -r for r in x.unbind(0)]\nreturn rows\n"
    assert "[torch.where(r.sum() > 0, r * 2, -r) for r in x.unbind(0)]" in fixed(model(head, "self, x", body))
    shadowed = body.replace("for r in x.unbind(0)", "for r, torch in zip(x.unbind(0), range(9))")
    assert refused(model(head, "self, x", shadowed)) == (
        "`torch` here is a variable of the comprehension, not the torch module" + NO_OTHER + ")")
    rows = torch.tensor([[1.0, 2.0], [-3.0, -1.0]])
    aliased = same_eager(model(head + "\nimport torch as th", "self, x", shadowed), [(rows,)])
    assert "[th.where(r.sum() > 0, r * 2, -r) for r, torch in zip(x.unbind(0), range(9))]" in aliased
    torch.testing.assert_close(run(aliased, rows),
                               [torch.tensor([2.0, 4.0]), torch.tensor([3.0, 1.0])])


def names_at(source: str) -> list[str | None]:
    """`torch_name` at every conditional expression of ``source`` (whatever untrace
    reports: lambdas' bodies are not analysed, the names in them are still resolved)."""
    tree = cst.parse_module(textwrap.dedent(source))
    wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    parents = {child: node for node in positions for child in node.children}

    def line_of(node):
        return positions[node].start.line if node in positions else None

    module = ModuleTorch(tree, globals_in_tree(tree, line_of))
    points = sorted((n for n in positions if isinstance(n, cst.IfExp)),
                    key=lambda n: (positions[n].start.line, positions[n].start.column))
    return [torch_name(n, parents, line_of, module).name for n in points]


def test_lambda_parameters_and_what_is_evaluated_outside_a_scope():
    assert names_at("""\
        import torch
        import torch as th
        f = lambda torch: 1 if a else 2
        g = lambda torch=(1 if a else 2): torch
        def h(x, torch=(1 if a else 2)):
            return x
        def k():
            return [1 if a else 2 for torch in (1 if a else 2,)]
        class K:
            torch = 1
            v = 1 if a else 2
            def m(self):
                return 1 if a else 2
    """) == ["th", "torch", "torch", "th", "torch", "th", "torch"]


def test_rewrite_where_follows_the_same_rule():
    """The file-level `rewrite_where` asks the same helper."""
    shadow = model("import torch\nfrom torch import nn", "self, x, torch=None", WHERE_IF)
    assert "        if x.sum() > 0:\n" == shadow.splitlines(keepends=True)[6]
    result = rewrite_where(shadow, [7])
    assert result.rewritten == [] and result.source == shadow
    assert result.skipped[7].startswith("`torch` here is a parameter of `forward`")
    alias = model("import torch as th\nfrom torch import nn", "self, x", WHERE_IF)
    result = rewrite_where(alias, [7])
    assert result.rewritten == [7] and "y = th.where(x.sum() > 0, x * 2, -x)" in result.source


def test_every_shadowing_form_still_reports_the_hazard():
    for head, signature, body, _ in SHADOWS.values():
        (finding,) = ut101(model(head, signature, body))
        assert finding.fix is None
