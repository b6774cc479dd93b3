"""Random draws from a generator seeded inside forward: constants of the export.

`g = torch.Generator().manual_seed(self.seed); keep = torch.rand(x.shape, generator=g)`
gives the same tensor on every call of forward: the generator is created afresh, seeded
with a known value and drawn from with a known shape, so eager PyTorch is deterministic
there. The interpreter evaluates such draws at export time with a *real* generator, made
when forward makes its own, so that its state advances draw by draw exactly as in eager
(two draws from one generator differ, as they do in eager), and embeds the result as a
constant.

Everything else that draws random numbers is refused, because the graph would hold one
sample where eager draws a new one on every call (or a different one):

- no `generator=`: the global RNG's state carries over between calls;
- a generator made outside forward (a module attribute, an argument, a global): same;
- `.seed()` (a non-deterministic seed), `set_state` with a graph value, a seed computed
  from tensor data;
- a dynamic axis in the shape: the number of values drawn differs per input;
- a draw inside a data-dependent `if` or a graph loop from a generator made outside it:
  export runs both branches (and a loop body once), eager runs one branch (or the body N
  times), so the generator's state would diverge.
"""

from __future__ import annotations

from typing import Any

import torch

from lowering.graph import GraphBuilder, Value

# The draws evaluated at export time; all take `generator=` as a keyword.
DRAWS = frozenset({
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.bernoulli", "Tensor.bernoulli",
    "torch.rand_like", "torch.randn_like", "torch.randint_like", "torch.normal", "torch.multinomial",
    "Tensor.multinomial", "torch.poisson",
})
# Draws whose first argument contributes only its shape and dtype, never its values.
_SHAPE_ONLY_INPUT = frozenset({"torch.rand_like", "torch.randn_like", "torch.randint_like"})

_GENERATOR_METHODS = frozenset({"manual_seed", "initial_seed"})


class SeededGenerators:
    """The generators that forward created during this export, each with the graph
    (If branch, Loop body or the main graph) it was created in."""

    def __init__(self) -> None:
        self._born: dict[int, tuple[torch.Generator, GraphBuilder]] = {}

    def create(self, interp, args, kwargs) -> torch.Generator:
        """`torch.Generator(device="cpu")`: a real generator, with PyTorch's fixed default seed."""
        device = args[0] if args else kwargs.get("device", "cpu")
        if len(args) > 1 or set(kwargs) - {"device"} or torch.device(device).type != "cpu":
            raise interp.error("only a CPU torch.Generator() can be created in forward", construct="Generator",
                               hint="create the generator without a device")
        generator = torch.Generator()
        self._born[id(generator)] = (generator, interp.g)  # the reference keeps the id unique
        return generator

    def is_method(self, func) -> bool:
        return isinstance(getattr(func, "__self__", None), torch.Generator)

    def call_method(self, interp, func, args, kwargs):
        """`g.manual_seed(seed)` / `g.initial_seed()` on a generator forward created."""
        generator = func.__self__
        name = getattr(func, "__name__", "?")
        self._require_own(interp, generator, f"Generator.{name}")
        if name not in _GENERATOR_METHODS:
            raise interp.error(f"`Generator.{name}` is not supported in forward: the drawn values would not be known "
                               "at export time", "seed the generator with manual_seed(<int known at export>)",
                               construct=f"Generator.{name}")
        if any(isinstance(a, Value) for a in (*args, *kwargs.values())):
            raise interp.error(f"`Generator.{name}` with a seed computed from tensor values",
                               "seed with a Python int (a config value)", construct=f"Generator.{name}")
        return func(*args, **kwargs)

    def draw(self, interp, func, name: str, args: list, kwargs: dict) -> Value:
        """Run the draw for real with the generator and embed the result as a constant."""
        generator = kwargs["generator"]
        self._require_own(interp, generator, name)
        args = list(args)
        if name in _SHAPE_ONLY_INPUT and args and isinstance(args[0], Value):
            args[0] = torch.empty(_static_shape(interp, args[0], name), dtype=args[0].dtype)
        args = [_known(interp, a, name) for a in args]
        kwargs = {k: _known(interp, v, name) for k, v in kwargs.items()}
        try:
            with torch.no_grad():
                result = func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - eager would raise the same
            raise interp.error(f"{name}(...) failed at export time: {exc}", construct=name,
                               hint="eager PyTorch raises here too for these inputs: fix the call") from None
        return interp.g.const(result)

    def _require_own(self, interp, generator, what: str) -> None:
        born = self._born.get(id(generator)) if isinstance(generator, torch.Generator) else None
        if born is None or born[0] is not generator:
            raise interp.error(
                f"{what} with a generator that forward did not create: its state carries over from one call to "
                "the next, so no constant reproduces it",
                "create and seed it in forward (torch.Generator().manual_seed(seed)), or pass the random tensor "
                "in as an input", construct=what)
        if born[1] is not interp.g:
            raise interp.error(
                f"{what} inside a data-dependent `if` or a graph loop, with a generator created outside it: the "
                "generator's state after it depends on the path taken at run time",
                "draw before the `if`/loop, or create the generator inside it", construct=what)


def _static_shape(interp, v: Value, name: str) -> tuple[int, ...]:
    if v.static_shape is None:
        raise interp.error(f"{name} of a tensor with a dynamic axis: how many values are drawn depends on the input",
                           "export with static shapes, or pass the random tensor in as an input", construct=name)
    return v.static_shape


def _known(interp, v: Any, name: str) -> Any:
    """An argument as a real Python/torch value: sizes must be static, tensors constants."""
    if isinstance(v, Value):
        constant = interp.g.const_value(v)
        if constant is None:
            size = v.rank == 0 and not v.dtype.is_floating_point
            what = "a dynamic axis in the size" if size else "a tensor computed at run time"
            raise interp.error(f"{name} with {what}: the drawn values are not known at export time",
                               "export with static shapes, or pass the random tensor in as an input", construct=name)
        return constant
    if isinstance(v, (list, tuple)):
        return type(v)(_known(interp, x, name) for x in v)
    return v
