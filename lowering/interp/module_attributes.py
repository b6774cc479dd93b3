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
(`self.count = self.count + 1`) stays refused: it is no fixed point.

A cache rebuilt when its key changes (`if seq_len != self._seq_len_cached: self._seq_len_cached
= seq_len; self._cos_cached = ...`), with a module whose cache is empty at export (the key
None, so the test is True whatever the input): eager either rebuilds, as the graph does,
or, when the key it compares equals the stored one, reuses what an earlier call built from
that same key. The two agree when everything the rebuild stores is computed from
parameters, constants and the compared key only. So inside a statically taken `if` whose
test compared a module attribute with a value of this call (`cache_rebuild`), and whose
body only assigns (no `else`, no local that is live after it, no call statement, no
return), storing that value in that attribute is allowed although the test read it, and
every attribute the body stores must depend on the graph inputs through the key only;
otherwise it is refused, naming what else it depends on."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from analyzer.frontend import expr_text, ir

from lowering.graph import Value
from lowering.interp.memo_caches import _SUBGRAPH_OPS, _computed_from_constants
from lowering.interp.values import MISSING, _graph_leaves


@dataclass
class CacheRebuild:
    """The body of `if key != self.attr:` being run: the attributes its test compared and
    the values they were compared with."""

    line: int
    keys: dict


def _only_assignments(body) -> bool:
    for stmt in body:
        if isinstance(stmt, ir.Assign) and all(_plain_target(t) for t in stmt.targets):
            continue
        if isinstance(stmt, ir.Pass) or isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Const):
            continue
        if isinstance(stmt, ir.If) and not stmt.results and _only_assignments(stmt.body) and \
                _only_assignments(stmt.orelse):
            continue
        return False
    return True


def _plain_target(t) -> bool:
    if isinstance(t, (ir.Tuple, ir.List)):
        return all(_plain_target(x) for x in t.elts)
    return isinstance(t, (ir.Name, ir.Attribute))


def _same_key(a, b) -> bool:
    if a is b:
        return True
    return not isinstance(a, Value) and not isinstance(b, Value) and type(a) is type(b) and a == b


