"""Static sizes (`index_bounds`) across a call into a submodule, whose `self` is another
object: a size is the text of an attribute chain of `self`, so it means something else
on the other side.

A block builds its router and its experts from one configuration,

    class Block(nn.Module):
        def __init__(self, config):
            self.gate = Router(config)        # self.num_experts = config.num_local_experts
            self.experts = Experts(config)    # self.num_experts = config.num_local_experts
        def forward(self, h):
            _, w, idx = self.gate(h)          # idx < self.gate.num_experts
            return self.experts(h, idx, w)    # ... so idx < self.num_experts in Experts

Out of a submodule, a size `self.n` becomes `self.gate.n` (the chain the call was made
through). Into one, a size is kept only when it and an attribute of the callee come
from the same configuration field (`source`): the same parameter of the caller's
`__init__` (never rebound nor written to there), the same field of it, each attribute
written once, in its class's own `__init__`. Anything else loses the size: unknown is
always sound."""

from __future__ import annotations

import os
import re
from dataclasses import replace

from analyzer.analyses.project.index import ClassKey
from analyzer.frontend import expr_text, ir


def outward(value, accessor, symbol=None):
    """``value`` (returned by a submodule reached through the expression ``accessor``) with
    its sizes written from the caller's side; sizes are dropped when ``accessor`` is not
    an attribute chain of `self`. A symbolic size (`symbolic_sizes`) is what ``symbol``
    makes of it (dropped without one)."""
    prefix = expr_text(accessor) if _self_chain(accessor) else None

    def translate(size: str) -> str | None:
        if size.startswith("@"):
            return symbol(size) if symbol is not None else None
        return prefix + size[4:] if prefix is not None and _ATTRIBUTE_CHAIN.match(size) else size if _constant(size) else None
    return _rewrite(value, translate)


def inward(analyzer, caller: ClassKey | None, accessor, callee: ClassKey, value, symbol=None):
    """``value`` (passed by a method of ``caller`` to the submodule ``accessor``, of class
    ``callee``) with its sizes written from the callee's side, or dropped (`source`). A
    symbolic size (`symbolic_sizes`) is what ``symbol`` makes of it."""
    if caller is None or not _built_as(analyzer, caller, accessor, callee):
        return _rewrite(value, lambda size: size if _constant(size) else None)
    prefix = expr_text(accessor)

    def translate(size: str) -> str | None:
        if _constant(size):
            return size
        if size.startswith("@"):
            return symbol(size) if symbol is not None else None
        wanted = _source(analyzer, caller, size) if size.startswith("self.") else None
        if wanted is None:
            return None
        for attr in _init_fields(analyzer, callee):
            found = _source(analyzer, caller, prefix + "." + attr)
            if found is not None and found[0] == wanted[0] and _same_field(analyzer, wanted, found):
                return "self." + attr
        return None
    return _rewrite(value, translate)


def source(analyzer, key: ClassKey, text: str) -> tuple | None:
    """(parameter of ``key``'s `__init__`, dotted field) that the attribute chain ``text``
    (`self.a` or `self.sub.a`) was read from when the module was built; None when unsure.
    A one-part field is named as the configuration's class stores it (`canonical_field`),
    that class being the annotation of the parameter at the outermost `__init__` along the
    chain that annotates it (the same object is handed down unchanged)."""
    found = _source(analyzer, key, text)
    if found is None:
        return None
    param, field, config = found
    return (param, canonical_field(analyzer, config, field))


def _same_field(analyzer, a: tuple, b: tuple) -> bool:
    """Whether two (parameter, field, configuration class) of one parameter name one field:
    both read the same object, so a class known on one side is the other's too."""
    config = a[2] or b[2]
    return canonical_field(analyzer, a[2] or config, a[1]) == canonical_field(analyzer, b[2] or config, b[1])


