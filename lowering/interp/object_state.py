"""Objects forward creates, and state outside forward's frames that it changes and
restores: an attribute of a config set for the call and put back in a `finally`, a
`contextvars.ContextVar` set and reset around the call.

- An instance of a user class made in forward (`ModelOutput(...)`, a small record) is a
  Python object of the call: it is built for real (`object.__new__`), its `__init__`
  (or the fields of a dataclass, then its `__post_init__`) interpreted from source, and
  its attributes set for real.
- An attribute of any other object (not a module: module state stays refused) and a
  ContextVar are set for real at export time and written in a journal. When forward
  returns, each must hold its value from before the call again: eager's next call
  would see a change left behind, which a graph cannot. The journal is undone either
  way, so that an export leaves the module and its config as it found them.
- Inside a graph region (one side of a data-dependent `If`, a `Loop` body) such a
  change is refused: whether eager makes it depends on tensor data.
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
import inspect
import types

import torch

from lowering.interp.chosen_identity import check_record_change
from lowering.interp.functions import _is_library_python, _is_user_function
from lowering.interp.values import Closure, _contains_graph

_UNSET = object()


@dataclasses.dataclass
class _Change:
    key: tuple  # what changed: (id(object), attribute) or (id(context variable),)
    describe: str  # `config.is_causal`
    current: callable
    before: object
    undo: callable
    where: tuple = (None, None)  # (path, line) of the change, for the refusal that names it


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, (bool, int, float, str, type(None))) and type(a) is type(b):
        return a == b
    return False


class ObjectState:
    # ------------------------------------------------------------ objects made in forward

    def instantiate(self, cls: type, args, kwargs):
        """`cls(*args, **kwargs)` for a user class: a real object, its constructor interpreted.
        A class with a `__new__` of its own (a NamedTuple, an Enum) is called for real when no
        tensor is among the arguments."""
        if _builds_namedtuple(cls.__new__):
            return self._namedtuple(cls, args, kwargs)
        if cls.__new__ not in (object.__new__, dict.__new__):
            if self._has_graph(args, kwargs):
                raise self.error(f"cannot build a {cls.__name__} from tensors in forward: it has a `__new__` of its "
                                 "own", f"build it outside forward, or register a lowering for {cls.__name__}",
                                 construct="call")
            return cls(*args, **kwargs)
        obj = cls.__new__(cls)
        self.local_objects[id(obj)] = id(self.g)
        self._local_refs.append(obj)
        init = cls.__init__
        if (_is_user_function(init) or _is_library_python(init)) and not _generated(init):
            self.call_python_function(init, [obj, *args], kwargs)
        elif dataclasses.is_dataclass(cls) and _generated(init):
            self._init_dataclass(cls, obj, args, kwargs)
        elif init is not object.__init__ or args or kwargs:
            raise self.error(f"cannot build a {cls.__name__} in forward: its constructor has no Python source",
                             f"build it outside forward, or register a lowering for {cls.__name__}",
                             construct="call")
        return obj

    def _namedtuple(self, cls, args, kwargs):
        """A namedtuple's `__new__` (collections' or typing.NamedTuple's) only puts its
        arguments, bound to its fields with their defaults, into a tuple: done here, so
        that the fields may be tensors."""
        try:
            bound = inspect.signature(cls.__new__).bind(cls, *args, **kwargs)
        except TypeError as exc:
            raise self.error(f"cannot build a {cls.__name__}: {exc}", f"pass the fields {cls.__name__} declares",
                             construct="call") from None
        bound.apply_defaults()
        obj = tuple.__new__(cls, [bound.arguments[f] for f in cls._fields])
        if _is_user_function(cls.__init__):
            self.call_python_function(cls.__init__, [obj, *args], kwargs)
        return obj

    def replace_dataclass(self, args, kwargs):
        """`dataclasses.replace(obj, **changes)` as the library does it: a new instance of
        obj's class from its init fields and the changes, its constructor interpreted, so
        that tensors may be among them."""
        if len(args) != 1 or not dataclasses.is_dataclass(args[0]) or isinstance(args[0], type):
            raise self.error("dataclasses.replace() takes one dataclass instance and the fields to change",
                             construct="call")
        obj = args[0]
        changes = dict(kwargs)
        for f in dataclasses.fields(obj):
            if not f.init:
                if f.name in changes:
                    raise self.error(f"dataclasses.replace(): field `{f.name}` is declared with init=False, it "
                                     "cannot be specified", construct="call")
            elif f.name not in changes:
                changes[f.name] = getattr(obj, f.name)
        return self.instantiate(type(obj), [], changes)

    def _init_dataclass(self, cls, obj, args, kwargs):
        fields = [f for f in dataclasses.fields(cls) if f.init]
        try:
            bound = inspect.Signature([inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                         default=_field_default(f)) for f in fields]).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(f"cannot build a {cls.__name__}: {exc}", f"pass the fields {cls.__name__} declares",
                             construct="call") from None
        bound.apply_defaults()
        for f in fields:
            value = bound.arguments[f.name]
            if value is _UNSET:
                raise self.error(f"cannot build a {cls.__name__}: missing field `{f.name}`",
                                 f"pass every field of {cls.__name__} that has no default", construct="call")
            if cls.__dataclass_params__.frozen:
                # A frozen dataclass's own __init__ sets its fields past the __setattr__ that refuses.
                self._journal_attribute(obj, f.name, f"{cls.__name__}.{f.name}")
                object.__setattr__(obj, f.name, value)
            else:
                self.set_attribute(obj, f.name, value, f"{cls.__name__}.{f.name}")
        post_init = getattr(cls, "__post_init__", None)
        if post_init is not None:
            self.call(post_init.__get__(obj), [], {})

    def call_generated_init(self, init, args, kwargs):
        """A dataclass's generated `__init__` called by a wrapper (`init(self, *args)`)."""
        obj, owner = args[0], init.__qualname__.rpartition(".")[0]
        cls = next((c for c in type(obj).__mro__ if c.__qualname__ == owner and dataclasses.is_dataclass(c)), None)
        if cls is None:
            raise self.error(f"cannot read the source of {init.__qualname__}",
                             "register a lowering for it (lowering.register_lowering)", construct="call")
        self._init_dataclass(cls, obj, args[1:], kwargs)

    # ------------------------------------------------------------ attributes

    def set_attribute(self, obj, attr: str, value, describe: str) -> None:
        check_record_change(self, obj, describe)
        setter = type(obj).__setattr__
        if _is_user_function(setter):
            self.call_python_function(setter, [obj, attr, value], {})
            return
        self._journal_attribute(obj, attr, describe)
        setter(obj, attr, value)

    def delete_attribute(self, obj, attr: str, describe: str) -> None:
        check_record_change(self, obj, describe)
        self._journal_attribute(obj, attr, describe)
        try:
            delattr(obj, attr)
        except AttributeError as exc:
            raise self.python_exception(exc, f"`del {describe}` fails at export time: {exc!r}",
                                        construct="del") from None

    def _journal_attribute(self, obj, attr: str, describe: str) -> None:
        """Journal a change to an object that outlives the call; an object forward made is
        its own, but only in the graph region that made it."""
        made_in = self.local_objects.get(id(obj))
        if made_in is not None and made_in == id(self.g):
            return
        what = f"`{describe}` (the module's state)" if isinstance(obj, torch.nn.Module) else f"`{describe}`"
        self._refuse_in_region(what)
        if made_in is not None:
            return
        own = getattr(obj, "__dict__", None)
        stored = own.get(attr, _UNSET) if own is not None else _UNSET  # what undo puts back

        def undo():
            if own is None:
                return
            if stored is _UNSET:
                own.pop(attr, None)
            else:
                own[attr] = stored

        # Compared by what reading it gives: a class attribute shadowed by the same value is no change.
        self._journal.append(_Change((id(obj), attr), describe, lambda: getattr(obj, attr, _UNSET),
                                     getattr(obj, attr, _UNSET), undo, self.location))

    # ------------------------------------------------------------ context variables

    def context_var_call(self, func, var: contextvars.ContextVar, args, kwargs):
        if func.__name__ == "set":
            self._refuse_in_region(f"`ContextVar({var.name!r}).set()`")
            before = var.get(_UNSET)
            token = func(*args, **kwargs)
            self._journal.append(_Change((id(var),), f"ContextVar({var.name!r})", lambda: var.get(_UNSET), before,
                                         lambda: _reset(var, token), self.location))
            return token
        return func(*args, **kwargs)  # get, reset: read and restore for real

    def real_function(self, closure: Closure, what: str):
        """The Python function a `def` in forward makes, for an object that keeps it after
        the call: its code from the enclosing function's, its free variables' values in
        cells, its defaults."""
        outer = closure.frame.root().function
        code = _nested_code(getattr(outer, "__code__", None), closure.fn)
        if code is None:
            raise self.error(f"cannot make {what} ({closure.fn.qualname}) a Python function: its code is not found",
                             "define it at module level, or call the model once in eager PyTorch before export",
                             construct="def")
        env = self.current_view(closure.frame).env
        missing = [n for n in code.co_freevars if n not in env]
        if missing:
            raise self.error(f"cannot make {what} ({closure.fn.qualname}) a Python function: `{missing[0]}` is not "
                             "bound yet", "define it at module level", construct="def")
        cells = tuple(types.CellType(self.real_function(env[n], what) if isinstance(env[n], Closure) else env[n])
                      for n in code.co_freevars)
        if any(_contains_graph(c.cell_contents) for c in cells):
            raise self.error(f"{what} ({closure.fn.qualname}) holds a tensor computed in forward, which would "
                             "outlive the call", "pass it the values it needs as arguments", construct="def")
        defaults = closure.defaults or {}
        positional = [p.name for p in closure.fn.params if p.kind in ("positional", "posonly")]
        argdefs = tuple(defaults[n] for n in positional if n in defaults) or None
        function = types.FunctionType(code, closure.frame.globals, closure.fn.name, argdefs, cells)
        function.__kwdefaults__ = {p.name: defaults[p.name] for p in closure.fn.params
                                   if p.kind == "kwonly" and p.name in defaults} or None
        return function

    # ------------------------------------------------------------ the end of the call

    def changed_state(self) -> _Change | None:
        """The first thing forward changed and left changed (against its value before
        forward's first change to it), or None."""
        seen = set()
        for change in self._journal:
            if change.key not in seen:
                seen.add(change.key)
                if not _same_value(change.current(), change.before):
                    return change
        return None

    def undo_object_changes(self) -> None:
        """Undo the journal, latest first: everything as it was before the call."""
        for change in reversed(self._journal):
            change.undo()
        self._journal.clear()

    def register_hook(self, method, args, kwargs):
        """`module.register_forward_hook(hook)` in forward (transformers installs its
        output-capturing hooks on the first call that asks for them): registered for real,
        journaled (its removal undoes it)."""
        module = method.__self__
        self._refuse_in_region(f"a hook of `{type(module).__name__}`")
        hook = args[0] if args else kwargs.pop("hook", None)
        if isinstance(hook, Closure):  # defined in forward: the module keeps it, so it must be a real function
            hook = self.real_function(hook, f"the hook registered on {type(module).__name__}")
        handle = method(hook, *args[1:], **kwargs)
        present = lambda: handle.id in module._forward_hooks or handle.id in module._forward_pre_hooks  # noqa: E731
        self._journal.append(_Change((id(module), "hook", handle.id), f"the hooks of {type(module).__name__}",
                                     present, False, handle.remove, self.location))
        return handle

    def _refuse_in_region(self, what: str) -> None:
        if self.g is not self.root_graph:
            raise self.error(f"{what} is changed inside a data-dependent branch or loop: whether eager PyTorch "
                             "changes it depends on tensor data, and untrace does not carry it through the graph",
                             "keep per-call state in local variables, or change it outside the data-dependent branch",
                             construct="state")


