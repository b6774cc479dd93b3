"""Comparisons: `<`, `==`, `in`, `is` and chains of them, over known values and graph
values; sequences that hold graph sizes (`x.shape != y.shape`) compare item by item."""

from __future__ import annotations

import operator

from analyzer.frontend import ir
from lowering import numpy_arrays
from lowering.graph import Value
from lowering.interp.chosen_identity import check_identity
from lowering.interp.python_state import has_varying_items
from lowering.interp.values import _contains_graph
from lowering.numpy_arrays import NDArray

_CMPOPS = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">": "gt", ">=": "ge"}

# What a tensor or a Python number compares unequal with, statically (`Tensor.__eq__(None)` is False).
_NEVER_EQUAL = (type(None), str, bytes)

_PY_CMP = {k: getattr(operator, v) for k, v in _CMPOPS.items()}


def _key_like(v) -> bool:
    """What a cache may be keyed by: a graph value, a number, a tuple of them (a shape)."""
    if isinstance(v, tuple):
        return bool(v) and all(_key_like(x) for x in v)
    return isinstance(v, (Value, int, float)) and not isinstance(v, bool)


class Comparisons:
    def _ev_Compare(self, e, frame):
        left_expr, left = e.left, self._operand(e.left, frame)
        result = None
        for op, comp in zip(e.ops, e.comparators):
            right = self._operand(comp, frame)
            if op in ("==", "!=", "is", "is not"):
                self.note_key_comparison(left_expr, left, comp, right)
            left_expr = comp
            if op in ("is", "is not"):
                r = check_identity(self, left, right)
                r = r if op == "is" else not r
            elif op in ("in", "not in") and isinstance(right, Value):
                r = self.tensor_contains(left, right)
                r = r if op == "in" else self.call_op("torch.logical_not", [r], {})
            elif op in ("in", "not in"):
                if isinstance(left, (Value, NDArray)) or isinstance(right, (Value, NDArray)):
                    raise self.error("`in` of a tensor in a Python container, or `in` a NumPy array, is not "
                                     "supported", construct="compare",
                                     hint="compare with `(t == v).any()`, or keep the values in a Python list")
                if has_varying_items(right):
                    raise self.refuse_varying_list(right, f"`{op}`")
                memo = self.memoized(right) if isinstance(right, dict) else None
                r = left in right or (memo is not None and left in memo)
                r = r if op == "in" else not r
            else:
                r = self.compare(op, left, right)
            result = r if result is None else self._and(result, r)
            left = right
        return result

    def _operand(self, expr, frame):
        self.attribute_source = None
        value = self.eval(expr, frame)
        self._operand_sources[id(expr)] = self.attribute_source if isinstance(expr, ir.Attribute) else None
        return value

    def note_key_comparison(self, left_expr, left, right_expr, right) -> None:
        """`n != self.key` of a graph number with a module attribute: noted, for a cache that
        the `if` it decides rebuilds (`module_attributes.cache_rebuild`)."""
        for expr, other in ((left_expr, right), (right_expr, left)):
            source = self._operand_sources.get(id(expr))
            if source is not None and source[2] is not other and _key_like(other):
                module, attr, _ = source
                self.key_comparisons.append(((id(module), attr), other))

    def tensor_contains(self, element, t: Value) -> Value:
        """`element in t` is `Tensor.__contains__`: `(element == t).any()`, a graph bool, for
        a tensor or a Python number; anything else raises in eager."""
        if not isinstance(element, (Value, bool, int, float)):
            raise self.error(f"`{type(element).__name__} in tensor`: Tensor.__contains__ only supports a tensor or "
                             "a number, and raises in eager", construct="compare",
                             hint="test a tensor or a number")
        return self.call_op("torch.any", [self.compare("==", element, t)], {})

    def _and(self, a, b):
        a, b = self.test_value(a), self.test_value(b)
        if isinstance(a, Value) or isinstance(b, Value):
            return self.call_op("torch.logical_and", [self.to_bool(a), self.to_bool(b)], {})
        return a and b

    def compare(self, op, a, b):
        for side in (a, b):
            if has_varying_items(side):
                raise self.refuse_varying_list(side, f"`{op}`")
        if isinstance(a, NDArray) or isinstance(b, NDArray):
            return numpy_arrays.compare(self, op, a, b)
        if isinstance(a, Value) or isinstance(b, Value):
            if op in ("==", "!=") and isinstance(b if isinstance(a, Value) else a, _NEVER_EQUAL):
                # A Python number, like a tensor, is never equal to None or a string: what eager answers
                # whatever the value (`seq_len != self._cached_len` with a cache that starts as None).
                return op == "!="
            return self.call_op(f"operator.{_CMPOPS[op]}", [a, b], {})
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and (_contains_graph(a) or _contains_graph(b)):
            return self.compare_sequences(op, a, b)
        return _PY_CMP[op](a, b)

    def compare_sequences(self, op, a, b):
        """`x.shape != y.shape`, `x.shape[1:] == (3, 4)` with sizes the graph computes:
        Python compares the items, so the graph does (a graph value's own `==` only tells
        whether two graph nodes are the same one). Items known to differ decide it."""
        if op not in ("==", "!="):
            raise self.error(f"`{op}` between sequences that hold sizes computed in the graph",
                             "compare the sizes one by one", construct="compare")
        equal = isinstance(a, list) == isinstance(b, list) and len(a) == len(b)
        terms = []
        for x, y in zip(a, b) if equal else ():
            same = True if x is y else self.compare("==", x, y)
            if isinstance(same, Value):
                terms.append(same)
            elif not same:
                equal = False
                break
        if not equal or not terms:
            return equal == (op == "==")
        result = terms[0]
        for term in terms[1:]:
            result = self._and(result, term)
        return result if op == "==" else self.call_op("torch.logical_not", [result], {})
