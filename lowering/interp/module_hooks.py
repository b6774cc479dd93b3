"""Forward hooks, as `nn.Module.__call__` runs them: the pre-hooks (global ones first),
then forward, then the forward hooks (global ones first), each able to replace the
arguments or the output. transformers captures hidden states and attentions this way.

A hook written in Python outside torch is interpreted from its source, as any user
function. A hook torch defines (or one without Python source) cannot be read: refused,
so that a module with hooks never exports as if it had none. Backward hooks do not run
in an inference graph.
"""

from __future__ import annotations

import torch
from torch.nn.modules import module as _module

from lowering.interp.functions import _is_user_function


def _pre_hooks(module: torch.nn.Module):
    for hooks, with_kwargs in ((_module._global_forward_pre_hooks, ()),
                               (module._forward_pre_hooks, module._forward_pre_hooks_with_kwargs)):
        for key, hook in list(hooks.items()):
            yield hook, key in with_kwargs


def _post_hooks(module: torch.nn.Module):
    for hooks, with_kwargs in ((_module._global_forward_hooks, _module._global_forward_hooks_with_kwargs),
                               (module._forward_hooks, module._forward_hooks_with_kwargs)):
        for key, hook in list(hooks.items()):
            yield hook, key in with_kwargs


def has_forward_hooks(module: torch.nn.Module) -> bool:
    return bool(module._forward_pre_hooks or module._forward_hooks or _module._global_forward_pre_hooks
                or _module._global_forward_hooks)


class ModuleHooks:
    def call_with_hooks(self, module: torch.nn.Module, args, kwargs, forward):
        """`forward(args, kwargs)` between `module`'s forward pre-hooks and hooks."""
        args = tuple(args)
        for hook, with_kwargs in _pre_hooks(module):
            result = self._run_hook(module, hook, [module, args, kwargs] if with_kwargs else [module, args])
            if result is None:
                continue
            if with_kwargs:
                args, kwargs = result
            else:
                args = result if isinstance(result, tuple) else (result,)
        output = forward(list(args), kwargs)
        for hook, with_kwargs in _post_hooks(module):
            result = self._run_hook(module, hook,
                                    [module, args, kwargs, output] if with_kwargs else [module, args, output])
            if result is not None:
                output = result
        return output

    def _run_hook(self, module, hook, args):
        if not _is_user_function(getattr(hook, "__func__", hook)):
            name = getattr(hook, "__qualname__", type(hook).__name__)
            raise self.error(
                f"{type(module).__name__} has a forward hook or pre-hook ({name}) that untrace cannot read: "
                "eager PyTorch runs it on every call", "remove the hook before export (its handle's .remove()), "
                "or register a lowering for the module (lowering.register_lowering)", construct="hook")
        return self.call(hook, args, {})
