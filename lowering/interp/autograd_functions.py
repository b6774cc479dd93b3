"""`MyFn.apply(x, ...)` of a custom `torch.autograd.Function`: its `forward`, interpreted
from source with a `ctx` that keeps nothing for the graph.

An export computes the forward pass only; what `forward` tells autograd
(`ctx.save_for_backward`, `ctx.mark_non_differentiable`, `mark_dirty`,
`set_materialize_grads`, attributes it sets for `backward`) matters to `backward` alone,
which a graph never runs. So `ctx` is an object of this call: attributes set on it stay
on it (forward may read them back), and nothing of it outlives the call.

`ctx.needs_input_grad` is what eager gives inside forward at inference: True for an
argument that is a tensor requiring grad, which among the export's values only a
parameter is (graph inputs are data fed to the graph; values computed in forward are
computed without grad, as the export lowers forward under `torch.no_grad()`).

A Function in the newer style (`forward(x, ...)` without ctx, and a `setup_context(ctx,
inputs, output)` of its own) has forward called without ctx; `setup_context` only
prepares backward.

A `symbolic` static method is what the legacy tracer emits instead of forward's ops
(it may name a custom ONNX op). untrace lowers forward, which computes what eager computes
whether or not `symbolic` is there.
"""

from __future__ import annotations

import inspect

import torch

from lowering.graph import Value


class ExportContext:
    """`ctx` of one `Function.apply` at export."""

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors  # forward may read them back

    def save_for_forward(self, *tensors):
        pass

    def mark_non_differentiable(self, *args):
        pass

    def mark_dirty(self, *args):
        pass  # the in-place update itself is lowered where forward makes it

    def set_materialize_grads(self, value):
        self.materialize_grads = value


def is_function_apply(func) -> bool:
    return (inspect.ismethod(func) and getattr(func, "__name__", "") == "apply" and isinstance(func.__self__, type)
            and issubclass(func.__self__, torch.autograd.Function))


def call_function_apply(interp, cls: type, args: list, kwargs: dict):
    forward = cls.forward
    if _own_setup_context(cls):
        return interp.call_python_function(forward, list(args), kwargs)
    needs = tuple(isinstance(a, Value) and a in interp.values_needing_grad for a in args)
    ctx = ExportContext(needs)
    # The call's own object: what forward sets on it is not state outside the call.
    interp.local_objects[id(ctx)] = id(interp.g)
    interp._local_refs.append(ctx)
    return interp.call_python_function(forward, [ctx, *args], kwargs)


def _own_setup_context(cls: type) -> bool:
    return inspect.getattr_static(cls, "setup_context") is not inspect.getattr_static(
        torch.autograd.Function, "setup_context")
