"""Methods of `nn.Module` objects called in forward: the static container idioms
(`self.children()`, `named_children()`, `modules()`, a `ModuleDict`'s `.items()` /
`.values()` / `.keys()`, a `ParameterList`'s items, ...) and an explicit
`submodule.forward(x)`.

The module tree is fixed once the module is built, so these idioms are evaluated for
real against the live module, as a `for m in self.layers` over a `ModuleList` is; their
generators become lists, so a loop over them unrolls. `m.forward(x)` lowers as `m(x)`
does (untrace runs no hooks either way)."""

from __future__ import annotations

import inspect
from collections import abc

import torch

# The methods that only read the module tree (names, submodules, parameters, buffers).
_STATIC_TREE_METHODS = frozenset({
    "children", "named_children", "modules", "named_modules", "parameters", "named_parameters", "buffers",
    "named_buffers", "items", "values", "keys", "get_submodule", "get_parameter", "get_buffer", "__len__",
    "__iter__", "__getitem__", "__contains__", "extra_repr",
})


def is_module_method(func) -> bool:
    """A method bound to an `nn.Module` that torch itself defines (user methods are
    interpreted from their source)."""
    return inspect.ismethod(func) and isinstance(func.__self__, torch.nn.Module) and \
        func.__name__ in _STATIC_TREE_METHODS | {"forward"}


class ModuleMethods:
    def call_module_method(self, method, args, kwargs):
        module = method.__self__
        if method.__name__ == "forward":
            return self.call_module(module, args, kwargs)
        if self._has_graph(args, kwargs):
            raise self.error(f"`{type(module).__name__}.{method.__name__}()` with a tensor argument",
                             "pass a Python value (a name or an index known at export time)", construct="call")
        result = method(*args, **kwargs)
        if isinstance(result, (abc.Iterator, abc.KeysView, abc.ValuesView, abc.ItemsView)):
            return list(result)  # a fresh list: the loop over it unrolls, and forward may not change the tree
        return result
