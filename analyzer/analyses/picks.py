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

from analyzer.analyses.levels import Level
from analyzer.analyses.values import UNKNOWN, Value


def picked_item(elem: Value, level: Level) -> Value:
    """The item, of common value ``elem``, picked by an index of ``level``."""
    if elem.type == "tensor":
        return elem  # a tensor's values are data already; its shape is the items' shape
    if elem.type == "container" and elem.elems is not None and level > max(elem.level, elem.ctl):
        # `join` keeps `elems` only when every item has that many: the length is fixed.
        return replace(elem, elems=tuple((e or UNKNOWN).tainted(level) for e in elem.elems),
                       elem=(elem.elem or UNKNOWN).tainted(level))
    return elem.tainted(level)
