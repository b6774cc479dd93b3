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
the size `@config.num_experts`. A field is named as the configuration's class stores it
when `__init__` annotates the parameter with that class (`canonical_field`).

Equations. For a size ``s`` of class ``K`` (the instance's class, or the class it only
renames):

    name(K, "self.a.b")   = "@p.f"   if source(K, "self.a.b") = (p, f)    (`submodule_sizes`)
    name(K, "@p.f")       = "@p.canonical(f)"
    name(K, s)            = s        otherwise (constants, arithmetic; unsure: kept as text)

Across a call into the submodule `self.sub`, built in ``K``'s `__init__` as
`Sub(..., q=arg, ...)`: `@p.f` becomes `@q.g` when `arg` reads `p.h` and `f` is `h.g`
(or `h` is empty); out of it, the reverse. Anything else loses the size, which is always
sound: a lost size decides nothing."""

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
    source,
)
from analyzer.frontend import ir

_CHAIN = re.compile(r"self(\.\w+)+$")
_SYMBOL = re.compile(r"@\w+(\.\w+)*$")


def is_symbol(size) -> bool:
    return isinstance(size, str) and _SYMBOL.match(size) is not None


def named(analyzer, key, size):
    """The symbolic name of ``size`` in an instance of class ``key`` (None: unknown)."""
    if key is None or not isinstance(size, str):
        return size
    key = renamed(analyzer, key)
    if _CHAIN.match(size):
        found = source(analyzer, key, size)
        return _symbol(found[0], found[1]) if found is not None else size
    if is_symbol(size):
        param, _, field = size[1:].partition(".")
        init = own_init(analyzer, key)
        if init is None or not field or "." in field:
            return size
        return _symbol(param, canonical_field(analyzer, annotated_class(analyzer, key, init, param), field))
    return size


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


def into_submodule(analyzer, caller, accessor, callee, size):
    """``size`` (a symbol of ``caller``) as the callee's symbol, or None."""
    construction = _construction(analyzer, caller, accessor)
    callee_init = own_init(analyzer, renamed(analyzer, callee))
    caller_init = own_init(analyzer, renamed(analyzer, caller))
    if construction is None or callee_init is None or caller_init is None or any(a.star for a in construction.args):
        return None
    param, _, field = size[1:].partition(".")
    for p in callee_init.params[1:]:
        argument = _argument_for(callee_init, construction, p.name)
        found = field_of_parameter(caller_init, argument) if argument is not None else None
        if found is None or found[0] != param:
            continue
        rest = _below(field, found[1])
        if rest is not None:
            return named(analyzer, callee, _symbol(p.name, rest))
    return None


def out_of_submodule(analyzer, caller, accessor, callee, size):
    """``size`` (a symbol of ``callee``, reached as ``accessor`` from ``caller``) as the
    caller's symbol, or None."""
    construction = _construction(analyzer, caller, accessor)
    callee_init = own_init(analyzer, renamed(analyzer, callee))
    caller_init = own_init(analyzer, renamed(analyzer, caller))
    if construction is None or callee_init is None or caller_init is None or any(a.star for a in construction.args):
        return None
    param, _, field = size[1:].partition(".")
    argument = _argument_for(callee_init, construction, param)
    if argument is None:
        return None
    if not field and isinstance(argument, ir.Const) and type(argument.value) is int:
        return str(argument.value)
    found = field_of_parameter(caller_init, argument)
    if found is None:
        return None
    return named(analyzer, caller, _symbol(found[0], ".".join(f for f in (found[1], field) if f)))


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
    return submodule_sizes.inward(analyzer, caller, accessor, callee, value,
                                  symbol=lambda size: into_submodule(analyzer, caller, accessor, callee, size))


def outward(analyzer, caller, accessor, callee, value):
    """`submodule_sizes.outward`, symbolic sizes translated too (when ``accessor`` is built
    in ``caller``'s `__init__` as an instance of ``callee``)."""
    built = isinstance(caller, ClassKey) and submodule_sizes._built_as(analyzer, caller, accessor, callee)
    return submodule_sizes.outward(value, accessor, symbol=(
        lambda size: out_of_submodule(analyzer, caller, accessor, callee, size)) if built else None)


def instance_key(frame):
    """The class of the frame's `self` (a module), or None."""
    if frame is None or frame.self_value is None or frame.self_value.type != "module":
        return None
    ref = frame.self_value.ref
    return ref if isinstance(ref, ClassKey) else None
