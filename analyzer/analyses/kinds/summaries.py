"""The records the value-kind analysis keeps between functions and files: per-function
summaries, class tables, call frames, and the limits that bound the analysis."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

from analyzer.analyses.kinds.facts import Fact
from analyzer.analyses.kinds.values import Value
from analyzer.analyses.project.index import ClassKey
from analyzer.frontend import ir

MAX_CALL_DEPTH = 8
# Modules one star-import lookup may read. A name missing from a package that
# star-imports every submodule (`transformers.models`) would otherwise parse the package.
STAR_SEARCH_LIMIT = 32
BUILTIN_NAMES = frozenset(dir(builtins))
RETURN = "$return"

BOOL_METHODS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor",
    "isnan", "isinf", "isfinite", "bool", "any", "all", "isclose", "isin", "signbit", "isneginf", "isposinf",
})
_ARITH_OPS = frozenset({"+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"})


@dataclass
class Summary:
    returns: Value
    facts: list[Fact] = field(default_factory=list)
    reads: frozenset[str] = frozenset()  # the files this result was computed from


@dataclass
class ClassInfo:
    key: ClassKey
    node: ir.ClassDef
    bases: list[Value]
    attributes: dict[str, Value] | None = None  # filled lazily from __init__
    reads: frozenset[str] = frozenset()  # files read to resolve the bases
    attribute_reads: frozenset[str] = frozenset()  # files read to fill `attributes`


@dataclass
class Frame:
    """One function being analysed: where it lives and what `self` / closures are."""

    path: str
    qualname: str
    fn: ir.FunctionDef
    module: ir.Module
    self_value: Value | None = None
    class_key: ClassKey | None = None
    closure: dict[str, Value] = field(default_factory=dict)
    collect_attributes: dict[str, Value] | None = None  # __init__: where `self.x = v` goes