def _inputs_reached(g, values: list[Value], keys: list[Value]) -> bool:
    """Some path from a graph input to `values` that does not pass through `keys` (or a value
    the same nodes compute from the same inputs: `x.shape[1]` taken again)."""
    root = g.root
    inputs = {v.name for v in root.inputs}
    producers = {out: node for node in root.nodes for out in node.output}
    signatures: dict[str, object] = {}
    numbering: dict[tuple, int] = {}

    def signature(name: str):
        pending = [name]  # iteratively, inputs first: a deep graph exceeds Python's recursion limit
        while pending:
            top = pending[-1]
            if top in signatures:
                pending.pop()
                continue
            node = producers.get(top)
            if node is None or node.op_type in _SUBGRAPH_OPS:
                signatures[top] = top
                continue
            missing = [i for i in node.input if i not in signatures]
            if missing:
                pending.extend(missing)
                continue
            shape = (node.op_type, list(node.output).index(top),
                     tuple((a.name, a.SerializeToString()) for a in node.attribute),
                     tuple(signatures[i] for i in node.input))
            signatures[top] = numbering.setdefault(shape, len(numbering))  # exact: equal numbers, equal shapes
        return signatures[name]

    stop = {signature(k.name) for k in keys}
    seen: set[str] = set()
    stack = [v.name for v in values]
    while stack:
        name = stack.pop()
        if not name or name in seen or signature(name) in stop:
            continue
        seen.add(name)
        if name in inputs:
            return True
        node = producers.get(name)
        if node is None:
            continue
        stack.extend(node.input)
        for sub in _subgraphs(node):  # what a region reads from outside it
            stack.extend(n for inner in sub.node for n in inner.input)
    return False


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
        rebuild = self.cache_rebuilds[-1] if self.cache_rebuilds else None
        if rebuild is not None:
            self._check_cache_value(rebuild, value, text)
            if key in rebuild.keys and _same_key(rebuild.keys[key], value):
                cached_buffer = True  # the cache's new key: the value the test compared it with
        if key in self.attribute_reads and not cached_buffer:
            raise self.error(f"`{text}` is read before forward assigns it: eager PyTorch reads the value the previous "
                             "call left there, which an exported graph cannot keep", "keep per-call state in local "
                             "variables (pass it as an argument)", construct="assign")
        self.attribute_writes[key] = (module, value)  # the module too: its id stays unique while held

    @contextlib.contextmanager
    def cache_rebuild(self, s, compared: list):
        """Run the body of the statically true `if` `s`, whose test made the comparisons
        `compared`, as a cache rebuild when it has that form."""
        if not compared or s.orelse or s.results or not _only_assignments(s.body):
            yield
            return
        self.cache_rebuilds.append(CacheRebuild(s.span.line, dict(compared)))
        try:
            yield
        finally:
            self.cache_rebuilds.pop()

    def _check_cache_value(self, rebuild: CacheRebuild, value, text: str) -> None:
        keys = [k for k in rebuild.keys.values() if isinstance(k, Value)]
        leaves = [v for v in _graph_leaves(value) if isinstance(v, Value)]
        if leaves and _inputs_reached(self.g, leaves, keys):
            names = ", ".join(f"`{self.key_text(k)}`" for k in rebuild.keys)
            raise self.error(f"`{text}` is stored when {names} changes (the `if` at line {rebuild.line}), but it depends "
                             "on the inputs through more than that key: eager's next call with the same key reuses "
                             "it, where the graph computes it anew", "compute the cached value from the key only, "
                             "or keep it in a local variable", construct="assign")

    def key_text(self, key) -> str:
        for module, _ in self.attribute_writes.values():
            if id(module) == key[0]:
                return f"{type(module).__name__}.{key[1]}"
        return key[1]

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

    def replace_parameter_data(self, module: torch.nn.Module, attr: str, old: Value, value, text: str) -> bool:
        """`module.weight.data = value`, a reparameterisation redone by every call (weights of
        several branches folded into one conv): like a recomputed buffer, a cache when
        `value` is computed from parameters and constants only, at the top of the graph,
        with the parameter's dtype and shape, and no node has read the parameter's earlier
        value (else eager's next call would compute from the new one). Later reads in the
        call, a leaf module's included, see `value`. False when `old` is not that
        parameter or buffer of `module` (the assignment is then refused as before)."""
        tensor = module._parameters.get(attr, module._buffers.get(attr))
        if tensor is None or self.tensor_names.get(id(tensor)) != old.name:
            return False
        if not isinstance(value, Value) or self.g.parent is not None or not _computed_from_constants(self.g, [value]):
            raise self.error(f"assigning `{text}` in forward replaces the values of a parameter or buffer for later "
                             "calls with a value computed from the inputs (or inside a data-dependent `if` or loop): "
                             "the next call would see it", "compute the new tensor and use it directly (a functional "
                             "call such as F.conv2d(x, weight, bias))", construct="assign")
        if value.dtype != tensor.dtype or value.static_shape != tuple(tensor.shape):
            raise self.error(f"assigning `{text}` in forward changes the {'dtype' if value.dtype != tensor.dtype else 'shape'}"
                             " of a parameter or buffer", "compute the new tensor and use it directly (a functional "
                             "call such as F.conv2d(x, weight, bias))", construct="assign")
        if _graph_reads(self.g.root, old.name) or (id(module), attr) in self.attribute_writes:
            raise self.error(f"assigning `{text}` in forward after the graph read its earlier value: eager's next call "
                             "reads the new one", "compute the new tensor and use it directly", construct="assign")
        self.attribute_writes[(id(module), attr)] = (module, value)
        return True

    def replaced_parameters(self) -> dict:
        """What `replace_parameter_data` recorded, for a leaf module's lowering."""
        return {key: value for key, (module, value) in self.attribute_writes.items()
                if key[1] in module._parameters or key[1] in module._buffers}

    def update_assigned_attributes(self, old, new) -> None:
        """An in-place update of a tensor that forward assigned to a module attribute: the
        attribute sees it too."""
        for key, (module, value) in self.attribute_writes.items():
            if value is old:
                if self.g.parent is not None:
                    raise self.error(f"in-place update, inside a data-dependent `if` or loop, of a tensor assigned to "
                                     f"`{type(module).__name__}.{key[1]}`", "update out of place", construct="inplace")
                self.attribute_writes[key] = (module, new)