def _source(analyzer, key: ClassKey, text: str) -> tuple | None:
    """(parameter, dotted field, the parameter's annotated class or None)."""
    parts = text.split(".")
    if len(parts) < 2 or parts[0] != "self":
        return None
    key = renamed(analyzer, key)
    init = own_init(analyzer, key)
    if init is None:
        return None
    value = single_write(analyzer, key, parts[1], under_if=len(parts) > 2)
    if value is None:
        return _inherited_source(analyzer, key, init, text)
    if len(parts) == 2:
        found = field_of_parameter(init, value)
        return (*found, annotated_class(analyzer, key, init, found[0])) if found is not None else None
    if not isinstance(value, ir.Call):
        return _field_through(analyzer, key, init, value, parts[2:])
    if any(a.star for a in value.args):
        return None
    built = class_of(analyzer, key, value.func)
    if built is None:
        return None
    inner = _source(analyzer, built, "self." + ".".join(parts[2:]))
    inner_init = own_init(analyzer, built)
    if inner is None or inner_init is None:
        return None
    param, field, config = inner
    argument = _argument_for(inner_init, value, param)
    outer = field_of_parameter(init, argument) if argument is not None else None
    if outer is None:
        return None
    if outer[1]:
        config = None  # a part of the configuration (`config.text_config`): its own class
    else:
        config = annotated_class(analyzer, key, init, outer[0]) or config
    return (outer[0], ".".join(f for f in (outer[1], field) if f), config)


def _field_through(analyzer, key: ClassKey, init: ir.FunctionDef, value, fields: list) -> tuple | None:
    """`_source` of `self.<attr>.<fields>` where `__init__` keeps its parameter itself
    (`self.config = config`): the fields are read from that object."""
    found = field_of_parameter(init, value)
    if found is None or found[1]:
        return None
    return (found[0], ".".join(fields), annotated_class(analyzer, key, init, found[0]))


def _inherited_source(analyzer, key: ClassKey, init: ir.FunctionDef, text: str) -> tuple | None:
    """`_source` of an attribute the class leaves to its base: written by none of its own
    methods, its `__init__` calling `super().__init__(...)` once at its top level, the
    class having one base. The base's parameter is followed to the argument passed for it."""
    info = analyzer.class_info(key)
    if text.split(".")[1] in _attribute_writes(analyzer, info.node) or len(info.bases) != 1:
        return None
    calls = [s.value for s in init.body if isinstance(s, ir.ExprStmt) and is_super_init(s.value)]
    if len(calls) != 1 or any(a.star for a in calls[0].args):
        return None
    base = analyzer.resolve(info.bases[0])
    if base.type != "class" or not isinstance(base.ref, ClassKey):
        return None
    inner = _source(analyzer, base.ref, text)
    base_init = own_init(analyzer, base.ref)
    if inner is None or base_init is None:
        return None
    param, field, config = inner
    argument = _argument_for(base_init, calls[0], param)
    outer = field_of_parameter(init, argument) if argument is not None else None
    if outer is None:
        return None
    config = None if outer[1] else annotated_class(analyzer, key, init, outer[0]) or config
    return (outer[0], ".".join(f for f in (outer[1], field) if f), config)


def is_super_init(call) -> bool:
    """`super().__init__(...)`."""
    return (isinstance(call, ir.Call) and isinstance(call.func, ir.Attribute) and call.func.attr == "__init__"
            and isinstance(call.func.value, ir.Call) and isinstance(call.func.value.func, ir.Name)
            and call.func.value.func.id == "super" and not call.func.value.args)


def attribute_reading(analyzer, key: ClassKey, init: ir.FunctionDef, e) -> str | None:
    """`self.<attr>` for the attribute of ``key`` read from the configuration field that
    ``e`` (`config.num_experts`, an expression of ``key``'s own ``init``) reads, so that a
    size written as that field means the attribute (`nn.Parameter(torch.zeros(
    config.num_experts))` beside `self.num_experts = config.num_experts`); None when unsure."""
    found = field_of_parameter(init, e)
    if found is None or not found[1] or own_init(analyzer, key) is not init:
        return None
    wanted = (found[0], canonical_field(analyzer, annotated_class(analyzer, key, init, found[0]), found[1]))
    for attr in _init_fields(analyzer, key):
        if source(analyzer, key, "self." + attr) == wanted:
            return "self." + attr
    # No attribute reads the field: one that keeps the configuration itself names it.
    for attr in _init_fields(analyzer, key):
        if source(analyzer, key, f"self.{attr}.{found[1]}") == wanted:
            return f"self.{attr}.{found[1]}"
    return None


