"""An item picked from a Python container by an index that is not a constant
(`policy = self._policies[int(torch.randint(n, ()))]`), for the value-kind analysis.

Which item is picked depends on the index, so what the item holds is as dynamic as the
index. Its length need not be: when every item has the same known length (all the
policies are pairs), a loop over the picked item runs that many times whatever the index,
and unpacking it fills the same names. Only the item's elements then take the index's
level; the trip count stays what the container's items fix.
"""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.levels import Level
from analyzer.analyses.kinds.values import KNOWN_WHEN_TRACED, UNKNOWN, Value, known_level


def picked_item(elem: Value, level: Level) -> Value:
    """The item, of common value ``elem``, picked by an index of ``level``: every value
    in it (down through nested items of known length, `for name, p, m in policy`) is as
    dynamic as the index; the lengths `join` kept known (every item has that many) stay."""
    if elem.type == "tensor":
        # A tensor's values are data already (its shape is the items' shape), unless they
        # are known when traced: which of them was picked is then as dynamic as the index.
        return replace(elem, ref=None) if elem.ref in KNOWN_WHEN_TRACED and level > known_level(elem.ref) else elem
    if elem.type == "container" and elem.elems is not None and level > max(elem.level, elem.ctl):
        return replace(elem, elems=tuple(picked_item(e or UNKNOWN, level) for e in elem.elems),
                       elem=picked_item(elem.elem or UNKNOWN, level))
    return elem.tainted(level)
