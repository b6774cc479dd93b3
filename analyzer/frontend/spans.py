"""Source spans of the IR (`ir.Span`): 1-based lines and columns, ``end_column``
exclusive; resolved from the parse's positions on first use (`Span.deferred`)."""

from __future__ import annotations

from typing import Any


class Span:
    """A source range: ``Span(line, column, end_line, end_column)``; treat it as immutable.

    The front end makes *deferred* spans (`Span.deferred`): finding a node's position
    takes a code-generation pass over the whole file, more than the parse itself, and
    most files never report anything. The pass runs when a deferred span of the file is
    first read; spans compare, hash and pickle by their values."""

    # The resolver, the node and the last node of a deferred span are slots of their
    # own, not a tuple: a tree's IR holds one span per node (290,000 for 4 MB of
    # transformers models), and the tuple was half of each span's memory.
    __slots__ = ("_values", "_resolver", "_node", "_last")

    def __init__(self, line: int, column: int, end_line: int, end_column: int):
        self._values = (line, column, end_line, end_column)
        self._resolver = self._node = self._last = None

    @classmethod
    def deferred(cls, resolver: Any, node: Any, last: Any = None) -> "Span":
        """A span that `resolver.resolve(node, last)` computes on first use."""
        span = cls.__new__(cls)
        span._values = None
        span._resolver = resolver
        span._node = node
        span._last = last
        return span

    def _resolved(self) -> tuple[int, int, int, int]:
        values = self._values
        if values is None:
            values = self._values = self._resolver.resolve(self._node, self._last)
        return values

    @property
    def node(self) -> Any:
        """The libcst node a deferred span is of (None for a span made from numbers):
        what `--fix` rewrites."""
        return self._node

    def source_text(self) -> str | None:
        """The text of an expression's span without resolving it, when the resolver
        can render its node alone (`DeferredPositions.text_of`); else None."""
        if self._resolver is None or self._last is not None:
            return None
        text_of = getattr(self._resolver, "text_of", None)
        return text_of(self._node) if text_of is not None else None

    line = property(lambda self: self._resolved()[0])
    column = property(lambda self: self._resolved()[1])
    end_line = property(lambda self: self._resolved()[2])
    end_column = property(lambda self: self._resolved()[3])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Span) and self._resolved() == other._resolved()

    def __hash__(self) -> int:
        return hash(self._resolved())

    def __reduce__(self):
        return (Span, self._resolved())

    def __repr__(self) -> str:
        return "Span({}, {}, {}, {})".format(*self._resolved())

    def __str__(self) -> str:
        return "{}:{}-{}:{}".format(*self._resolved())


NO_SPAN = Span(0, 0, 0, 0)