def _built_as(analyzer, caller: ClassKey, accessor, callee: ClassKey) -> bool:
    """Whether ``accessor`` is `self.<attr>`, built once in ``caller``'s `__init__` as an
    instance of ``callee`` itself (so that its attributes are the callee's)."""
    if not (isinstance(accessor, ir.Attribute) and isinstance(accessor.value, ir.Name) and accessor.value.id == "self"):
        return False
    if own_init(analyzer, caller) is None:
        return False
    value = single_write(analyzer, renamed(analyzer, caller), accessor.attr, under_if=True)
    built = class_of(analyzer, renamed(analyzer, caller), value.func) if isinstance(value, ir.Call) else None
    return built is not None and same_class(renamed(analyzer, built), renamed(analyzer, callee))


def _rewrite(value, translate):
    if value is None:
        return value
    changed = {}
    if value.bound is not None:
        changed["bound"] = _translated(value.bound, translate)
    if value.elem is not None:
        changed["elem"] = _rewrite(value.elem, translate)
    if value.elems is not None:
        changed["elems"] = tuple(_rewrite(e, translate) for e in value.elems)
    if not changed or all(changed[k] == getattr(value, k) for k in changed):
        return value
    return replace(value, **changed)


def _translated(bound: tuple, translate) -> tuple | None:
    size = translate(bound[-1])
    return None if size is None else (*bound[:-1], size)


_ATTRIBUTE_CHAIN = re.compile(r"self(\.\w+)+$")


def _constant(size: str) -> bool:
    return size.lstrip("-").isdigit()


def _self_chain(e) -> bool:
    return e is not None and isinstance(e, ir.Attribute) and (isinstance(e.value, ir.Name) and e.value.id == "self" or _self_chain(e.value))


def own_init(analyzer, key: ClassKey):
    key = renamed(analyzer, key)
    owner, init = analyzer.find_method(key, "__init__")
    return init if init is not None and owner.key == key else None


def same_class(a: ClassKey, b: ClassKey) -> bool:
    """Whether two keys name one class (a file is named relative or absolute)."""
    return a.name == b.name and os.path.abspath(a.path) == os.path.abspath(b.path)


def renamed(analyzer, key: ClassKey) -> ClassKey:
    """The class ``key`` only renames (`class OtherExperts(Experts): pass`, followed
    through such chains), else ``key`` itself: the one whose `__init__` and attributes
    its instances have."""
    for _ in range(8):
        info = analyzer.class_info(key)
        if info is None or info.node.decorators or len(info.bases) != 1 or not all(renames_only(s) for s in info.node.body):
            return key
        base = analyzer.resolve(info.bases[0])
        if base.type != "class" or not isinstance(base.ref, ClassKey):
            return key
        key = base.ref
    return key


def renames_only(s) -> bool:
    """A statement of a class body that leaves the class as its base: `pass`, a docstring."""
    return isinstance(s, ir.Pass) or isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Const) and isinstance(s.value.value, str)


def single_write(analyzer, key: ClassKey, attr: str, under_if: bool = False):
    """The value of the one `self.<attr> = value` of the class, when it is in `__init__`'s
    own body (not under a branch or loop) and the class writes that attribute nowhere else.
    With ``under_if``, the write may also sit in `if` branches of that body (a submodule
    built only for some configurations, `if config.moe: self.experts = Experts(config)`:
    where it exists, it is that one), when no class body of the class's assigns the name
    (a class-level default the instance would keep otherwise)."""
    writes = _attribute_writes(analyzer, analyzer.class_info(key).node).get(attr, ())
    init = own_init(analyzer, key)
    body = list(if_nested(init.body)) if init is not None and under_if else init.body if init is not None else ()
    if init is None or len(writes) != 1 or writes[0] not in body or not isinstance(writes[0], ir.Assign) or len(writes[0].targets) != 1:
        return None
    if under_if and writes[0] not in init.body and any(
            isinstance(s, ir.Assign) and any(isinstance(t, ir.Name) and t.id == attr for t in s.targets)
            for info in analyzer.mro(key) for s in info.node.body):
        return None
    return writes[0].value


def if_nested(body: list):
    """The statements of ``body`` and of the `if` branches in it, at any depth (not those
    of loops, `with` or `try`)."""
    for s in body:
        yield s
        if isinstance(s, ir.If):
            yield from if_nested(s.body)
            yield from if_nested(s.orelse)


