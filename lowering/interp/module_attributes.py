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
eager's next call would read the new one.


A tensor attribute replaced by an idempotent conversion of itself (`self.mean =
self.mean.type_as(x)`, `.to(x.device)`, `.float()`, `.contiguous()`, `.detach()`, and chains
of these) is at a fixed point after the first call: with the export's fixed input dtypes,
every later call converts the converted value to itself. So the graph uses the converted
value, and the write is a call-local cache, as long as nothing in the call read the old
value before (`self.mean * 2` first would see the previous call's conversion in eager).
Buffers too (their dtype changes as a plain attribute's does); a parameter is refused, as
eager refuses to assign a tensor to one. Any other update of the old value
(`self.count = self.count + 1`) stays refused: it is no fixed point."""

from __future__ import annotations

import torch

from analyzer.frontend import expr_text, ir

from lowering.graph import Value
from lowering.interp.memo_caches import _computed_from_constants
from lowering.interp.values import MISSING


# Tensor methods `f` with f(f(t)) == f(t) for the same arguments, whose arguments can only
# name a dtype, a device, a memory format or a tensor whose dtype and device they take.
_IDEMPOTENT_CONVERSIONS = frozenset({"type_as", "to", "float", "half", "double", "bfloat16", "cpu", "cuda",
                                     "contiguous", "detach", "type"})


def _same_expression(a, b) -> bool:
    if isinstance(a, ir.Name) and isinstance(b, ir.Name):
        return a.id == b.id
    if isinstance(a, ir.Attribute) and isinstance(b, ir.Attribute):
        return a.attr == b.attr and _same_expression(a.value, b.value)
    return False


def _conversion_chain(s) -> list | None:
    """For `self.attr = self.attr.to(x.device).type_as(x)`: its calls, innermost first;
    None when the statement is not a chain of idempotent conversions of the attribute itself."""
    if not isinstance(s, ir.Assign) or len(s.targets) != 1 or not isinstance(s.targets[0], ir.Attribute):
        return None
    e, calls = s.value, []
    while isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and e.func.attr in _IDEMPOTENT_CONVERSIONS:
        if e.func.attr == "type" and not e.args:
            return None  # `.type()` is the type's name
        calls.append(e)
        e = e.func.value
    return calls[::-1] if calls and _same_expression(e, s.targets[0]) else None


def converts_itself(s) -> bool:
    return _conversion_chain(s) is not None


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

    def convert_module_attribute(self, s, frame) -> bool:
        """`self.attr = self.attr.type_as(x)` and the like (`converts_itself`): the converted
        value, call-local; False when the statement is not that, or its target no module's
        tensor attribute (the statement is then run as any other)."""
        target = s.targets[0]
        module = self.eval(target.value, frame)
        if not isinstance(module, torch.nn.Module) or id(module) in self.local_objects:
            return False
        key = (id(module), target.attr)
        if key in self.attribute_writes and key not in self.converted_attributes or \
                not isinstance(getattr(module, target.attr, None), torch.Tensor):
            return False
        read_before = key in self.attribute_reads
        value = self.eval(target, frame)
        casts = set(self.converted_attributes.get(key, ()))  # the dtypes this call casts it to
        for call in _conversion_chain(s):  # one step at a time, to see the dtype each casts to
            frame.env["$converted"] = value
            before = getattr(value, "dtype", None)
            try:
                value = self.eval(ir.Call(ir.Attribute(ir.Name("$converted", call.span), call.func.attr, call.span),
                                          call.args, call.span), frame)
            finally:
                frame.env.pop("$converted", None)
            if getattr(value, "dtype", None) != before:
                casts.add(getattr(value, "dtype", None))
        if not read_before:
            self.attribute_reads.discard(key)  # the conversion's own read: no earlier value reaches the graph
        dtypes = casts
        if len(dtypes) > 1 or None in dtypes:
            # to(float16) then to(float32): a cast to one dtype is idempotent, a round trip need not be
            raise self.error(f"`{expr_text(target)}` is converted to several dtypes in one call "
                             f"({', '.join(sorted(str(d) for d in dtypes))}): no fixed point untrace can prove",
                             "convert it to one dtype, or keep the converted value in a local variable",
                             construct="assign")
        self.assign_module_attribute(module, target.attr, value, expr_text(target), converted=True)
        self.converted_attributes[key] = casts
        return True

    def assign_module_attribute(self, module: torch.nn.Module, attr: str, value, text: str,
                                converted: bool = False) -> None:
        key = (id(module), attr)
        cached_buffer = attr in module._buffers and (converted or self._recomputed_buffer(module, attr, value))
        if not cached_buffer and (attr in module._modules or attr in module._parameters or attr in module._buffers):
            raise self.error(f"assigning `{text}` in forward replaces a submodule, parameter or buffer: the module's "
                             "state changes for the next call", "keep per-call state in local variables",
                             construct="assign")
        if self.g.parent is not None:
            raise self.error(f"assigning `{text}` inside a data-dependent `if` or loop: the module's state would "
                             "depend on the data", "keep per-call state in local variables", construct="assign")
        if key in self.converted_attributes and not converted:
            raise self.error(f"assigning `{text}` after forward converted it to itself: the next call would "
                             "convert this value instead", "keep per-call state in local variables",
                             construct="assign")
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
