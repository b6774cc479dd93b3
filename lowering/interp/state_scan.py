"""Whether a call run as Python could change anything outside itself: a bytecode scan.

`static_calls` runs a call on static values for real only when this scan finds that the
callee cannot change state that outlives the call (a global, a module-level container, an
attribute of an argument or of a config object, a cell it does not own): such a change
made for real is neither recorded nor undone by the interpreter, nor refused under a
data-dependent branch, and a call stopped at a torch op and then interpreted from source
would make it twice. What the scan cannot decide is "may change": the call is then
interpreted from source, where every change is seen.

The scan reads the code of the callee, its nested code objects (comprehensions, lambdas,
nested `def`s and classes), and, transitively, every function it can resolve statically:
globals, closure cells, attributes of modules and classes, the arguments' values, and the
methods of the (Python) classes of the objects reachable from them. It refuses

- `STORE_GLOBAL`, `DELETE_GLOBAL`; `STORE_DEREF`/`DELETE_DEREF` into a cell the call does
  not own (a free variable of the callee itself);
- `STORE_ATTR`/`DELETE_ATTR`, except on `self` in the `__init__`/`__post_init__`/`__new__`
  of a class the call constructs (or of a class the call itself defines);
- `STORE_SUBSCR`/`DELETE_SUBSCR` and calls of a method that changes its receiver (`append`,
  `update`, `__setitem__`, ...) on anything but a container the call built itself (a
  display, a comprehension, `list(...)`/`dict(...)`/`.copy()`, its `*args`/`**kwargs`);
- `setattr`/`delattr`/`object.__setattr__` on anything but that new `self`; the in-place
  functions of `operator`; a C function outside the pure modules (`math`, `operator`,
  `itertools`, `functools`, builtins ...), a call whose callee it cannot resolve.
"""

from __future__ import annotations

import builtins
import collections
import dis
import functools
import inspect
import operator
import types

MUTATORS = frozenset({
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add", "discard",
    "sort", "reverse", "difference_update", "intersection_update", "symmetric_difference_update", "appendleft",
    "extendleft", "popleft", "rotate", "move_to_end", "subtract", "__setitem__", "__delitem__", "__setattr__",
    "__delattr__", "__iadd__", "__isub__", "__imul__", "__ior__", "__iand__", "__ixor__", "setattr", "delattr",
    "__set__", "__delete__", "send", "throw", "close", "write", "writelines", "seek", "truncate", "acquire",
    "release", "put", "put_nowait", "get_nowait", "register", "unregister", "push", "set", "setflags", "resize",
})
_MUTATING_FUNCTIONS = {setattr, delattr, builtins.exec, builtins.eval, builtins.open,
                       builtins.input, builtins.breakpoint,
                       *(getattr(operator, n) for n in dir(operator)
                         if n in ("setitem", "delitem", "__setitem__", "__delitem__")
                         or n.startswith(("i", "__i")) and n.lstrip("_")[1:] in
                         ("add", "and", "concat", "floordiv", "lshift", "mod", "mul", "matmul", "or", "pow",
                          "rshift", "sub", "truediv", "xor"))}
# C functions of these modules change nothing but what they are given to change
# (`_MUTATING_FUNCTIONS`): the old `_PURE_MODULES`, with their C accelerators.
_PURE_C_MODULES = frozenset({"builtins", "math", "cmath", "operator", "functools", "itertools", "numbers",
                             "collections", "typing", "enum", "contextlib", "abc", "bisect", "string", "struct",
                             "keyword", "unicodedata", "dataclasses", "copy", "types", "weakref"})
# Callees whose result is a container of the call's own.
_NEW_CONTAINERS = {list, dict, set, bytearray, collections.OrderedDict, collections.defaultdict, collections.deque,
                   collections.Counter, sorted}
