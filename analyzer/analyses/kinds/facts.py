"""Facts: what the value-kind analysis found at each site, before any rule looks at it.

A fact says *what happens* at a source span (a branch on a predicate of some level,
a loop bound, a tensor escaping into Python...). Rules turn facts into diagnostics;
the analysis never decides which code a finding gets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from analyzer.analyses.kinds.levels import Level
from analyzer.diagnostics import Fix


@dataclass(frozen=True, slots=True)
class Range:
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True, init=False, eq=False)
class Site:
    """Where a fact is: a file, a range in it, the function and the call path from
    `forward`. ``Site(path, line, column, end_line, end_column, function, call_path)``.

    The analysis makes sites from the IR's deferred spans (``Site(path, span=...)``, an
    `ir.Span`): finding a range costs a code-generation pass over the file, and most
    facts (every PyTorch call is one) never become a finding. The range is resolved when
    a rule reads it; sites compare, hash and pickle by their values."""

    path: str
    span: object  # anything with line, column, end_line, end_column: a Range or an ir.Span
    function: str | None
    call_path: tuple[str, ...]

    def __init__(self, path: str, line: int = 0, column: int = 0, end_line: int = 0, end_column: int = 0,
                 function: str | None = None, call_path: tuple[str, ...] = (), *, span=None):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "span", span if span is not None else Range(line, column, end_line, end_column))
        object.__setattr__(self, "function", function)
        object.__setattr__(self, "call_path", tuple(call_path))

    line = property(lambda self: self.span.line)
    column = property(lambda self: self.span.column)
    end_line = property(lambda self: self.span.end_line)
    end_column = property(lambda self: self.span.end_column)

    def _values(self) -> tuple:
        return (self.path, self.line, self.column, self.end_line, self.end_column, self.function, self.call_path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Site) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self):
        return (Site, self._values())

    def __repr__(self) -> str:
        return "Site({!r}, {}, {}, {}, {}, {!r}, {!r})".format(*self._values())

    def called_from(self, caller: str) -> "Site":
        return replace(self, call_path=(caller,) + self.call_path)

    @property
    def location(self) -> tuple:
        return (self.path, self.line, self.column)


@dataclass(frozen=True, slots=True)
class BranchFact:
    """A Python-level decision: ``if``/``elif``, ternary, ``assert``, ``and``/``or``."""

    site: Site
    construct: str  # "if" | "elif" | "ifexp" | "filter" (a comprehension's `if`) | "assert" | "and" | "or"
    level: Level
    predicate: str  # source text of the predicate
    exits_loop: bool = False  # its break/return is reported as the enclosing loop's hazard
    # What sort of object the names around the branch hold, for the fixes (``type_tag``):
    # ``name`` at the head, ``=name`` after the branch, ``self.attr``, and ``$pred``,
    # ``$then`` / ``$else`` (a ternary's sides), ``$return`` (the function's result).
    types: tuple[tuple[str, str], ...] = ()
    fix: "Fix | None" = None  # filled by analyzer.fixes.branches
    no_fix: str | None = None  # why there is no fix, when one was attempted
    # A Python predicate that is data only through the branches and loops its values were
    # bound under (`steps == 10` of a counter of a data loop's passes), not through a
    # value of its own (`n == 0` of `for n in t.tolist()`).
    by_control: bool = False

    def type_of(self, key: str) -> str:
        return dict(self.types).get(key, "unknown")


@dataclass(frozen=True, slots=True)
class LoopFact:
    """A loop whose trip count or exit depends on something other than constants."""

    site: Site
    construct: str  # "for" | "while"
    bound_level: Level  # what the iterable / while-condition depends on
    exit_level: Level  # what an early break/return inside depends on
    exit_lines: tuple[int, ...]  # lines of the data-dependent break/return statements
    header: str  # source text of the loop head
    # What sort of object the names around the loop hold, for the fixes (``type_tag``):
    # ``name`` at the loop head, ``<name`` before the loop, ``=name`` after it, ``self.attr``, ``$pred`` (a `while`
    # test), ``$break`` (the test of an `if` that breaks out of it).
    types: tuple[tuple[str, str], ...] = ()
    fix: "Fix | None" = None  # filled by analyzer.fixes.loops
    no_fix: str | None = None  # why there is no fix, when one was attempted

    def type_of(self, key: str) -> str:
        return dict(self.types).get(key, "unknown")


@dataclass(frozen=True, slots=True)
class IterationFact:
    """A tensor iterated or unpacked in Python: the tracer unrolls it over dim 0."""

    site: Site
    how: str  # "for" | "list" | "tuple" | "unpack" | "enumerate" | "zip" | "comprehension"
    expression: str


@dataclass(frozen=True, slots=True)
class EscapeFact:
    """A tensor value turned into a Python or NumPy value."""

    site: Site
    how: str  # "item" | "tolist" | "int" | "float" | "bool" | "numpy" | "np.<function>"
    target: str  # "python" | "numpy"
    expression: str
    fix: "Fix | None" = None  # filled by analyzer.fixes.escapes
    no_fix: str | None = None  # why there is no fix, when one was attempted


@dataclass(frozen=True, slots=True)
class InplaceFact:
    """An in-place write into a tensor: index assignment, ``index_put_``, ``x.add_()`` on an input."""

    site: Site
    how: str  # "index-assign" | "index_put_" | "inplace-input"
    expression: str
    # what is written: "input" | "parameter" | "view" (of another tensor) | "local" (made here)
    target: str = "input"
    fix: "Fix | None" = None  # filled by analyzer.fixes.branches (a write into a `forward` input)
    no_fix: str | None = None  # why there is no fix, when one was attempted


@dataclass(frozen=True, slots=True)
class OpFact:
    """A call that untrace resolved to PyTorch with certainty, reached from ``forward``:
    a torch function, a method on a value known to be a tensor, an ``nn`` module
    instance, or ``//`` between tensors.

    ``op`` is the name as the lowering op table spells it (``torch.topk``,
    ``torch.nn.functional.interpolate``, ``Tensor.sort``, ``torch.nn.MaxUnpool2d``,
    ``operator.floordiv``); ``keywords`` are the call's keyword arguments whose value is
    a literal, as ``(name, value)`` pairs, for rules that depend on them (``stable=True``).
    """

    site: Site
    op: str
    written: str  # the callee as written (`F.interpolate`, `x.sort`, `self.unpool`)
    keywords: tuple[tuple[str, object], ...] = ()

    @property
    def how(self) -> str:  # what `_dedupe` tells sites apart by
        return self.op


@dataclass(frozen=True, slots=True)
class TargetFact:
    """What the check targets, from ``[tool.untrace]``: the ONNX opset. Added by the
    runner (not the analysis), once per file, so that rules can depend on configuration."""

    site: Site
    opset: int


@dataclass(frozen=True, slots=True)
class ScriptabilityFact:
    """Whether ``torch.jit.script`` would accept ``cls`` (its ``forward`` and everything it
    compiles with it): ``reason`` is None when no construct TorchScript rejects was
    found, else the first one, e.g. "**kwargs", at ``where`` ("model.py:12")."""

    site: Site  # the class statement
    cls: str
    reason: str | None = None
    where: str | None = None


@dataclass(frozen=True, slots=True)
class TrainingOnlyFact:
    """A hazard fact (branch, loop, iteration, escape, in-place write) in code that runs
    only in training: under `if self.training`, behind `labels is not None` where
    `labels` defaults to None, or after `if not self.training: return`. An eval-mode
    export never runs it; UT106 (off by default) reports it."""

    site: Site
    fact: "Fact"

    @property
    def how(self) -> str:  # what `_dedupe` tells sites apart by
        inner = self.fact
        return f"training:{type(inner).__name__}:{getattr(inner, 'construct', getattr(inner, 'how', ''))}"

    def unwrapped(self) -> "Fact":
        """The hazard as its own rule sees it, at this fact's site and call path."""
        return replace(self.fact, site=self.site)


@dataclass(frozen=True, slots=True)
class ParseErrorFact:
    site: Site
    message: str


Fact = (BranchFact | LoopFact | IterationFact | EscapeFact | InplaceFact | OpFact | TargetFact | ScriptabilityFact
        | TrainingOnlyFact | ParseErrorFact)
