"""The simplest rewrite of a data-dependent ``if`` into exportable PyTorch:

    if <pred>:
        y = A               ->     y = torch.where(<pred>, A, B)
    else:
        y = B

``rewrite_where(source, lines) -> WhereRewrite`` rewrites the ``if`` statements that start
on ``lines`` (the UT101 sites: the caller decides which predicates are tensor-valued)
when, and only when:

- the ``if`` has a plain ``else`` (no ``elif``), and each branch is exactly one
  assignment ``name = expr`` to the same plain name, with no comments to lose (a comment
  on the ``if`` line moves to the new assignment);
- ``A`` and ``B`` are side-effect free and cannot raise where the original would not:
  names, attributes, numbers, arithmetic / comparison / unary operators, and calls of
  ``torch.*`` functions that are neither in-place (``_`` suffix) nor random;
- a name is the torch module at the ``if`` (``analyzer.fixes.torch_name``): ``torch``,
  or the alias it was imported as (``th.where``); a parameter or local named ``torch``
  is not.

Both sides are evaluated after the rewrite; that is why they must be side-effect free.
``torch.where`` broadcasts and promotes dtypes, so the rewrite preserves results only
when ``A`` and ``B`` have the same shape and dtype (the usual case, not provable from
the source): in ruff's terms it is an *unsafe* fix.

Every other ``if`` on ``lines`` is left alone, with the reason in ``skipped``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from analyzer.analyses.kinds import torch_api as api
from analyzer.fixes.torch_name import ModuleTorch, globals_in_tree, torch_name
from analyzer.frontend.positions import dotted_name as dotted

APPLICABILITY = "unsafe"

# torch functions whose result is random or that mutate global state.
_IMPURE_TORCH = frozenset({
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
    "multinomial", "normal", "poisson", "manual_seed", "seed", "dropout", "alpha_dropout",
    "feature_alpha_dropout", "save", "load", "set_default_dtype", "set_grad_enabled", "empty", "empty_like",
})


# Tensor methods that read their receiver and return a new value.
_PURE_TENSOR_METHODS = frozenset(
    m for m in api.TENSOR_METHODS
    if not m.endswith("_") and m not in api.PYTHON_ESCAPE_METHODS | api.NUMPY_ESCAPE_METHODS
    and m not in ("size", "dim", "numel", "nelement", "ndimension", "equal", "allclose", "tolist", "item")
)


@dataclass
class WhereRewrite:
    source: str
    rewritten: list[int] = field(default_factory=list)  # lines of the `if`s that were rewritten
    skipped: dict[int, str] = field(default_factory=dict)  # line -> why not




def side_effect_free(node, tensor_methods: bool = False, torch: str = "torch") -> bool:
    """True for the expressions the rewrite may evaluate unconditionally. With
    ``tensor_methods``, also calls of Tensor methods that neither write in place nor
    leave the graph (``x.abs().max()``): for operands known to be tensors. ``torch``:
    the name of the torch module there (``torch.abs`` through another name is a call of
    something else)."""
    def ok(sub) -> bool:
        return side_effect_free(sub, tensor_methods, torch)

    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(node, cst.Attribute):
        return dotted(node) is not None
    if isinstance(node, cst.BinaryOperation):
        return ok(node.left) and ok(node.right)
    if isinstance(node, cst.UnaryOperation):
        return ok(node.expression)
    if isinstance(node, cst.Comparison):
        return ok(node.left) and all(
            ok(c.comparator) and not isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot))
            for c in node.comparisons)
    if isinstance(node, cst.Call):
        if not all(not a.star and ok(a.value) for a in node.args):
            return False
        name = dotted(node.func)
        if name is not None and name.startswith(torch + ".") and name.count(".") == 1:
            function = name.split(".", 1)[1]
            return not function.endswith("_") and function not in _IMPURE_TORCH
        if tensor_methods and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            return (method in _PURE_TENSOR_METHODS and not (isinstance(node.func.value, cst.Name)
                                                             and node.func.value.value == "self")
                    and ok(node.func.value))
        return False
    return False


def _single_assignment(block) -> tuple[str, cst.BaseExpression] | None:
    if not isinstance(block, cst.IndentedBlock) or len(block.body) != 1:
        return None
    line = block.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    stmt = line.body[0]
    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    return target.value, stmt.value


class _Rewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int], result: WhereRewrite, module: cst.Module, torch_at):
        super().__init__()
        self.lines = lines
        self.result = result
        self.module = module
        self.torch_at = torch_at  # libcst If -> TorchName
        self.elifs: set[int] = set()

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))

    def leave_If(self, original: cst.If, updated: cst.If):
        line = self.get_metadata(PositionProvider, original).start.line
        if line not in self.lines:
            return updated
        if id(original) in self.elifs:
            self.result.skipped[line] = "an `elif` (its chain is not rewritten)"
            return updated
        torch = self.torch_at(original)
        why = torch.why_not if torch.name is None else refuse_where(original, self.module, torch.name)
        if why:
            self.result.skipped[line] = why
            return updated
        self.result.rewritten.append(line)
        return where_assignment(original, torch=torch.name)


def where_assignment(node: cst.If, test: cst.BaseExpression | None = None,
                     torch: str = "torch") -> cst.SimpleStatementLine:
    """``y = torch.where(test, A, B)`` for an ``if`` that ``refuse_where`` accepts
    (``torch``: the name of the torch module at the ``if``)."""
    name, then_value = _single_assignment(node.body)
    _, else_value = _single_assignment(node.orelse.body)
    call = cst.Call(
        func=cst.Attribute(cst.Name(torch), cst.Name("where")),
        args=[cst.Arg(test if test is not None else node.test), cst.Arg(then_value), cst.Arg(else_value)],
    )
    return cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)],
        leading_lines=node.leading_lines,
        trailing_whitespace=node.body.header,  # a comment on the `if` line stays on its line
    )


def where_target(node: cst.If) -> str | None:
    side = _single_assignment(node.body)
    return side[0] if side else None


def refuse_where(node: cst.If, module: cst.Module, torch: str = "torch") -> str | None:
    """Why ``node`` is not of the form ``if p: y = A / else: y = B`` with side-effect-free
    ``A`` and ``B`` (``torch``: the name of the torch module there), or None."""
    if not isinstance(node.orelse, cst.Else):
        return "no plain `else` (an `elif` chain or a one-sided `if`)"
    then_side = _single_assignment(node.body)
    else_side = _single_assignment(node.orelse.body)
    if then_side is None or else_side is None:
        return "a branch is not exactly one assignment to a plain name"
    if then_side[0] != else_side[0]:
        return f"the branches assign different names (`{then_side[0]}`, `{else_side[0]}`)"
    for side in (then_side[1], else_side[1]):
        if not side_effect_free(side, torch=torch):
            return f"`{module.code_for_node(side)}` may have side effects or raise when evaluated " \
                   "on the other path"
    inside = node.with_changes(leading_lines=(), body=node.body.with_changes(header=cst.TrailingWhitespace()))
    if "#" in module.code_for_node(inside):
        return "comments inside the `if` would be lost"
    return None


def rewrite_where(source: str, lines: Iterable[int]) -> WhereRewrite:
    """Rewrite the qualifying ``if``/``else`` statements that start on ``lines``."""
    lines = set(lines)
    module = cst.parse_module(source)
    result = WhereRewrite(source)
    if not lines:
        return result
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    parents = {child: node for node in positions for child in node.children}

    def line_of(node) -> int | None:
        where = positions.get(node)
        return where.start.line if where is not None else None

    module_torch = ModuleTorch(module, globals_in_tree(module, line_of))
    new = wrapper.visit(_Rewriter(lines, result, module, lambda node: torch_name(node, parents, line_of, module_torch)))
    result.source = new.code
    return result


def where_lines(facts, path: str) -> list[int]:
    """The UT101 `if` sites in file `path` among its facts (the candidates)."""
    from analyzer.analyses.kinds.facts import BranchFact
    from analyzer.analyses.kinds.levels import Level

    return sorted({f.site.line for f in facts if isinstance(f, BranchFact) and f.construct == "if"
                   and f.level == Level.DATA and not f.exits_loop and f.site.path == path})