_NEW_CONTAINER_METHODS = frozenset({"copy", "__copy__", "fromkeys"})
_COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>"})
_CONSTRUCTORS = ("__new__", "__init__", "__post_init__")
_BUILTIN_TYPES = (str, bytes, int, float, complex, bool, tuple, list, dict, set, frozenset, range, slice)
# What a method call on a value the scan cannot resolve may be: a method of a builtin type
# (`s.split`, `d.get`, `n.bit_length`) that does not change its receiver.
_BUILTIN_METHOD_NAMES = frozenset(n for t in _BUILTIN_TYPES for n in dir(t)) - MUTATORS
# Dunders no operation of a static helper runs implicitly but printing and copying (a
# dataclass's `__repr__` guards against recursion with a set of its own).
_NOT_IMPLICIT = frozenset({"__repr__", "__str__", "__format__", "__dir__", "__sizeof__", "__reduce__",
                           "__reduce_ex__", "__getstate__", "__setstate__", "__copy__", "__deepcopy__",
                           "__subclasshook__", "__class_getitem__", "__weakref__", "__dict__", "__module__",
                           "__doc__", "__annotations__", "__dataclass_fields__", "__dataclass_params__",
                           "__match_args__", "__slots__", "__qualname__", "__hash__"})
# The operator dunders: run only by an operator in the scanned code, or by a builtin it
# calls (`sum`, `sorted`, `max` compare and add), so scanned only then. A mapping's
# `__and__` (from `collections.abc.Set` on its views) is never run by `d.get(k)`.
_OPERATOR_DUNDERS = frozenset(
    f"__{side}{name}__" for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
                                     "lshift", "rshift", "and", "xor", "or") for side in ("", "r", "i")
) | frozenset({"__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__invert__", "__abs__",
               "__round__", "__trunc__", "__floor__", "__ceil__"})
_OPERATOR_OPS = frozenset({"BINARY_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT"})
_ORDERINGS = frozenset({"<", "<=", ">", ">="})  # `==` and `!=` run `__eq__` / `__ne__`, always scanned
_C_CALLABLES = (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodDescriptorType,
                types.WrapperDescriptorType, type)
_UNKNOWN = object()
_MAX_FUNCTIONS = 400


class _MayChange(Exception):
    """The scan found, or could not exclude, a change of state outside the call."""


