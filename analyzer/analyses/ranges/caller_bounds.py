"""Static bounds (`index_bounds`) of a `forward`'s parameters, taken from the forwards in
the scanned tree that call it.

Every class with a `forward` is an entry of its own, its parameters free. An experts
module is only ever run by its block:

    class Block(nn.Module):
        def __init__(self, config):
            self.gate = Router(config)
            self.experts = Experts(config)
        def forward(self, h):
            _, w, idx = self.gate(h)          # topk over num_experts logits
            return self.experts(h, idx, w)

so in `Experts.forward`, `top_k_index` holds indices below `self.num_experts`, as the
block passes them. A parameter gets the bound every in-tree caller passes when:

- every mention of the class in the tree is a construction (`Project.builders`), and
  each is `self.<attr> = Experts(...)` in the `__init__` of a class with a `forward`
  (at any depth of it: under an `if`, in a loop); the instances of a subclass the tree derives from it (`class OtherExperts(Experts)`,
  transitively) run this `forward` too unless they override it: the constructions of
  every such subclass count as well (each under the same conditions). A subclass whose
  own `forward` never reaches this one (no `super().forward`, no `.forward` anywhere in
  its classes) is no caller; one that may, or that overrides `__call__`, or carries a
  decorator the class does not, leaves the parameter free;
- for that class and every class the tree derives from it (their instances hold one
  too), every use of `self.<attr>` in their methods is a call in the `forward` they run
  (own or inherited; not in a helper, not passed along), and a run of that `forward`
  with such a `self` reached each of them;
- nothing in the tree calls `<attr>` of another object (`layer.mlp.experts(h)`) or
  reads it by name (`getattr(m, "experts")`) in a file that names one of those holding
  classes or the class (`ModuleIndex.called_elsewhere`: an object reaching `.<attr>` is
  an instance of a holder, which a file naming none gets only from a generic factory
  or its own caller, taken as none of ours);
- each of those calls passes a value with one same bound, translated to the callee's
  side (`submodule_sizes`).

Anything else (no caller in the tree, a caller passing a forward input, a bound over
another size) leaves the parameter free. Asked only of a forward with a test an index
bound can decide (`if i == self.n`), since it runs the callers' forwards."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.engine.memo import memoized, per_function_cache
from analyzer.analyses.project.index import ClassKey
from analyzer.analyses.ranges.axis_sizes import fixed_size
from analyzer.analyses.ranges.submodule_sizes import class_of, same_class
from analyzer.frontend import expr_text, ir


def bounded_entry(analyzer, key: ClassKey, forward: ir.FunctionDef, args: dict) -> dict:
    """``args`` (the entry's parameter values) with the bounds the in-tree callers pass."""
    free = [p.name for p in forward.params[1:] if args.get(p.name) is not None and args[p.name].type == "tensor"]
    if not free or not _has_bound_test(forward):
        return args
    bounds = _caller_bounds(analyzer, key, forward)
    if not bounds:
        return args
    return {name: replace(v, bound=bounds[name]) if name in bounds and name in free else v for name, v in args.items()}


def _caller_bounds(analyzer, key: ClassKey, forward) -> dict:
    return memoized(analyzer, analyzer.caller_bounds, key, lambda: _collect(analyzer, key, forward)) or {}


def _collect(analyzer, key: ClassKey, forward) -> dict | None:
    passed = [bound for _, bound in caller_arguments(analyzer, key, forward) or ()]
    out = {}
    for p in forward.params[1:]:
        bounds = {b.get(p.name).bound if b.get(p.name) is not None and b[p.name].type == "tensor" else None for b in passed}
        if len(bounds) == 1 and None not in bounds:
            out[p.name] = bounds.pop()
    return out


def caller_arguments(analyzer, key: ClassKey, forward: ir.FunctionDef, entry=None,
                     callee=None) -> list[tuple[ir.Call, dict]] | None:
    """(call, the arguments bound to ``forward``'s parameters there) for every call of the
    class's instances in the tree, when those are all its uses (the conditions above);
    None otherwise. ``entry(caller, forward, arguments)`` gives the arguments a caller's
    own forward is run with (default: its free entry arguments); ``callee`` (the class's
    forward) binds the calls of `self.<attr>` built as either of several classes too,
    without translating sizes (`KindAnalyzer.record_calls`)."""
    kinds = _running(analyzer, key, forward)
    if kinds is None:
        return None
    sites = []
    for kind in kinds:
        files = analyzer.project.builders(kind.name)
        if files is None:
            return None
        for path in files:
            module = analyzer.module_ir(path)
            found = _building_sites(analyzer, module, kind) if module is not None else None
            if found is None:
                return None
            sites.extend(found)
    if not sites:
        return None
    passed: list[tuple[ir.Call, dict]] = []
    for site, attr in sites:
        holders = _derived(analyzer, site)  # their instances hold one too
        if holders is None or analyzer.project.called_elsewhere(attr, tuple(k.name for k in holders + kinds)):
            return None  # another module may call it
        for caller in holders:
            if caller is not site and _rebinds(analyzer, caller, site, attr):
                continue  # its instances hold another module there: not a caller
            calls = _calls_of(analyzer, caller, attr)
            if calls is None:
                return None
            seen = analyzer.record_calls(caller, calls, entry, callee)
            if seen is None or {i for i, _ in seen} != {id(c) for c in calls}:
                return None  # a call the run did not reach
            by_id = {id(c): c for c in calls}
            passed.extend((by_id[i], bound) for i, bound in seen)
    return passed


def _derived(analyzer, key: ClassKey) -> list[ClassKey] | None:
    """The class and the classes the tree derives from it (transitively); None when a
    base of one of them is unknown."""
    out, pending = [key], [key]
    while pending:
        base = pending.pop()
        for path in analyzer.project.deriving(base.name):
            module = analyzer.module_ir(path)
            if module is None:
                return None
            for name, cls in module.classes().items():
                if not any(expr_text(b).rsplit(".", 1)[-1] == base.name for b in cls.bases):
                    continue
                sub = ClassKey(module.path, name)
                resolved = [analyzer.resolve(b) for b in analyzer.class_info(sub).bases]
                if not any(b.type == "class" and isinstance(b.ref, ClassKey) and same_class(b.ref, base) for b in resolved):
                    if all(b.type == "class" for b in resolved):
                        continue  # a same-named class of another module
                    return None
                if len(out) > 64:
                    return None
                out.append(sub)
                pending.append(sub)
    return out


def _running(analyzer, key: ClassKey, forward: ir.FunctionDef) -> list[ClassKey] | None:
    """The class and the classes the tree derives from it whose instances run ``forward``
    (they inherit it); None when a subclass may run it some other way."""
    derived = _derived(analyzer, key)
    if derived is None:
        return None
    decorators = {expr_text(d) for d in analyzer.class_info(key).node.decorators}
    out = [key]
    for sub in derived[1:]:
        chain = _classes_below(analyzer, sub, key)
        if chain is None or any(not {expr_text(d) for d in info.node.decorators} <= decorators for info in chain):
            return None
        if any("__call__" in info.node.methods() for info in chain):
            return None
        if analyzer.find_method(sub, "forward")[1] is forward:
            out.append(sub)
        elif any(_mentions_forward(info.node) for info in chain):
            return None  # its own `forward` may call this one (`super().forward(...)`)
    return out


def _classes_below(analyzer, sub: ClassKey, key: ClassKey) -> list | None:
    """The classes of ``sub``'s method-resolution order before ``key`` (the subclass and
    its bases that derive from ``key``); None when ``key`` is not in it."""
    out = []
    for info in analyzer.mro(sub):
        if same_class(info.key, key):
            return out
        out.append(info)
    return None


def _mentions_forward(cls: ir.ClassDef) -> bool:
    return "forward" in _names_in(cls)


@per_function_cache
def _names_in(cls: ir.ClassDef) -> frozenset[str]:
    """The attribute names and names the class's code reads (`super().forward`, `forward`):
    once per class, as every holder's base (a framework's `PreTrainedModel`) is asked
    again for each attribute."""
    return frozenset(e.attr if isinstance(e, ir.Attribute) else e.id
                     for s in ir.walk_statements(cls.body, into_defs=True) for c in ir.child_expressions(s)
                     for e in ir.walk_expression(c) if isinstance(e, (ir.Attribute, ir.Name)))


def _building_sites(analyzer, module: ir.Module, key: ClassKey) -> list | None:
    """(class, attribute) of every `self.<attribute> = <key>(...)` in the module; None when
    the module builds the class in another way, or the name is another class here."""
    built = [e for s in ir.walk_statements(module.body, into_defs=True, mentioning=(key.name,)) for c in ir.child_expressions(s)
             for e in ir.walk_expression(c) if isinstance(e, ir.Call) and isinstance(e.func, ir.Name) and e.func.id == key.name]
    built_ids = {id(b) for b in built}
    sites, accounted = [], 0
    for name, cls in module.classes().items():
        init = cls.methods().get("__init__")
        body = init.body if init is not None else []
        assigns = [s for s in ir.walk_statements(body)  # under an `if` too
                   if isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.value, ir.Call)
                   and id(s.value) in built_ids and _is_self_attr(s.targets[0])]
        # Only a class that builds one needs its bases resolved (the module's other
        # classes, every one of a model file, would each parse their bases' modules).
        if not assigns:
            continue
        caller = ClassKey(module.path, name)
        if analyzer.find_method(caller, "forward")[1] is None:
            continue
        for s in assigns:
            accounted += 1
            built_class = class_of(analyzer, caller, s.value.func)
            if built_class is None:
                return None
            if same_class(built_class, key):  # else a same-named class of this module: not a caller
                sites.append((caller, s.targets[0].attr))
    return sites if accounted == len(built) else None


