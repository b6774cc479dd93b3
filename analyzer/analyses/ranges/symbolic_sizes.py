"""Symbolic sizes: one name for a size however a module reads it, so that a size written
in `__init__` and a size tested in `forward` (or in another module built from the same
configuration) are known to be one number.

A size (`index_bounds`) is the text of an expression a forward does not rebind. The same
number has many texts: `config.num_experts` in `__init__`, `self.num_experts` once
`__init__` stored it, `self.gate.num_experts` seen from the block that built the gate.
Each is named here by where the number came from when the module was built:

    @param.field      the field ``field`` (dotted, or empty for the object itself) of what
                      the construction passed for ``param`` of the `__init__` of the
                      instance's class

so `nn.Linear(config.hidden_size, config.num_experts)`, `self.num_experts` (written
`self.num_experts = config.num_experts`) and `torch.zeros(config.num_experts)` all have
the size `@config.num_experts`. The field is kept as the code spells it: one spelling of
one object's field is one number, whatever class an annotation gives the object. A
symbol carries that class (`Symbol.config`: the annotation of the parameter in the
nearest `__init__` that has one, as it crosses modules), by which two spellings are one
field when the class maps one to the other (`attribute_map`, `canonical_field`).

Equations. For a size ``s`` of class ``K`` (the instance's class, or the class it only
renames):

    name(K, "self.a.b")   = "@p.f"   if `self.a.b` was read from field f of parameter p of
                                     K's `__init__` (`submodule_sizes._source`)
    name(K, s)            = s        otherwise (constants, arithmetic; unsure: kept as text)
    same(K, t, "@p.f")    = name(K, t) is "@p.f", or "@p.g" with g and f aliases in the
                            class the symbol carries

Across a call into the submodule `self.sub`, built in ``K``'s `__init__` as
`Sub(..., q=arg, ...)` (or by the base ``K`` leaves the attribute to, through
`super().__init__(...)`): `@p.f` becomes `@q.g` when `arg` reads `p.h` and `f` is `h.g`
(or `h` is empty), under the spelling the callee's own attributes read it by when that
is an alias (resolved at the call, so what the callee is given does not depend on the
caller); out of it, the reverse. Anything else loses the size, which is always sound:
a lost size decides nothing. Two symbols are equal when their spellings and carried
classes are: a summary computed for one is never reused for another."""

from __future__ import annotations

import re

from analyzer.analyses.project.index import ClassKey
from analyzer.analyses.ranges import submodule_sizes
from analyzer.analyses.ranges.submodule_sizes import (
    _argument_for,
    annotated_class,
    canonical_field,
    field_of_parameter,
    own_init,
    renamed,
    single_write,
)
from analyzer.frontend import ir

_CHAIN = re.compile(r"self(\.\w+)+$")
_SYMBOL = re.compile(r"@\w+(\.\w+)*$")


def is_symbol(size) -> bool:
    return isinstance(size, str) and _SYMBOL.match(size) is not None


class Symbol(str):
    """A symbolic size; ``config`` is the class of the object its parameter holds, when an
    `__init__` along the way annotated it (a field named in one module by an alias is the
    same field in another module that does not annotate it)."""

    __slots__ = ("config",)

    def __new__(cls, text: str, config=None):
        made = super().__new__(cls, text)
        made.config = config
        return made

    def __reduce__(self):
        return (Symbol, (str(self), self.config))

    # Two symbols of one text carried with different classes may name different fields:
    # unequal (so that nothing computed with one is reused for the other).
    def __eq__(self, other):
        if isinstance(other, Symbol):
            return str.__eq__(self, other) and self.config == other.config
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


def named(analyzer, key, size, config=None):
    """The symbolic name of ``size`` in an instance of class ``key``; ``config`` the class
    of its parameter's object if known from elsewhere. The field is kept as the code
    spells it: one spelling of one object's field is one number, whatever its class."""
    if key is None or not isinstance(size, str):
        return size
    key = renamed(analyzer, key)
    if _CHAIN.match(size):
        found = submodule_sizes._source(analyzer, key, size)
        if found is None:
            return size
        size, config = _symbol(found[0], found[1]), config or found[2]
    if is_symbol(size):
        param = size[1:].partition(".")[0]
        init = own_init(analyzer, key)
        if init is None:
            return size
        config = annotated_class(analyzer, key, init, param) or config or getattr(size, "config", None)
        return Symbol(str(size), config)
    return size


def same(analyzer, key, text: str, size) -> bool:
    """Whether the size text ``text`` (read in an instance of ``key``) is the size ``size``:
    the same spelling, or aliases of one field in the class known for the object
    (`canonical_field`)."""
    if text == size:
        return True
    if not is_symbol(size):
        return False
    mine = named(analyzer, key, text, getattr(size, "config", None))
    if not is_symbol(mine):
        return False
    if str.__eq__(mine, size):
        return True
    config = getattr(size, "config", None) or getattr(mine, "config", None)
    return config is not None and _canonical(analyzer, config, mine) == _canonical(analyzer, config, size)