def _reset(var: contextvars.ContextVar, token) -> None:
    try:
        var.reset(token)
    except (RuntimeError, ValueError):  # forward reset it already
        pass


def _nested_code(code, fn) -> types.CodeType | None:
    """The code object of the nested `def` `fn` in `code`: by name and first line
    (a decorated function's first line is its first decorator's)."""
    if code is None:
        return None
    lines = {fn.span.line, *(d.span.line for d in fn.decorators)}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == fn.name and const.co_firstlineno in lines:
                return const
            found = _nested_code(const, fn)
            if found is not None:
                return found
    return None


def _builds_namedtuple(new) -> bool:
    """The `__new__` collections.namedtuple generates: its globals hold only
    `tuple.__new__` as `_tuple_new`, which it calls on the arguments."""
    return getattr(new, "__globals__", {}).get("_tuple_new") is tuple.__new__


def is_namedtuple_method(func) -> bool:
    """`_make`, `_replace`, `_asdict` and the like of a namedtuple (of its instance or its
    class), as collections defines them: they only rearrange the items, tensors or not,
    so they run for real."""
    owner = getattr(func, "__self__", None)
    cls = owner if isinstance(owner, type) else type(owner)
    code = getattr(getattr(func, "__func__", None), "__code__", None)
    return (inspect.ismethod(func) and issubclass(cls, tuple) and _builds_namedtuple(cls.__new__)
            and code is not None and code.co_filename == collections.__file__)


def _generated(fn) -> bool:
    """A function without a source file (a dataclass's generated `__init__`)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<")


def _field_default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return _UNSET


def is_generated_init(func, args) -> bool:
    return inspect.isfunction(func) and func.__name__ == "__init__" and _generated(func) and bool(args)


def changes_module_tensors(value) -> bool:
    """A value a module attribute may not be set to in forward: a tensor (its state, which
    a graph cannot carry to the next call) or a container that may hold them. Python values
    are journaled like any other object's."""
    return _contains_graph(value) or isinstance(value, (torch.Tensor, list, dict, set))


_HOOK_REGISTRATIONS = ("register_forward_hook", "register_forward_pre_hook")


def is_hook_registration(func) -> bool:
    return inspect.ismethod(func) and isinstance(func.__self__, torch.nn.Module) and \
        func.__name__ in _HOOK_REGISTRATIONS and func.__func__ is getattr(torch.nn.Module, func.__name__)


def is_context_var_method(func) -> bool:
    return isinstance(getattr(func, "__self__", None), contextvars.ContextVar)