def _rebinds(analyzer, holder: ClassKey, site: ClassKey, attr: str) -> bool:
    """Whether a class between ``holder`` and ``site`` (their subclass) replaces `self.<attr>`
    in its own `__init__`: a top-level `self.<attr> = ...` (or an `if` binding it in each
    branch) after a top-level `super().__init__(...)` (or `Base.__init__(self, ...)`), the
    attribute not read there, so that what ``site`` built is gone before any other method
    runs."""
    for info in _classes_below(analyzer, holder, site) or ():
        init = info.node.methods().get("__init__")
        body = init.body if init is not None else []
        start = next((i for i, s in enumerate(body) if _is_super_init(s)), None)
        if start is None:
            continue
        after = [n for n in (_rebinding(s, attr) for s in body[start + 1:]) if n]
        reads = [e for s in ir.walk_statements(body, into_defs=True) for c in ir.child_expressions(s)
                 for e in ir.walk_expression(c) if _is_self_attr(e) and e.attr == attr]
        if after and len(reads) == sum(after):
            return True
    return False


def _rebinding(s, attr: str) -> int:
    """How many `self.<attr> = ...` the statement holds when it binds the attribute on
    every path (one assignment, or an `if` each of whose branches does: `if c: self.encoder
    = A(...) else: self.encoder = B(...)`); 0 otherwise."""
    if isinstance(s, ir.Assign):
        return int(len(s.targets) == 1 and _is_self_attr(s.targets[0]) and s.targets[0].attr == attr)
    if isinstance(s, ir.If):
        branches = [sum(_rebinding(b, attr) for b in body) for body in (s.body, s.orelse)]
        return sum(branches) if all(branches) else 0
    return 0