def _canonical(analyzer, config, size) -> str:
    param, _, field = size[1:].partition(".")
    return _symbol(param, canonical_field(analyzer, config, field) if field and "." not in field else field)


def of_init_expression(analyzer, key, init: ir.FunctionDef, e):
    """The symbol of the expression ``e`` of ``key``'s own `__init__` (``init``): a
    parameter or a field of one that `__init__` neither rebinds nor writes to."""
    if key is None or own_init(analyzer, key) is not init:
        return None
    found = field_of_parameter(init, e)
    if found is None:
        return None
    return named(analyzer, key, _symbol(*found))


def bound_named(analyzer, key, bound):
    """``bound`` (an `index_bounds` tag) with its size named symbolically."""
    if bound is None or key is None:
        return bound
    size = bound[-1]
    new = named(analyzer, key, size)
    return bound if new == size else (*bound[:-1], new)


def _built(analyzer, caller, accessor, depth):
    """Where ``caller`` (followed through classes that only rename it) builds its
    submodule ``accessor``: (the class, its `__init__`, the construction call, None), or
    when it leaves the submodule to its base's `__init__`, (the class, its `__init__`,
    None, (the base, the `super().__init__(...)` call, the base's `__init__`)); None when
    neither is known or the chain of bases is too deep."""
    caller = renamed(analyzer, caller)
    construction = _construction(analyzer, caller, accessor)
    caller_init = own_init(analyzer, caller)
    if construction is not None:
        return caller, caller_init, construction, None
    inherited = _inherited(analyzer, caller, accessor) if depth < 4 else None
    return (caller, caller_init, None, inherited) if inherited is not None else None


def into_submodule(analyzer, caller, accessor, callee, size, depth=0):
    """``size`` (a symbol of ``caller``) as the callee's symbol, or None. A submodule its
    class leaves to its base's `__init__` is followed there (`super().__init__(...)`)."""
    built = _built(analyzer, caller, accessor, depth)
    if built is None:
        return None
    caller, caller_init, construction, inherited = built
    if construction is None:
        base, call, base_init = inherited
        translated = _through(base_init, call, caller_init, size, inward=True)
        return into_submodule(analyzer, base, accessor, callee, translated, depth + 1) if translated else None
    callee_init = own_init(analyzer, renamed(analyzer, callee))
    if callee_init is None or caller_init is None or any(a.star for a in construction.args):
        return None
    translated = _through(callee_init, construction, caller_init, size, inward=True)
    if not translated:
        return None
    return _spelled_as_read(analyzer, callee, named(analyzer, callee, translated, getattr(size, "config", None)))


def _spelled_as_read(analyzer, key, size):
    """``size`` (a symbol of ``key``) under the spelling ``key``'s own attributes read it
    by, when they read it by an alias of the field (`canonical_field`, in the class known
    for the object): the alias is resolved where it is known, so that what the callee is
    given holds its own spelling whichever caller gave it."""
    param, _, field = size[1:].partition(".")
    config = getattr(size, "config", None)
    if config is None or not field or "." in field:
        return size
    wanted = canonical_field(analyzer, config, field)
    spellings = []
    for attr in submodule_sizes._init_fields(analyzer, key):
        found = submodule_sizes._source(analyzer, renamed(analyzer, key), "self." + attr)
        if found is not None and found[0] == param and found[1] and "." not in found[1]:
            spellings.append(found[1])
    if field in spellings:
        return size
    aliases = {f for f in spellings if canonical_field(analyzer, config, f) == wanted}
    return Symbol(_symbol(param, aliases.pop()), config) if len(aliases) == 1 else size


def out_of_submodule(analyzer, caller, accessor, callee, size, depth=0):
    """``size`` (a symbol of ``callee``, reached as ``accessor`` from ``caller``) as the
    caller's symbol, or None."""
    built = _built(analyzer, caller, accessor, depth)
    if built is None:
        return None
    caller, caller_init, construction, inherited = built
    if construction is None:
        base, call, base_init = inherited
        in_base = out_of_submodule(analyzer, base, accessor, callee, size, depth + 1)
        if not in_base or not is_symbol(in_base):
            return in_base
        translated = _through(base_init, call, caller_init, in_base, inward=False)
        return named(analyzer, caller, translated, getattr(in_base, "config", None)) if translated else None
    callee_init = own_init(analyzer, renamed(analyzer, callee))
    if callee_init is None or caller_init is None or any(a.star for a in construction.args):
        return None
    translated = _through(callee_init, construction, caller_init, size, inward=False)
    return named(analyzer, caller, translated, getattr(size, "config", None)) if translated and is_symbol(translated) \
        else translated


