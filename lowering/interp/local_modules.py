"""Modules that forward builds and calls, as objects of the call: `nn.ReplicationPad2d(pad)(x)`,
einops' `Rearrange("b c h w -> b h w c")(x)`, `nn.Sequential(*self.layers)(x)`.

Eager builds a new module on each call and drops it after; nothing of it outlives the
call. So its constructor runs and its forward lowers like any other code of the call:

- with static arguments only (numbers, strings, config objects, functions, the model's
  own submodules), the constructor is static Python and runs as Python (`static_calls`),
  under a forked random state, so that the export leaves the caller's random state alone;
- with a graph value among them (a padding computed from the input's size), it is
  interpreted from its source on a blank module that `nn.Module.__init__` has set up, as
  the constructor of a plain object is (`ObjectState.instantiate`); a call of
  `nn.Module.__init__` from it then has nothing left to do.

Calling the module lowers its forward as for any module: its op-table lowering (which
reads its attributes, such as a padding of graph sizes) or its source. The parameters and
buffers of submodules passed in (`nn.Sequential(*self.layers)`) are the model's own and
keep their names.

Refused, by the class's name: a module whose constructor leaves it holding tensors
(parameters, buffers or tensor attributes) that it initialised randomly, an `nn.Linear`
built in forward: eager's outputs then change from call to call and no graph can match
them. Told apart by building it a second time under another seed: a tensor that differs
is random. A module built from graph values may hold no parameters or buffers at all
(they could not be told apart so)."""

from __future__ import annotations

import inspect

import torch

from lowering.errors import LoweringError
from lowering.interp.functions import _is_library_python, _is_user_function
from lowering.interp.static_calls import holds_interpreter_value

_SEEDS = (20261207, 7)


def _static_argument(interp, v, depth: int = 0) -> bool:
    """Static Python, where the model's own modules count as static too."""
    if isinstance(v, torch.nn.Module):
        if id(v) in interp.local_objects:
            # one forward built: static unless it holds graph values (a padding of graph sizes)
            return not any(holds_interpreter_value(x) for m in v.modules() for k, x in vars(m).items()
                           if k not in ("_modules", "_parameters", "_buffers"))
        return id(v) in interp.module_paths
    if depth < 4 and isinstance(v, (list, tuple)):
        return all(_static_argument(interp, x, depth + 1) for x in v)
    if depth < 4 and isinstance(v, dict):
        return all(_static_argument(interp, x, depth + 1) for x in v.values())
    return not holds_interpreter_value(v)


def _tensors(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every tensor the module tree holds, by path: parameters, buffers, tensor attributes."""
    found = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        for name, value in [*m._parameters.items(), *m._buffers.items(), *vars(m).items()]:
            if isinstance(value, torch.Tensor):
                found[f"{prefix}.{name}" if prefix else name] = value
    return found


class LocalModules:
    def module_in_forward(self, cls: type, args, kwargs) -> torch.nn.Module:
        """`cls(*args, **kwargs)` for an `nn.Module` class, in forward (see the module doc)."""
        if all(_static_argument(self, a) for a in [*args, *kwargs.values()]):
            module = self._built_for_real(cls, args, kwargs)
        else:
            module = self._built_from_source(cls, args, kwargs)
        # Its own tensors are named apart from the model's (`weight` of a LayerNorm built in
        # forward is not the root's `weight`): by the order forward builds modules in.
        self.modules_built += 1
        base = f"built_in_forward.{self.modules_built}.{cls.__name__}"
        for name, m in module.named_modules():
            if id(m) not in self.module_paths:
                self.local_objects.setdefault(id(m), id(self.g))
                self._local_refs.append(m)
                self.module_paths[id(m)] = f"{base}.{name}" if name else base
        return module

    def _built_for_real(self, cls, args, kwargs) -> torch.nn.Module:
        def build(seed):
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                try:
                    return cls(*args, **kwargs)
                except Exception as exc:  # eager raises it too, on these values
                    raise self.python_exception(exc, f"`{cls.__name__}(...)` failed at export time: {exc!r}") from None

        module = build(_SEEDS[0])
        own = {k: t for k, t in _tensors(module).items() if id(t) not in self.tensor_names}
        if own:
            again = _tensors(build(_SEEDS[1]))
            random = [k for k, t in own.items() if k not in again or again[k].shape != t.shape
                      or not torch.equal(again[k].detach(), t.detach())]
            if random:
                raise self._random_module(cls, random)
        return module

    def _random_module(self, cls, names):
        shown = ", ".join(f"`{n}`" for n in names[:4]) + (" ..." if len(names) > 4 else "")
        return self.error(f"creating a module ({cls.__name__}) inside forward that initialises {shown} randomly: "
                          "eager PyTorch gives a different output on every call, which no graph can match",
                          "create it in __init__, so that its weights are the model's", construct="call")

    def _built_from_source(self, cls, args, kwargs) -> torch.nn.Module:
        init = cls.__init__
        if cls.__new__ is not object.__new__ or not (_is_user_function(init) or _is_library_python(init)):
            raise self.error(f"creating a module ({cls.__name__}) inside forward from tensor values: its constructor "
                             "has no Python source to read", "create it in __init__", construct="call")
        module = cls.__new__(cls)
        torch.nn.Module.__init__(module)  # an empty module, in training mode as a new one is
        self.local_objects[id(module)] = id(self.g)
        self._local_refs.append(module)
        if init is not torch.nn.Module.__init__:
            where = self.location
            try:
                self.call_python_function(init, [module, *args], kwargs)
            except LoweringError as exc:  # named by the module, where forward builds it
                raise LoweringError(f"creating a module ({cls.__name__}) inside forward from tensor values: "
                                    f"{exc.message}", path=where[0], line=where[1], construct="call",
                                    hint="create it in __init__") from None
        held = [f"{prefix}.{n}" if prefix else n for prefix, m in module.named_modules()
                for n in (*m._parameters, *m._buffers)]
        if held:
            raise self.error(f"creating a module ({cls.__name__}) inside forward from tensor values, holding "
                             f"parameters or buffers ({', '.join(held[:4])})", "create it in __init__",
                             construct="call")
        return module

    def initialises_local_module(self, func, args) -> bool:
        """`super().__init__()` reaching `nn.Module.__init__` for a module `_built_from_source`
        set up already."""
        return inspect.ismethod(func) and func.__func__ is torch.nn.Module.__init__ and \
            isinstance(func.__self__, torch.nn.Module) and self.local_objects.get(id(func.__self__)) is not None