def _is_super_init(s) -> bool:
    """`super().__init__(...)`, or a base's named explicitly (`Base.__init__(self, ...)`)."""
    call = s.value if isinstance(s, ir.ExprStmt) else None
    if not (isinstance(call, ir.Call) and isinstance(call.func, ir.Attribute) and call.func.attr == "__init__"):
        return False
    owner = call.func.value
    if isinstance(owner, ir.Call):
        return isinstance(owner.func, ir.Name) and owner.func.id == "super"
    return (isinstance(owner, (ir.Name, ir.Attribute)) and bool(call.args) and isinstance(call.args[0].value, ir.Name)
            and call.args[0].value.id == "self")


def _calls_of(analyzer, caller: ClassKey, attr: str) -> list | None:
    """The calls `self.<attr>(...)` in the `forward` the caller's instances run, when that
    is every read of `self.<attr>` in the methods of its classes (besides the assignments
    of `__init__`; a base's method the caller overrides and no class of it names is never
    run)."""
    forward = analyzer.find_method(caller, "forward")[1]
    calls, reads = [], 0
    classes = list(analyzer.mro(caller))
    named = {n for info in classes for n in _names_in(info.node)}
    for info in classes:
        for name, method in info.node.methods().items():
            if name not in named and analyzer.find_method(caller, name)[1] is not method:
                continue  # overridden, and named nowhere (`super().forward`): never run
            for s in ir.walk_statements(method.body, into_defs=True):
                for e in ir.child_expressions(s):
                    for sub in ir.walk_expression(e):
                        if _is_self_attr(sub) and sub.attr == attr:
                            reads += 1
                        if isinstance(sub, ir.Call) and _is_self_attr(sub.func) and sub.func.attr == attr:
                            if method is not forward:
                                return None
                            calls.append(sub)
            if name == "__init__":
                reads -= sum(1 for s in ir.walk_statements(method.body) if isinstance(s, ir.Assign) and any(
                    _is_self_attr(t) and t.attr == attr for t in s.targets))
    return calls if calls and reads == len(calls) else None


def _is_self_attr(e) -> bool:
    return isinstance(e, ir.Attribute) and isinstance(e.value, ir.Name) and e.value.id == "self"


def _has_bound_test(forward: ir.FunctionDef) -> bool:
    """Whether the forward holds an `if` comparing a name with a fixed size (`index_bounds`)."""
    for s in ir.walk_statements(forward.body):
        test = s.test if isinstance(s, ir.If) else None
        if (isinstance(test, ir.Compare) and len(test.ops) == 1 and isinstance(test.left, ir.Name)
                and isinstance(test.comparators[0], ir.Attribute) and fixed_size(test.comparators[0])):
            return True
    return False