def _attribute_writes(analyzer, node: ir.ClassDef) -> dict[str, list]:
    """attribute -> the statements of the class's methods that write `self.<attribute>`,
    walked once per class (each submodule call asks about one attribute)."""
    memo = analyzer.attribute_writes
    held = memo.get(id(node))
    if held is not None and held[0] is node:
        return held[1]
    table: dict[str, list] = {}
    for m in node.methods().values():
        for s in ir.walk_statements(m.body, into_defs=True):
            for attr in dict.fromkeys(t.attr for target in _targets(s) for t in ir.walk_expression(target)
                                      if isinstance(t, ir.Attribute) and isinstance(t.value, ir.Name) and t.value.id == "self"):
                table.setdefault(attr, []).append(s)
    memo[id(node)] = (node, table)  # the node is held, so its id is not reused
    return table


def field_of_parameter(init: ir.FunctionDef, e) -> tuple | None:
    """(parameter, dotted field) for `param` or `param.a.b`, with ``param`` a parameter of
    ``init`` that its body neither rebinds nor writes a field of."""
    path = []
    while isinstance(e, ir.Attribute):
        path.append(e.attr)
        e = e.value
    if not isinstance(e, ir.Name) or e.id not in {p.name for p in init.params[1:]}:
        return None
    for s in ir.walk_statements(init.body, into_defs=True):
        for target in _targets(s):
            for t in ir.walk_expression(target):
                if isinstance(t, ir.Name) and t.id == e.id:
                    return None  # rebound, or a field of it written (`config.n = 4`)
    return (e.id, ".".join(reversed(path)))


def annotated_class(analyzer, key: ClassKey, init: ir.FunctionDef, param: str) -> ClassKey | None:
    annotation = next((p.annotation for p in init.params if p.name == param), None)
    return class_of(analyzer, key, annotation) if annotation is not None else None


def canonical_field(analyzer, config: ClassKey | None, field: str) -> str:
    """``field`` under the name the configuration class ``config`` stores it by: a
    transformers configuration maps aliases to attributes (`attribute_map =
    {"num_local_experts": "num_experts"}`), so two modules reading `config.num_experts`
    and `config.num_local_experts` read one value. Only a class-level dict of string
    literals on the class (or its bases in the tree) counts."""
    if config is None or not field or "." in field:
        return field
    for info in analyzer.mro(config):
        for s in info.node.body:
            if (isinstance(s, ir.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ir.Name)
                    and s.targets[0].id == "attribute_map" and isinstance(s.value, ir.Dict)):
                aliases = {k.value: v.value for k, v in s.value.items
                           if isinstance(k, ir.Const) and isinstance(v, ir.Const) and isinstance(k.value, str) and isinstance(v.value, str)}
                if len(aliases) != len(s.value.items):
                    return field  # a computed entry: unsure
                return aliases.get(field, field)
    return field


def _targets(s) -> list:
    if isinstance(s, ir.Assign):
        return list(s.targets)
    if isinstance(s, ir.AugAssign):
        return [s.target]
    if isinstance(s, ir.Loop) and s.target is not None:
        return [s.target]
    return []


def _argument_for(init: ir.FunctionDef, call: ir.Call, param: str):
    """The expression ``call`` (a construction) passes for ``init``'s parameter ``param``."""
    params = [p for p in init.params[1:] if p.kind in ("positional", "posonly")]
    positional = [a.value for a in call.args if a.keyword is None]
    for a in call.args:
        if a.keyword == param:
            return a.value
    names = [p.name for p in params]
    if param in names and names.index(param) < len(positional):
        return positional[names.index(param)]
    return None


def class_of(analyzer, key: ClassKey, func) -> ClassKey | None:
    if not isinstance(func, ir.Name):
        return None
    module = analyzer.module_ir(key.path)
    value = analyzer.globals_of(module).get(func.id) if module is not None else None
    value = analyzer.resolve(value) if value is not None else None
    return value.ref if value is not None and value.type == "class" and isinstance(value.ref, ClassKey) else None


def _init_fields(analyzer, key: ClassKey) -> list[str]:
    """The attributes the class's own `__init__` assigns at its top level, in order."""
    key = renamed(analyzer, key)
    init = own_init(analyzer, key)
    if init is None:
        return []
    return [t.attr for s in init.body if isinstance(s, ir.Assign) for t in s.targets
            if isinstance(t, ir.Attribute) and isinstance(t.value, ir.Name) and t.value.id == "self"]