def _through(inner_init, call, outer_init, size, inward: bool):
    """A symbol translated across ``call`` (a construction, or a `super().__init__` call,
    made in ``outer_init``) of a class whose `__init__` is ``inner_init``: inward from
    ``outer_init``'s parameters to ``inner_init``'s, or outward the other way. None when
    unsure; outward, an integer constant passed for the parameter itself is its text."""
    if outer_init is None or any(a.star for a in call.args):
        return None
    param, _, field = size[1:].partition(".")
    if inward:
        for p in inner_init.params[1:]:
            argument = _argument_for(inner_init, call, p.name)
            found = field_of_parameter(outer_init, argument) if argument is not None else None
            rest = _below(field, found[1]) if found is not None and found[0] == param else None
            if rest is not None:
                return _symbol(p.name, rest)
        return None
    argument = _argument_for(inner_init, call, param)
    if argument is None:
        return None
    if not field and isinstance(argument, ir.Const) and type(argument.value) is int:
        return str(argument.value)
    found = field_of_parameter(outer_init, argument)
    return _symbol(found[0], ".".join(f for f in (found[1], field) if f)) if found is not None else None


def _inherited(analyzer, key, accessor):
    """(base, the `super().__init__(...)` call, the base's `__init__`) when ``key`` leaves
    the attribute ``accessor`` to its one base: it writes it nowhere, and its `__init__`
    calls its base's once at its top level."""
    if not (isinstance(accessor, ir.Attribute) and isinstance(accessor.value, ir.Name) and accessor.value.id == "self"):
        return None
    init = own_init(analyzer, key)
    info = analyzer.class_info(key)
    if init is None or info is None or len(info.bases) != 1:
        return None
    if accessor.attr in submodule_sizes._attribute_writes(analyzer, info.node):
        return None
    calls = [s.value for s in init.body if isinstance(s, ir.ExprStmt) and submodule_sizes.is_super_init(s.value)]
    if len(calls) != 1:
        return None
    base = analyzer.resolve(info.bases[0])
    if base.type != "class" or not isinstance(base.ref, ClassKey):
        return None
    base_init = own_init(analyzer, base.ref)
    return (renamed(analyzer, base.ref), calls[0], base_init) if base_init is not None else None


def _below(field: str, prefix: str):
    """``field`` relative to ``prefix`` (`a.b` below `a` is `b`), or None."""
    if not prefix:
        return field
    if field == prefix:
        return ""
    return field[len(prefix) + 1:] if field.startswith(prefix + ".") else None


def _construction(analyzer, caller, accessor):
    if caller is None or not (isinstance(accessor, ir.Attribute) and isinstance(accessor.value, ir.Name)
                              and accessor.value.id == "self"):
        return None
    if own_init(analyzer, renamed(analyzer, caller)) is None:
        return None
    value = single_write(analyzer, renamed(analyzer, caller), accessor.attr, under_if=True)
    return value if isinstance(value, ir.Call) else None


def _symbol(param: str, field: str) -> str:
    return "@" + param + ("." + field if field else "")


def inward(analyzer, caller, accessor, callee, value):
    """`submodule_sizes.inward`, symbolic sizes translated too."""
    if isinstance(caller, ClassKey) and not submodule_sizes._built_as(analyzer, caller, accessor, callee) \
            and _built_as(analyzer, caller, accessor, callee):
        return submodule_sizes._rewrite(value, lambda size: size if submodule_sizes._constant(size) else
                                        into_submodule(analyzer, caller, accessor, callee, size) if is_symbol(size) else None)
    return submodule_sizes.inward(analyzer, caller, accessor, callee, value,
                                  symbol=lambda size: into_submodule(analyzer, caller, accessor, callee, size))


def outward(analyzer, caller, accessor, callee, value):
    """`submodule_sizes.outward`, symbolic sizes translated too (when ``accessor`` is built
    in ``caller``'s `__init__` as an instance of ``callee``)."""
    built = isinstance(caller, ClassKey) and _built_as(analyzer, caller, accessor, callee)
    return submodule_sizes.outward(value, accessor, symbol=(
        lambda size: out_of_submodule(analyzer, caller, accessor, callee, size)) if built else None)


def _built_as(analyzer, caller, accessor, callee, depth=0) -> bool:
    """`submodule_sizes._built_as`, or so built by the base ``caller`` leaves it to."""
    if submodule_sizes._built_as(analyzer, caller, accessor, callee):
        return True
    inherited = _inherited(analyzer, renamed(analyzer, caller), accessor) if depth < 4 else None
    return inherited is not None and _built_as(analyzer, inherited[0], accessor, callee, depth + 1)


def instance_key(frame):
    """The class of the frame's `self` (a module), or None."""
    if frame is None or frame.self_value is None or frame.self_value.type != "module":
        return None
    ref = frame.self_value.ref
    return ref if isinstance(ref, ClassKey) else None
