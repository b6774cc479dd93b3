"""UT101 fixes (`analyzer.fixes.branches`): which rewrite each site gets, its exact text,
and the reason when there is none. Small models also run before and after the fix."""

from __future__ import annotations

import textwrap

import pytest
import torch

from analyzer import check_source
from analyzer.runner import apply_fixes


def ut101(source: str):
    return [d for d in check_source(textwrap.dedent(source), "m.py") if d.code == "UT101"]


def fixed(source: str) -> str:
    source = textwrap.dedent(source)
    diagnostics = ut101(source)
    assert diagnostics and all(d.fix is not None for d in diagnostics), [d.suggestion for d in diagnostics]
    assert all(d.fix.applicability == "unsafe" for d in diagnostics)
    text, applied = apply_fixes(source, diagnostics, unsafe=True)
    assert len(applied) == len(diagnostics)
    return text


def refused(source: str) -> str:
    """Why the first UT101 finding of ``source`` has no fix."""
    diagnostic = ut101(source)[0]
    assert diagnostic.fix is None
    assert "not rewritten automatically: " in diagnostic.suggestion
    return diagnostic.suggestion.split("not rewritten automatically: ", 1)[1]


def run(source: str, *args):
    namespace: dict = {}
    exec(compile(source, "<m>", "exec"), namespace)  # noqa: S102 - our own test model
    torch.manual_seed(0)
    model = namespace["M"]().eval()
    with torch.no_grad():
        return model(*args)


def same_eager(source: str, inputs: list[tuple]) -> str:
    source = textwrap.dedent(source)
    after = fixed(source)
    for args in inputs:
        torch.testing.assert_close(run(after, *args), run(source, *args), rtol=0, atol=0)
    assert ut101(after) == []
    return after


HEAD = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.limit = 1.0
"""

ONE_SIDED = HEAD + """
    def forward(self, x):
        h = self.body(x)
        if h.abs().max() > self.limit:  # rescale
            # keep the direction
            h = h / h.abs().max()
            k = h * 2
        return h + x
"""

TAIL = HEAD + """
    def forward(self, x):
        if x.mean() > 0:
            return x
        y = self.body(x)
        return y - x
"""

TWO_RESULTS = HEAD + """
    def forward(self, x):
        a = x * 2
        if (x > 0).all() or x.sum() > 3:
            a = self.body(a)
            b = a + 1
        else:
            b = x
        return a, b
"""


def test_one_sided_if_becomes_torch_cond_with_the_rows_it_reads_and_writes():
    after = same_eager(ONE_SIDED, [(torch.full((2, 4), 0.1),), (torch.full((2, 4), 5.0),)])
    assert after.split("def forward(self, x):\n", 1)[1] == textwrap.indent(textwrap.dedent("""\
        h = self.body(x)
        def true_fn(h):
            # keep the direction
            h = h / h.abs().max()
            k = h * 2
            return h
        def false_fn(h):
            return h.clone()
        h = torch.cond(h.abs().max() > self.limit, true_fn, false_fn, (h,))  # rescale
        return h + x
    """), "        ")


def test_tail_return_becomes_return_torch_cond():
    after = same_eager(TAIL, [(torch.ones(2, 4),), (-torch.ones(2, 4),)])
    assert after.split("def forward(self, x):\n", 1)[1] == textwrap.indent(textwrap.dedent("""\
        def true_fn(x):
            return x.clone()
        def false_fn(x):
            y = self.body(x)
            return y - x
        return torch.cond(x.mean() > 0, true_fn, false_fn, (x,))
    """), "        ")


def test_two_results_and_a_python_or_in_the_condition():
    after = same_eager(TWO_RESULTS, [(torch.ones(2, 4),), (-torch.ones(2, 4),), (torch.tensor([[-1.0, 3, 1, 1]]),)])
    assert "a, b = torch.cond(torch.logical_or((x > 0).all(), x.sum() > 3), true_fn, false_fn, (a, x))" in after
    assert "return (a, b)" in after and "return (a.clone(), x.clone())" not in after
    assert "        def false_fn(a, x):\n            b = x\n            return (a.clone(), b.clone())\n" in after


def test_if_else_single_assignments_become_torch_where():
    source = HEAD + """
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = -x
        return y
"""
    after = same_eager(source, [(torch.ones(2, 4),), (-torch.ones(2, 4),)])
    assert "        y = torch.where(x.sum() > 0, x * 2, -x)\n" in after


def test_ternary_with_a_tensor_side_becomes_torch_where():
    source = HEAD + """
    def forward(self, x):
        return x * 2 if x.mean() > 0 else x - 1
"""
    after = same_eager(source, [(torch.ones(2, 4),), (-torch.ones(2, 4),)])
    assert "return torch.where(x.mean() > 0, x * 2, x - 1)" in after
    # A Python number on one side is allowed (torch.where takes scalars), which is one
    # reason the fix is unsafe: that path now gives a broadcast tensor, not the number.
    mixed = fixed(source.replace("x - 1", "0.5"))
    assert "return torch.where(x.mean() > 0, x * 2, 0.5)" in mixed


def test_assert_becomes_torch_check_and_still_raises():
    source = HEAD + """
    def forward(self, x):
        assert (x >= 0).all(), "negative input"
        return x + 1
"""
    after = same_eager(source, [(torch.ones(2, 4),)])
    assert 'torch._check((x >= 0).all().item(), lambda: "negative input")' in after
    with pytest.raises(AssertionError, match="negative input"):
        run(textwrap.dedent(source), -torch.ones(2, 4))
    with pytest.raises(RuntimeError, match="negative input"):
        run(after, -torch.ones(2, 4))


def test_branch_names_do_not_clash_with_the_functions_own():
    source = HEAD + """
    def forward(self, x):
        true_fn = x + 1
        if x.mean() > 0:
            x = x * 2
        return x + true_fn
