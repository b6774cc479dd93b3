"""The op table: which function lowers which torch call, at which opsets.

Names are canonical qualified names:

=========================  ===================================================
``torch.X``                torch functions (``torch.relu``, ``torch.linalg.vector_norm``)
``Tensor.X``               Tensor methods (``Tensor.relu``, ``Tensor.add_``)
``torch.nn.functional.X``  ``F`` functions
``operator.X``             Python operators on tensors (``operator.add``, ``operator.getitem``,
                           ``operator.neg``, ``operator.eq``, ``operator.iadd`` ...)
``torch.nn.Linear``        ``nn`` module classes (user classes: ``module.QualName``)
=========================  ===================================================

A *function lowering* is called as ``fn(g, *args, **kwargs)`` with exactly the
arguments of the torch call (Values for tensors, Python values otherwise) and declares
the torch signature itself, defaults and keyword-only arguments included, so Python
binds the call as torch would.  Tensor methods receive ``self`` first.  ``out=`` is
accepted only as None.

A *module lowering* is called as ``fn(g, mod, *args, **kwargs)`` where ``mod`` is a
:class:`ModuleCall`: ``mod.module`` (the live ``nn.Module``: read ``in_features``,
``stride``, ``training`` ...), ``mod.path`` (``"encoder.0"``) and ``mod.param("weight")``
(an initializer named ``encoder.0.weight``; None when the attribute is None).

A lowering returns a Value, a tuple/list/namedtuple of Values, or a Python value, and
raises ``LoweringError`` (``g.error(...)``) for what it cannot lower faithfully.

API::

    @register("torch.relu", "Tensor.relu", "torch.nn.functional.relu", opsets=(17, 23))
    def relu(g, input, inplace=False): ...          # built-in lowerings

    register_lowering("mylib.fused_gelu", fn, opsets=(17, 23))   # users; also a decorator:
    @register_lowering(MyBlock)                                  # a module class
    def lower_block(g, mod, x): ...

    lookup(qualname, opset=18) -> callable | None   # user lowerings win over built-ins
    registrations(qualname) -> list[Registration]
    registered_names() -> list[str]                 # every name with a lowering, sorted
    first_opset(qualname) -> int | None             # the lowest opset it supports
    canonical_name(obj) -> str | None               # torch.relu -> "torch.relu", nn.Linear ->
                                                    # "torch.nn.Linear", Tensor.add -> "Tensor.add"

The built-in families (every module of ``lowering.ops`` not starting with ``_``, except
``registry`` and ``report``) are imported on the first lookup, so a new family file
registers itself by existing.  Two built-ins may not claim the same name at overlapping
opsets.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import threading
from collections.abc import Callable, Iterable
from typing import Any

import torch

from lowering.graph import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, GraphBuilder, Value

__all__ = [
    "ModuleCall",
    "Registration",
    "register",
    "register_lowering",
    "lookup",
    "registrations",
    "registered_names",
    "first_opset",
    "canonical_name",
    "load_builtins",
]

_NOT_FAMILIES = {"registry", "report"}


@dataclasses.dataclass(frozen=True)
class Registration:
    qualname: str
    fn: Callable[..., Any]
    opsets: tuple[int, int]  # inclusive
    kind: str  # "function" | "module"
    family: str  # the module that registered it, e.g. "elementwise" or "user"
    user: bool
    refuses: bool  # registered only to refuse with a clear LoweringError (rand*, ...)

    def supports(self, opset: int) -> bool:
        return self.opsets[0] <= opset <= self.opsets[1]


@dataclasses.dataclass
class ModuleCall:
    """An ``nn.Module`` call site as a module lowering sees it."""

    module: torch.nn.Module
    path: str
    graph: GraphBuilder
    # Parameters whose data forward replaced earlier in the call, by (id(module), name):
    # the value this call computed for them (`lowering.interp.module_attributes`).
    replaced: dict = dataclasses.field(default_factory=dict)

    def name(self, attr: str) -> str:
        return f"{self.path}.{attr}" if self.path else attr

    def param(self, attr: str) -> Value | None:
        """The parameter or buffer ``attr`` as an initializer named ``path.attr``."""
        if (id(self.module), attr) in self.replaced:
            return self.replaced[(id(self.module), attr)]
        t = getattr(self.module, attr)
        if t is None:
            return None
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{self.name(attr)} is not a tensor")
        return self.graph.initializer(self.name(attr), t)


_REGISTRY: dict[str, list[Registration]] = {}
_LOCK = threading.RLock()
_LOADED = False


def _kind_of(qualname: str) -> str:
    last = qualname.rsplit(".", 1)[-1]
    if qualname.startswith(("Tensor.", "operator.")):
        return "function"
    return "module" if last[:1].isupper() else "function"


def _family_of(fn: Callable[..., Any]) -> str:
    mod = getattr(fn, "__module__", "") or ""
    if mod.startswith("lowering.ops."):
        return mod.rsplit(".", 1)[-1]
    return "user"


def _add(qualname: str, fn: Callable[..., Any], opsets: tuple[int, int], *, user: bool, kind: str | None, refuses: bool) -> None:
    lo, hi = opsets
    if lo > hi:
        raise ValueError(f"{qualname}: empty opset range {opsets}")
    reg = Registration(qualname, fn, (lo, hi), kind or _kind_of(qualname), "user" if user else _family_of(fn), user, refuses)
    with _LOCK:
        regs = _REGISTRY.setdefault(qualname, [])
        if not user:
            for other in regs:
                if not other.user and other.opsets[0] <= hi and lo <= other.opsets[1] and other.fn is not fn:
                    raise ValueError(
                        f"{qualname} is registered twice at overlapping opsets: "
                        f"{other.family}.{other.fn.__name__} {other.opsets} and {reg.family}.{fn.__name__} {opsets}"
                    )
        regs.append(reg)


def register(*qualnames: str, opsets: tuple[int, int] = (MIN_OPSET, MAX_OPSET), refuses: bool = False, kind: str | None = None):
    """Decorator for built-in lowerings (one function, several names)."""

    def deco(fn):
        for q in qualnames:
            _add(q, fn, tuple(opsets), user=False, kind=kind, refuses=refuses)
        return fn

    return deco


def register_lowering(
    target: str | type | Callable[..., Any] | Iterable[str],
    fn: Callable[..., Any] | None = None,
    *,
    opsets: tuple[int, int] = (1, 10**6),
    kind: str | None = None,
):
    """Register a user lowering for a function or module class (by object or qualified
    name, or several names).  User lowerings take precedence over built-ins.  Without
    ``fn`` this is a decorator."""
    if isinstance(target, str):
        names = [target]
    elif isinstance(target, (list, tuple, set, frozenset)):
        names = list(target)
    else:
        name = canonical_name(target)
        if name is None:
            raise ValueError(f"cannot name {target!r}; pass its qualified name as a string")
        names = [name]
        if kind is None and inspect.isclass(target):
            kind = "module"

    def deco(f):
        for q in names:
            _add(q, f, tuple(opsets), user=True, kind=kind, refuses=False)
        return f

    return deco(fn) if fn is not None else deco


def load_builtins() -> None:
    """Import every built-in family module (idempotent)."""
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if _LOADED:
            return
        import lowering.ops as pkg

        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if info.name.startswith("_") or info.name in _NOT_FAMILIES:
                continue
            importlib.import_module(f"lowering.ops.{info.name}")
        _LOADED = True


def registrations(qualname: str) -> list[Registration]:
    load_builtins()
    return list(_REGISTRY.get(qualname, ()))


def lookup(qualname: str, opset: int = DEFAULT_OPSET) -> Callable[..., Any] | None:
    """The lowering of ``qualname`` at ``opset`` (the latest user registration first)."""
    load_builtins()
    regs = _REGISTRY.get(qualname)
    if not regs:
        return None
    for reg in reversed(regs):
        if reg.user and reg.supports(opset):
            return reg.fn
    for reg in reversed(regs):
        if reg.supports(opset):
            return reg.fn
    return None


def registered_names() -> list[str]:
    load_builtins()
    return sorted(_REGISTRY)


def first_opset(qualname: str) -> int | None:
    load_builtins()
    regs = _REGISTRY.get(qualname)
    return min(r.opsets[0] for r in regs) if regs else None


_PUBLIC_NAMES: dict[int, str] | None = None


def _public_names() -> dict[int, str]:
    """id(object) -> registry name over torch's public namespaces, first one winning:
    Tensor methods, operators, F, torch.linalg/special/fft, torch."""
    global _PUBLIC_NAMES
    if _PUBLIC_NAMES is None:
        import operator

        import torch.nn.functional as F

        names: dict[int, str] = {}
        spaces = [
            ("Tensor", torch.Tensor),
            ("Tensor", torch._C.TensorBase),
            ("operator", operator),
            ("torch.nn.functional", F),
            ("torch.linalg", torch.linalg),
            ("torch.special", torch.special),
            ("torch.fft", torch.fft),
            ("torch", torch),
            # pybind11 functions of torch._C name a compiler-specific module of their own
            ("torch._C", torch._C),
        ]
        for prefix, ns in spaces:
            for attr in dir(ns):
                if attr.startswith("__") and prefix != "Tensor":
                    continue
                try:
                    obj = getattr(ns, attr)
                except Exception:  # noqa: BLE001 - lazy attributes may fail
                    continue
                if callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
                    names.setdefault(id(obj), f"{prefix}.{attr}")
        _PUBLIC_NAMES = names
    return _PUBLIC_NAMES


def canonical_name(obj: Any) -> str | None:
    """The registry name of a torch function, Tensor method, F function, operator,
    ``nn`` module class or user callable/class; None when it has no stable name.
    An object exported under several names gets the first of: ``Tensor.``,
    ``operator.``, ``torch.nn.functional.``, ``torch.linalg.``/``special.``/``fft.``,
    ``torch.``."""
    if inspect.isclass(obj):
        if issubclass(obj, torch.nn.Module) and getattr(torch.nn, obj.__name__, None) is obj:
            return f"torch.nn.{obj.__name__}"
        return f"{obj.__module__}.{obj.__qualname__}"
    hit = _public_names().get(id(obj))
    if hit is not None:
        return hit
    name = getattr(obj, "__name__", None)
    mod = getattr(obj, "__module__", None)
    if name is None or mod is None:
        return None
    qualname = getattr(obj, "__qualname__", name)
    if "pybind11" in qualname:  # a pybind11 function: its qualname names the binding's internal record type
        qualname = name
    return f"{mod}.{qualname}"
