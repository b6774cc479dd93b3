"""Module attributes that forward assigns and reads back in the same call
(`self.corr_pyramid = pyramid` in one method, read by the next), as call-local state.

Eager PyTorch keeps the last value on the module after the call. That changes no
later output as long as every call assigns the attribute before it reads it: then
each call sees only its own value, and the graph (which cannot keep state between
runs) computes the same. So an assignment is recorded for this export only, never
made on the live module, and later reads in the call see it. Refused: an attribute
read before forward assigns it (eager would read the previous call's value there),
replacing a submodule or parameter (the module's own state), and an assignment under a
data-dependent `if` or loop (which value is current would then depend on the data).

A buffer replaced by a value computed from constants and parameters only (a table
rebuilt for the input's size: `if self.rel_indices.shape[1] != N: self.rel_indices =
self.get_rel_indices(N)`) is a cache: every call that assigns it computes the same value
the graph computes. Refused still when the graph has read the buffer's earlier value:
eager's next call would read the new one."""

from __future__ import annotations

import torch

from lowering.graph import Value
from lowering.interp.memo_caches import _computed_from_constants
from lowering.interp.values import MISSING


def _graph_reads(graph, name: str) -> bool:
    """Some node of `graph` (a builder, or a finished If / Loop body) or of its subgraphs
    takes the value `name`."""
    nodes = graph.nodes if hasattr(graph, "nodes") else graph.node
    return any(name in node.input or any(_graph_reads(sub, name) for sub in _subgraphs(node)) for node in nodes)


def _subgraphs(node):
    for attribute in node.attribute:
        if attribute.HasField("g"):
            yield attribute.g
        yield from attribute.graphs


class ModuleAttributes:
    def module_attribute(self, module: torch.nn.Module, attr: str):
        """The value forward assigned to `module.attr` in this call, else MISSING (and the
        read is noted, to refuse a later assignment)."""
        key = (id(module), attr)
        written = self.attribute_writes.get(key)
        if written is not None:
            self.check_read(f"{type(module).__name__}.{attr}", written[1])  # not left stale by an in-place update
            return written[1]
        self.attribute_reads.add(key)
        return MISSING

    def assign_module_attribute(self, module: torch.nn.Module, attr: str, value, text: str) -> None:
        key = (id(module), attr)
        cached_buffer = attr in module._buffers and self._recomputed_buffer(module, attr, value)
        if not cached_buffer and (attr in module._modules or attr in module._parameters or attr in module._buffers):
            raise self.error(f"assigning `{text}` in forward replaces a submodule, parameter or buffer: the module's "
                             "state changes for the next call", "keep per-call state in local variables",
                             construct="assign")
        if self.g.parent is not None:
            raise self.error(f"assigning `{text}` inside a data-dependent `if` or loop: the module's state would "
                             "depend on the data", "keep per-call state in local variables", construct="assign")
        if key in self.attribute_reads and not cached_buffer:
            raise self.error(f"`{text}` is read before forward assigns it: eager PyTorch reads the value the previous "
                             "call left there, which an exported graph cannot keep", "keep per-call state in local "
                             "variables (pass it as an argument)", construct="assign")
        self.attribute_writes[key] = (module, value)  # the module too: its id stays unique while held

    def _recomputed_buffer(self, module: torch.nn.Module, attr: str, value) -> bool:
        """`module.attr = value` replaces a buffer by a value of parameters and constants
        only, at the top of the graph, and no node has read the buffer's earlier value."""
        if self.g.parent is not None or not isinstance(value, Value):
            return False
        if not _computed_from_constants(self.g, [value]):
            return False
        old = module._buffers.get(attr)
        name = self.tensor_names.get(id(old)) if old is not None else None
        return name is None or not _graph_reads(self.g.root, name)

    def update_assigned_attributes(self, old, new) -> None:
        """An in-place update of a tensor that forward assigned to a module attribute: the
        attribute sees it too."""
        for key, (module, value) in self.attribute_writes.items():
            if value is old:
                if self.g.parent is not None:
                    raise self.error(f"in-place update, inside a data-dependent `if` or loop, of a tensor assigned to "
                                     f"`{type(module).__name__}.{key[1]}`", "update out of place", construct="inplace")
                self.attribute_writes[key] = (module, new)
