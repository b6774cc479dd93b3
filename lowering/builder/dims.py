"""Shape arithmetic over dims that are ints, symbols or unknown: merging two facts about a
dim, the dims of If / Loop outputs, Reshape and Expand."""

from __future__ import annotations

import math

from lowering.builder.value import Dim, Shape


def _merge_dims(a: Dim, b: Dim) -> Dim:
    """Two facts about the same dim: the more specific one wins (an int over a symbol)."""
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    return a if a is not None else b


def _merge_shapes(inferred: Shape, ours: Shape) -> Shape:
    if inferred is None:
        return ours
    if ours is None or len(ours) != len(inferred):
        return inferred
    return tuple(_merge_dims(a, b) for a, b in zip(inferred, ours))


def _join_dims(a: Dim, b: Dim) -> Dim:
    """The dim of a value that is either a or b (If outputs)."""
    return a if a == b else None


def _reshape_dims(in_shape: Shape, target: tuple[Dim, ...], allowzero: int) -> Shape:
    dims: list[Dim] = []
    minus_one = None
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            dims.append(in_shape[i] if in_shape is not None and i < len(in_shape) else None)
        elif d == -1:
            minus_one = i
            dims.append(None)
        else:
            dims.append(d)
    if minus_one is not None and in_shape is not None:
        known_in = [d for d in in_shape]
        rest = [d for i, d in enumerate(dims) if i != minus_one]
        if all(isinstance(d, int) for d in known_in) and all(isinstance(d, int) for d in rest):
            denom = math.prod(rest)
            if denom:
                dims[minus_one] = math.prod(known_in) // denom
        elif len(rest) == len(known_in) - 1:
            # [a, b, S] -> [a, b, -1] style: the unknown dim is the one left over.
            remaining = list(known_in)
            for d in rest:
                if d in remaining:
                    remaining.remove(d)
                else:
                    remaining = None
                    break
            if remaining is not None and len(remaining) == 1:
                dims[minus_one] = remaining[0]
    return tuple(dims)


def _broadcast_dims(a: Shape, b: tuple[Dim, ...]) -> Shape:
    if a is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out: list[Dim] = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == y:
            out.append(x)
        elif isinstance(x, int):
            out.append(x)
        elif isinstance(y, int):
            out.append(y)
        else:
            out.append(None)
    return tuple(out)

