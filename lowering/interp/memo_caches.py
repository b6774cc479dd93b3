"""Caches that forward fills with values computed from parameters and constants only
(timm's `if key not in self.attention_bias_cache: self.attention_bias_cache[key] =
self.attention_biases[:, self.attention_bias_idxs]`).

A dict that outlives the call is state: eager keeps what forward puts there for the next
call, and the graph cannot keep anything between runs. But when the value put there
does not depend on forward's inputs, every later call would compute the same value, so
reading it back from the cache or computing it afresh (what the graph does) agree. Such
a write is recorded for this export only (the live dict is left as it was); `key in
cache` and `cache[key]` see it. Any other read of a cache so filled (iteration, `len`,
methods) and an in-place update of a cached tensor are refused; a value that depends
on the inputs keeps the refusal of state that outlives the call."""

from __future__ import annotations

from lowering.graph import GraphBuilder, Value
from lowering.interp.values import _graph_leaves

# Nodes whose subgraphs read outer values that their inputs do not list.
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan"})


def _computed_from_constants(g: GraphBuilder, values: list[Value]) -> bool:
    """No path from a graph input to `values` (initializers and constants are leaves)."""
    root = g.root
    inputs = {v.name for v in root.inputs}
    producers = {out: node for node in root.nodes for out in node.output}
    seen: set[str] = set()
    stack = [v.name for v in values]
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in inputs:
            return False
        node = producers.get(name)
        if node is None:
            continue
        if node.op_type in _SUBGRAPH_OPS:
            return False
        stack.extend(node.input)
    return True


class MemoCaches:
    def memoize(self, cache: dict, key, value) -> bool:
        """Record `cache[key] = value` for this export when `cache` outlives the call and
        `value` is computed from parameters and constants only; False otherwise."""
        known = self.foreign.get(id(cache))
        if known is None or known[0] is not cache or self.g.parent is not None:
            return False
        if isinstance(value, (list, dict, set)):
            return False  # a mutable value could change after it is cached
        leaves = list(_graph_leaves(value))
        if not leaves or not _computed_from_constants(self.g, leaves):
            return False
        self.memo_writes.setdefault(id(cache), (cache, {}))[1][key] = value
        return True

    def memoized(self, cache) -> dict | None:
        """The entries forward cached in `cache` during this export, if any."""
        entry = self.memo_writes.get(id(cache))
        return entry[1] if entry is not None and entry[0] is cache else None

    def check_memo_read(self, container, what: str) -> None:
        if isinstance(container, dict) and self.memoized(container) is not None:
            raise self.error(f"{what} a dict that forward filled as a cache: only `key in cache` and `cache[key]` "
                             "read it", "read the cache by key", construct="cache")

    def check_memo_update(self, old: Value) -> None:
        for _, entries in self.memo_writes.values():
            if any(v is old for v in _graph_leaves(list(entries.values()))):
                raise self.error("in-place update of a tensor that forward cached in a dict that outlives the call: "
                                 "eager PyTorch would keep the update for the next call",
                                 "update a copy (`.clone()`) or out of place", construct="inplace")