def _effect(ins: dis.Instruction):
    """(pops, pushes) of an instruction on CPython 3.11's stack; None when not modelled."""
    op, a = ins.opname, ins.arg or 0
    if op in ("NOP", "RESUME", "PRECALL", "KW_NAMES", "EXTENDED_ARG", "CACHE", "COPY_FREE_VARS", "MAKE_CELL"):
        return 0, 0
    if op in ("LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME", "LOAD_CLASSDEREF",
              "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS", "PUSH_NULL"):
        return 0, 1
    if op == "LOAD_GLOBAL":
        return 0, 1 + (a & 1)
    if op in ("LOAD_ATTR", "GET_ITER", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_NOT", "UNARY_INVERT"):
        return 1, 1
    if op == "LOAD_METHOD":
        return 1, 2
    if op in ("BINARY_SUBSCR", "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP"):
        return 2, 1
    if op == "FORMAT_VALUE":
        return 1 + bool(a & 4), 1
    if op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
        return a, 1
    if op == "BUILD_MAP":
        return 2 * a, 1
    if op == "BUILD_CONST_KEY_MAP":
        return a + 1, 1
    if op in ("LIST_EXTEND", "LIST_APPEND", "SET_UPDATE", "SET_ADD", "DICT_UPDATE", "DICT_MERGE", "POP_TOP",
              "STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"):
        return 1, 0
    if op == "MAP_ADD":
        return 2, 0
    if op == "CALL":
        return a + 2, 1
    if op == "CALL_FUNCTION_EX":
        return 3 + (a & 1), 1
    if op == "MAKE_FUNCTION":
        return 1 + bin(a & 0xF).count("1"), 1
    return None


class _Code:
    """One code object's instructions, and the origins of its stack slots."""

    def __init__(self, code: types.CodeType, cells: dict | None, args: dict | None, owned: frozenset,
                 new_self: bool, globs: dict, cell_owner: dict | None = None, self_class=None):
        self.code, self.ins = code, list(dis.get_instructions(code))
        self.cells = cells or {}  # free variable -> value (the callee's own closure)
        self.args = args or {}  # parameter -> the call's argument (the callee itself)
        self.owned = owned  # the cells the call owns (of enclosing code run by the call)
        self.new_self = new_self  # `self` is an object this call constructs
        self.self_class = self_class  # ... of this class, when known
        self.globs = globs
        self.cell_owner = dict(cell_owner or {})  # a cell the call owns -> the code that holds it
        self.cell_owner.update({n: self for n in code.co_cellvars})
        n = code.co_argcount + code.co_kwonlyargcount
        flags = code.co_flags
        self.params = set(code.co_varnames[:n + bool(flags & inspect.CO_VARARGS) + bool(flags & inspect.CO_VARKEYWORDS)])
        self.packed = set(code.co_varnames[n:n + bool(flags & inspect.CO_VARARGS)
                                           + bool(flags & inspect.CO_VARKEYWORDS)])  # *args, **kwargs: new
        self.stored: dict[str, list[int]] = collections.defaultdict(list)
        for i, x in enumerate(self.ins):
            if x.opname in ("STORE_FAST", "DELETE_FAST"):
                self.stored[x.argval].append(i)
        self._fresh: dict[str, bool] = {}

    def slot(self, i: int, d: int):
        """The instruction index and push index that made the stack slot `d` below the top
        just before instruction `i`; None when the scan cannot tell (a jump target between)."""
        j = i - 1
        while j >= 0:
            if self.ins[j + 1].is_jump_target:
                return None
            x = self.ins[j]
            if x.opname == "COPY":
                if d == 0:
                    d = x.arg - 1
                else:
                    d -= 1
                j -= 1
                continue
            if x.opname == "SWAP":
                d = x.arg - 1 if d == 0 else 0 if d == x.arg - 1 else d
                j -= 1
                continue
            effect = _effect(x)
            if effect is None:
                return None
            pops, pushes = effect
            if d < pushes:
                return j, d
            d += pops - pushes
            j -= 1
        return None

    def origin(self, i: int, d: int, depth: int = 0):
        """What the stack slot holds: ("local", name), ("new",), ("value", v), ("null",),
        ("func",), or None."""
        found = self.slot(i, d)
        if found is None or depth > 8:
            return None
        return self.origin_at(*found, depth)

    def origin_at(self, j: int, k: int, depth: int = 0):
        """What the push `k` (0: the top) of instruction `j` holds (see `origin`)."""
        x = self.ins[j]
        op = x.opname
        if op == "LOAD_BUILD_CLASS":
            return ("value", builtins.__build_class__)
        if op == "LOAD_FAST":
            if self.self_class is not None and self.is_self(("local", x.argval)):
                return ("self", self.self_class)
            if x.argval in self.args and x.argval not in self.packed and not self.stored.get(x.argval):
                return ("value", self.args[x.argval])
            return ("local", x.argval)
        if op in ("BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP"):
            return ("new",)
        if op == "MAKE_FUNCTION":
            return ("func",)
        if op == "PUSH_NULL" or op == "LOAD_GLOBAL" and k == 1:
            return ("null",)
        if op == "LOAD_GLOBAL":
            return self.global_value(x.argval)
        if op == "LOAD_CONST":
            return ("value", x.argval)
        if op == "LOAD_DEREF":
            if x.argval in self.cells:
                return ("value", self.cells[x.argval])
            owner = self.cell_owner.get(x.argval)
            if owner is not None and owner.own_cell_function(x.argval):
                return ("func",)
            return None
        if op in ("LOAD_ATTR", "LOAD_METHOD"):
            if op == "LOAD_METHOD" and k == 0:  # the receiver, pushed back
                return self.origin(j, 0, depth + 1)
            owner = self.origin(j, 0, depth + 1)
            if owner is not None and owner[0] == "value":
                value = attribute(owner[1], x.argval)
                return None if value is _UNKNOWN else ("value", value)
            if owner is not None and owner[0] == "self":  # a method of the class being built
                value = inspect.getattr_static(owner[1], x.argval, None)
                if isinstance(value, types.FunctionType):
                    return ("self method", value, owner[1])  # run on the new object
                if isinstance(value, (property, staticmethod, classmethod)):
                    return ("value", attribute(owner[1], x.argval))
            return None
        if op == "CALL":
            below = self.slot(j, x.arg + 1)
            if below is not None and self.ins[below[0]].opname == "LOAD_METHOD" and \
                    self.ins[below[0]].argval in _NEW_CONTAINER_METHODS:
                return ("new",)  # x.copy(): a container of the call's own
            callee = self.callee(j, x.arg, depth + 1)
            if callee is not None and callee[0] == "value" and callee[1] is builtins.__build_class__:
                return ("func",)  # a class this call defines
            if callee is not None and callee[0] == "value":
                try:
                    if callee[1] in _NEW_CONTAINERS:
                        return ("new",)
                except TypeError:
                    pass
            if callee is not None and callee[0] == "method" and callee[1] in _NEW_CONTAINER_METHODS:
                return ("new",)
            if callee is not None and callee[0] == "comprehension":
                return ("new",)
        return None

    def callee(self, i: int, n: int, depth: int = 0):
        """The callee of the `CALL n` at `i`: ("value", v), ("method", name) on an
        unresolved receiver, ("comprehension",), ("func",), or None."""
        below = self.slot(i, n + 1)
        if below is None:
            return None
        x = self.ins[below[0]]
        if x.opname == "LOAD_METHOD" and below[1] == 1:  # [method, self, args...]
            method = self.origin_at(below[0], 1, depth + 1)
            return method if method is not None and method[0] in ("value", "self method") else ("method", x.argval)
        if x.opname == "MAKE_FUNCTION":
            code = self.ins[below[0] - 1].argval if below[0] else None
            return ("comprehension",) if getattr(code, "co_name", "") in _COMPREHENSIONS else ("func",)
        if self.origin_at(*below, depth + 1) != ("null",):
            return self.origin_at(*below, depth + 1)  # [callable, self-like first argument, ...]
        found = self.slot(i, n)
        origin = self.origin(i, n, depth + 1)
        if origin is not None and origin[0] == "local" and self.own_function(origin[1]):
            return ("func",)
        if found is not None and self.ins[found[0]].opname == "LOAD_ATTR":
            owner = self.origin(found[0], 0, depth + 1)
            if owner is None or owner[0] != "value":
                return ("method", self.ins[found[0]].argval)
        return origin

    def global_value(self, name: str):
        if name in self.globs:
            return ("value", self.globs[name])
        b = self.globs.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        return ("value", b[name]) if name in b else None

    def own_cell_function(self, name: str) -> bool:
        """A cell of this code bound only to functions it defines."""
        stores = [i for i, x in enumerate(self.ins) if x.opname in ("STORE_DEREF", "DELETE_DEREF") and x.argval == name]
        return bool(stores) and name not in self.params and all(
            self.ins[i].opname == "STORE_DEREF" and self.origin(i, 0) == ("func",) for i in stores)

    def own_function(self, name: str) -> bool:
        """A local bound only to functions this code defines."""
        stores = self.stored.get(name)
        return bool(stores) and name not in self.params and all(
            self.ins[i].opname == "STORE_FAST" and self.origin(i, 0) == ("func",) for i in stores)

    def fresh(self, origin) -> bool:
        """Whether a slot holds a container the call built itself."""
        if origin is None:
            return False
        if origin[0] == "new":
            return True
        if origin[0] != "local":
            return False
        name = origin[1]
        if name not in self._fresh:
            self._fresh[name] = False  # a cycle (x = x.copy()...): not fresh
            stores = self.stored.get(name, [])
            if name in self.params and name not in self.packed:
                self._fresh[name] = False
            else:
                self._fresh[name] = all(self.ins[i].opname == "DELETE_FAST" or self.fresh(self.origin(i, 0))
                                        for i in stores) and (bool(stores) or name in self.packed)
        return self._fresh[name]

    def is_self(self, origin) -> bool:
        """The object this constructor builds (`self`, never rebound)."""
        if not self.new_self or not self.code.co_varnames:
            return False
        me = self.code.co_varnames[0]
        if origin is None or self.stored.get(me):
            return False
        if origin[0] == "local":
            return origin[1] == me
        return origin[0] == "self"

    def next_loads_self(self, i: int) -> bool:
        """The instruction after `i` loads the new `self` (`setattr(self, ...)`,
        `object.__setattr__(self, ...)`)."""
        nxt = self.ins[i + 1] if i + 1 < len(self.ins) else None
        return self.new_self and nxt is not None and nxt.opname == "LOAD_FAST" and \
            nxt.argval == self.code.co_varnames[0] and not self.stored.get(nxt.argval)


def attribute(owner, name: str):
    """`owner.name` read without running code of the owner's (a module's or class's
    attribute, a method found on an object's class); _UNKNOWN when not found."""
    if name == "__class__":
        return type(owner)
    try:
        value = inspect.getattr_static(owner, name)
    except AttributeError:
        return _UNKNOWN
    if isinstance(value, (staticmethod, classmethod)):
        return value.__func__
    if isinstance(value, property):
        return value.fget if value.fget is not None else _UNKNOWN
    if isinstance(owner, types.ModuleType) or inspect.isclass(owner):
        try:
            return getattr(owner, name)  # C descriptors bound the way Python binds them
        except Exception:
            return value
    if isinstance(value, types.FunctionType):
        return types.MethodType(value, owner)
    return value


class _Scan:
    def __init__(self):
        self.seen: set = set()
        self.names: set[str] = set()  # attribute names the scanned code reads
        self.operators = False  # whether it applies an operator, or calls a builtin that may
        self.objects: list = []  # instances and classes whose methods those names may run
        self.object_ids: set[int] = set()
        self.count = 0

    def fail(self, why: str):
        raise _MayChange(why)

    # ------------------------------------------------------------ values
    def value(self, v, depth: int = 0, new_self: bool = False):
        """Scan what calling or using `v` may run."""
        if depth > 4 or v is None or isinstance(v, (str, bytes, int, float, complex, bool, types.ModuleType)):
            return
        if isinstance(v, functools.partial):
            self.value(v.func, depth + 1)
            for a in (*v.args, *v.keywords.values()):
                self.value(a, depth + 1)
            return
        if isinstance(v, types.MethodType):
            self.value(v.__func__, depth)
            self.add_object(v.__self__)
            return
        if isinstance(v, types.FunctionType):
            self.function(v, new_self=new_self)
            return
        if inspect.isclass(v):
            if (v.__module__ or "").partition(".")[0] != "torch":  # torch's: stopped at its first op (`_NoTorch`)
                self.cls(v)
            return
        if isinstance(v, (types.BuiltinFunctionType, types.BuiltinMethodType, types.MethodDescriptorType,
                          types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.MethodWrapperType)):
            self.c_function(v)
            return
        if isinstance(v, (list, tuple, set, frozenset)):
            for x in v:
                self.value(x, depth + 1)
            return
        if isinstance(v, dict):
            for x in v.values():
                self.value(x, depth + 1)
            return
        self.add_object(v)
        state = getattr(v, "__dict__", None)
        if isinstance(state, dict):
            for x in list(state.values()):
                self.value(x, depth + 1)

    def add_object(self, obj):
        if id(obj) in self.object_ids or type(obj).__module__ == "builtins":
            return
        self.object_ids.add(id(obj))
        self.objects.append(obj)

    def c_function(self, f):
        try:
            if f in _MUTATING_FUNCTIONS:
                self.fail(f"calls `{getattr(f, '__name__', f)}`")
        except TypeError:
            pass
        name = getattr(f, "__name__", "")
        if name in MUTATORS:
            self.fail(f"calls `.{name}()`")
        owner = getattr(f, "__self__", None)
        objclass = getattr(f, "__objclass__", None)
        if objclass is not None:
            if objclass.__module__ != "builtins":
                self.fail(f"calls `{name}` of {objclass.__name__}")
            return
        if owner is None or isinstance(owner, types.ModuleType):
            module = getattr(f, "__module__", None) or getattr(owner, "__name__", "") or ""
            if module.lstrip("_").partition(".")[0] not in _PURE_C_MODULES:
                self.fail(f"calls `{module}.{name}`, a C function outside the pure modules")
            return
        if inspect.isclass(owner):
            if owner.__module__ != "builtins":
                self.fail(f"calls `{owner.__name__}.{name}`")
            return
        if type(owner).__module__ != "builtins":
            self.fail(f"calls `.{name}()` of a {type(owner).__name__}")

    def cls(self, c):
        if id(c) in self.seen:
            return
        self.seen.add(id(c))
        meta_call = attribute(type(c), "__call__")
        if isinstance(meta_call, types.FunctionType):
            self.function(meta_call)
        for base in c.__mro__:
            if base.__module__ == "builtins":
                continue
            for name in _CONSTRUCTORS:
                f = base.__dict__.get(name)
                f = f.__func__ if isinstance(f, (staticmethod, classmethod)) else f
                if isinstance(f, types.FunctionType):
                    self.function(f, new_self=True, self_class=c)
        self.add_object(c)

    # ------------------------------------------------------------ code
    def function(self, f, args: dict | None = None, new_self: bool = False, self_class=None):
        key = (id(f.__code__), new_self)
        if key in self.seen and args is None:
            return
        self.seen.add(key)
        self.count += 1
        if self.count > _MAX_FUNCTIONS:
            self.fail("calls more functions than the scan follows")
        cells = {}
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                cells[name] = cell.cell_contents
            except ValueError:
                pass
        for d in (*(f.__defaults__ or ()), *(f.__kwdefaults__ or {}).values()):
            self.value(d, 1)
        self.code(_Code(f.__code__, cells, args, frozenset(), new_self, f.__globals__, self_class=self_class),
                  f.__code__.co_freevars)

    def code(self, c: _Code, foreign_cells):
        code = c.code
        for i, x in enumerate(c.ins):
            op = x.opname
            if op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                self.fail(f"`{code.co_name}` assigns the global `{x.argval}`")
            if op in ("STORE_DEREF", "DELETE_DEREF") and x.argval in foreign_cells:
                self.fail(f"`{code.co_name}` assigns `{x.argval}` of an enclosing function (`nonlocal`)")
            if op in ("STORE_ATTR", "DELETE_ATTR"):
                if not c.is_self(c.origin(i, 0)):
                    self.fail(f"`{code.co_name}` assigns the attribute `.{x.argval}` of an object it did not build")
            if op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
                if not c.fresh(c.origin(i, 1)):
                    self.fail(f"`{code.co_name}` assigns an item of a container it did not build")
            if op in ("LOAD_ATTR", "LOAD_METHOD") and x.argval not in MUTATORS:
                self.names.add(x.argval)  # (a change of the call's own object runs no method of another's)
            if op in ("LOAD_ATTR", "LOAD_METHOD") and x.argval in MUTATORS:
                receiver = c.origin(i, 0)
                if not (c.fresh(receiver) or receiver is not None and receiver[0] == "value"
                        and inspect.isclass(receiver[1]) and c.next_loads_self(i)):
                    self.fail(f"`{code.co_name}` calls `.{x.argval}()` on an object it did not build")
                continue  # a change of the call's own object
            if op in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_ATTR", "LOAD_METHOD", "LOAD_NAME"):
                if op == "LOAD_NAME":
                    continue  # a class body's own namespace, or a global read
                origin = c.origin_at(i, 1 if op == "LOAD_METHOD" else 0)
                if origin is not None and origin[0] == "self method":
                    self.function(origin[1], new_self=True, self_class=origin[2])
                if origin is not None and origin[0] == "value":
                    v = origin[1]
                    try:
                        mutating = v in _MUTATING_FUNCTIONS
                    except TypeError:
                        mutating = False
                    if mutating and not c.next_loads_self(i):
                        self.fail(f"`{code.co_name}` calls `{getattr(v, '__name__', v)}`")
                    if not mutating:
                        self.value(v, 1)
            if op in _OPERATOR_OPS or op == "COMPARE_OP" and x.argval in _ORDERINGS:
                self.operators = True
            if op == "CALL":
                callee = c.callee(i, x.arg)
                if callee is None or callee[0] != "value" or isinstance(callee[1], _C_CALLABLES):
                    self.operators = True  # a builtin (`sum`, `sorted`) may apply operators to what it gets
                if callee is None:
                    self.fail(f"`{code.co_name}` calls a function the scan cannot resolve")
                if callee[0] == "method" and callee[1] not in _BUILTIN_METHOD_NAMES | MUTATORS:
                    self.fail(f"`{code.co_name}` calls `.{callee[1]}()` on a value the scan cannot resolve")
                if callee[0] == "local":
                    self.fail(f"`{code.co_name}` calls `{callee[1]}`, which the scan cannot resolve")
            if op == "CALL_FUNCTION_EX":
                callee = c.origin(i, 1 + (x.arg & 1))
                if callee is None or callee[0] not in ("value", "func"):
                    self.fail(f"`{code.co_name}` calls a function the scan cannot resolve")
        # nested code: comprehensions, lambdas, nested defs and class bodies
        class_body = not code.co_flags & inspect.CO_NEWLOCALS
        owned = c.owned | set(code.co_cellvars)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                nested = _Code(const, None, None, frozenset(owned),
                               class_body and const.co_name in _CONSTRUCTORS, c.globs, c.cell_owner)
                self.code(nested, [n for n in const.co_freevars if n not in owned])

    def methods(self):
        """The methods the scanned code's attribute names and Python's implicit calls may
        run on the objects reachable from the call; until nothing new is found."""
        done: set = set()
        while True:
            work = [(o, n) for o in list(self.objects) for n in self._names_of(o) if (id(o), n) not in done]
            if not work:
                return
            for o, n in work:
                done.add((id(o), n))
                owner = o if inspect.isclass(o) else type(o)
                try:
                    v = inspect.getattr_static(owner, n)
                except AttributeError:
                    continue
                if isinstance(v, property):
                    v = v.fget
                elif isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                if isinstance(v, types.FunctionType):
                    self.function(v)

    def _names_of(self, o):
        owner = o if inspect.isclass(o) else type(o)
        dunders = {n for base in owner.__mro__ if base.__module__ != "builtins" for n in vars(base)
                   if n.startswith("__") and n.endswith("__")} - _NOT_IMPLICIT - {"__setattr__", "__delattr__", "__del__",
                                                                   "__init_subclass__", "__set_name__", "__setitem__",
                                                                   "__delitem__", *_CONSTRUCTORS}
        if not self.operators:
            dunders -= _OPERATOR_DUNDERS
        return sorted(dunders | self.names)


# Builtins that call what they are given (`map(cls, xs)`, `sorted(xs, key=cls)`): a class
# passed to one is constructed, so its constructors are scanned.
_CALLS_ITS_ARGUMENTS = frozenset({"map", "filter", "sorted", "min", "max", "iter", "next", "reduce",
                                  "starmap", "accumulate", "groupby", "partial", "getattr", "hasattr"})


def _only_reads_its_arguments(func) -> bool:
    """A builtin function or type (`str`, `repr`, `isinstance`, `len`, `hash`, `type`) that
    only looks at a class given to it, never calls it."""
    return (getattr(func, "__module__", None) == "builtins"
            and isinstance(func, (types.BuiltinFunctionType, type))
            and getattr(func, "__name__", "") not in _CALLS_ITS_ARGUMENTS)


def may_change_state(func, owner, args, kwargs) -> str | None:
    """Why a call of `func` on these arguments might change state outside itself (None:
    it cannot, by the scan above)."""
    scan = _Scan()
    try:
        target = getattr(func, "__func__", func)
        bound = [owner] if isinstance(func, types.MethodType) else []
        if isinstance(target, functools.partial):
            scan.value(target)
        elif isinstance(target, types.FunctionType):
            try:
                binding = inspect.signature(target).bind(*bound, *args, **kwargs).arguments
            except TypeError:
                binding = None
            scan.function(target, args=dict(binding) if binding is not None else None)
        else:
            scan.value(func)
        if owner is not None:
            scan.value(owner)
        for a in (*args, *kwargs.values()):
            if inspect.isclass(a) and _only_reads_its_arguments(func):
                # `str(cls)`, `isinstance(x, cls)`: the class is looked at, not built; what
                # may run is its metaclass's dunders (`type.__repr__` for most)
                scan.add_object(type(a))
                continue
            scan.value(a)
        scan.methods()
    except _MayChange as exc:
        return str(exc)
    except RecursionError:
        return "the scan could not follow it"
    return None