"""
    after = fixed(source)
    assert "def true_fn_13(x):" in after and "torch.cond(x.mean() > 0, true_fn_13, false_fn_13, (x,))" in after


@pytest.mark.parametrize("body,why", [
    ("        if x.sum() > 0:\n            return x\n        x = x + 1\n", "returns early"),
    ("        if x.sum() > 0:\n            self.count = 1\n        return x\n", "assigns the attribute `self.count`"),
    ("        if x.sum() > 0:\n            x.add_(1)\n        return x\n", "evaluates `x.add_(1)` for its side effects"),
    ("        if x.sum() > 0:\n            x = x.add_(1)\n        return x\n", "calls the in-place `.add_()`"),
    ("        if x.sum() > 0:\n            n = x.max().item()\n            x = x * n\n        return x\n",
     "converts a tensor to a Python value (`.item()`)"),
    ("        if x.sum() > 0:\n            x[0] = 1\n        return x\n", "writes into `x` in place"),
    ("        if x.sum() > 0:\n            x += 1\n        return x\n", "updates `x` in place"),
    ("        n = 1\n        if x.sum() > 0:\n            n = 2\n        return x * n\n", "`n` is not a tensor after the `if`"),
    ("        flag = bool(x.any())\n        if flag:\n            x = -x\n        return x\n", "the condition is not a tensor"),
    ("        idx = torch.nonzero(x)\n        if idx.shape[0] > 0:\n            x = -x\n        return x\n",
     "the size of a tensor whose shape depends on data"),
    ("        if x.sum() > 0:\n            x = self.helper(x)\n        return x\n",
     "calls `self.helper()`, which untrace does not check for side effects"),
    ("        if x.sum() > 0:\n            x = -x\n        elif x.sum() < -5:\n            x = x * 2\n            print(x)\n"
     "        return x\n", "a branch of the `elif` chain evaluates `print(x)` for its side effects"),
    ("        if x.sum() > 0:\n            print(x)\n            x = -x\n        return x\n", "`print(x)`"),
    ("        if x.sum() > 0:\n            y = x\n        return y\n", "`y` may be undefined before the `if`"),
    ("        for i in range(3):\n            if x.sum() > i:\n                break\n            x = x + 1\n        return x\n",
     "its `break`/`return` leaves the loop"),  # the loop is UT102 too
])
def test_refusals_say_why(body, why):
    # a helper that writes an attribute: a helper that only computes its result is called
    # in a branch function (tests/fixes/test_helper_and_item_fixes.py)
    source = HEAD + "\n    def helper(self, x):\n        self.last = x\n        return x\n\n    def forward(self, x):\n" + body
    assert why in refused(source)


def test_and_in_a_value_is_refused_and_torch_must_be_imported():
    assert "returns one of its operands" in refused(
        HEAD + "\n    def forward(self, x):\n        ok = x.min() > 0 and x.max() < 9\n        return ok\n")
    assert "`torch` is not imported in this module" in refused(
        "from torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n"
        "            x = -x\n        return x\n")


def test_a_ternary_of_python_values_of_two_types_is_refused():
    # one type each: torch.sym_ite (tests/fixes/test_number_fixes.py)
    assert "numbers of two types" in refused(
        HEAD + "\n    def forward(self, x):\n        t = 1 if x.mean() > 0 else 2.0\n        return x / t\n")
    assert "not a number" in refused(
        HEAD + "\n    def forward(self, x):\n        t = 'a' if x.mean() > 0 else 'b'\n        return x, t\n")


def test_operands_with_side_effects_in_a_python_or_are_refused():
    assert "may have side effects" in refused(
        HEAD + "\n    def forward(self, x):\n        if x.sum() > 0 or self.body(x).sum() > 0:\n            x = -x\n"
               "        return x\n")


def test_a_comment_that_would_be_lost_refuses_the_fix():
    assert "comments inside the `if` would be lost" in refused(
        HEAD + "\n    def forward(self, x):\n        if x.sum() > 0:\n            x = -x\n            # note\n"
               "        else:\n            x = x * 2\n        return x\n")
    # a comment after the block belongs to the next statement, outside the edit
    after = fixed(HEAD + "\n    def forward(self, x):\n        if x.sum() > 0:\n            x = -x\n            # note\n"
                  "        return x\n")
    assert "# note\n        return x\n" in after


def test_edits_land_in_the_right_place_among_decorated_top_level_statements():
    # libcst's positions are computed per top-level statement (a large file would take
    # seconds otherwise): the edit's lines must still be the file's.
    source = textwrap.dedent('''\
        import functools
        import torch


        @functools.lru_cache
        def helper():
            return 1


        @torch.no_grad()
        class M(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    x = -x
                return x


        @functools.lru_cache
        def other():
            return 2
        ''')
    (diagnostic,) = ut101(source)
    (edit,) = diagnostic.fix.edits
    assert (edit.line, edit.column, edit.end_line) == (13, 9, 14)
    after = apply_fixes(source, [diagnostic], unsafe=True)[0]
    assert after.splitlines()[12:19] == [
        "        def true_fn(x):", "            x = -x", "            return x", "        def false_fn(x):",
        "            return x.clone()", "        x = torch.cond(x.sum() > 0, true_fn, false_fn, (x,))", "        return x"]
