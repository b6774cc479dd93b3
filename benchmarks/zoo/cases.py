"""One real-model case of the zoo: how to build it, what to export it with, what to check
it on.

A case is data, not code that runs at import: `build()` makes the model (seeded random
weights, eval(), nothing downloaded) and `inputs()` the example and check inputs, both
called only in the process that measures the case, so listing the zoo stays cheap.

Dynamic shapes are written once, in torch.export's layout keyed by forward's parameter
names: `{"x": {0: "batch", 2: "height"}}`, and for a list input one dict per element
(`{"images": [{1: "h0", 2: "w0"}]}`). The harness turns them into each exporter's own
form (untrace's `dynamic_shapes`, the legacy tracer's `dynamic_axes`, torch.export Dims).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

SEED = 0


@dataclass(frozen=True)
class Inputs:
    """Positional and keyword arguments of one forward call."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CaseInputs:
    example: Inputs
    # (label, inputs): at least three, each different from the example in values and
    # most in batch, length or image size.
    checks: list[tuple[str, Inputs]]


@dataclass(frozen=True)
class Case:
    name: str
    library: str  # "timm" | "torchvision" | "transformers"
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[], CaseInputs]
    dynamic_shapes: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.library}/{self.name}"


def seeded(builder: Callable[[], torch.nn.Module]) -> Callable[[], torch.nn.Module]:
    """`builder` run under a fixed seed, the result in eval() mode."""

    def build() -> torch.nn.Module:
        torch.manual_seed(SEED)
        return builder().eval()

    return build


def generator(offset: int) -> torch.Generator:
    return torch.Generator().manual_seed(SEED + 1 + offset)


def images(batch: int, size: tuple[int, int], offset: int, channels: int = 3) -> torch.Tensor:
    return torch.randn(batch, channels, *size, generator=generator(offset))


def image_case(size: tuple[int, int], *, dynamic_hw: bool = False,
               other_size: tuple[int, int] | None = None, channels: int = 3) -> Callable[[], CaseInputs]:
    """Example batch 2; checks: other values, batch 3, batch 1, and with dynamic H/W an
    image of `other_size` (default: 1.5 times the example, rounded to 32)."""

    def make() -> CaseInputs:
        def x(b, s, k):
            return Inputs((images(b, s, k, channels),))

        checks = [("other values", x(2, size, 1)), ("batch 3", x(3, size, 2)), ("batch 1", x(1, size, 3))]
        if dynamic_hw:
            other = other_size or tuple(max(32, (int(d * 1.5) // 32) * 32) for d in size)
            checks.append((f"size {other[0]}x{other[1]}", x(2, other, 4)))
        return CaseInputs(x(2, size, 0), checks)

    return make


def image_dynamic(dynamic_hw: bool, name: str = "x") -> dict:
    return {name: {0: "batch", 2: "height", 3: "width"} if dynamic_hw else {0: "batch"}}


def token_ids(batch: int, length: int, vocab: int, offset: int, low: int = 3) -> torch.Tensor:
    # Token ids from `low` up: the small ids are the special tokens (pad, bos, eos) in
    # the tiny configs, which some models treat apart.
    return torch.randint(low, vocab, (batch, length), generator=generator(offset))


def text_case(vocab: int, length: int = 8, *, mask: bool = True, other_length: int | None = None,
              extra: Callable[[torch.Tensor], dict] | None = None) -> Callable[[], CaseInputs]:
    """Example: batch 2, `length` tokens. Checks: other values; batch 3; a batch whose
    second row is padded (attention_mask 0 on its last 3 tokens); another length. `extra`
    adds keyword tensors made from the input ids (e.g. token_type_ids)."""
    other_length = other_length or length + 5

    def one(batch: int, n: int, offset: int, padded: bool = False) -> Inputs:
        ids = token_ids(batch, n, vocab, offset)
        kwargs: dict = {"input_ids": ids}
        if mask:
            attention = torch.ones(batch, n, dtype=torch.long)
            if padded:
                attention[1, -3:] = 0
            kwargs["attention_mask"] = attention
        if extra is not None:
            kwargs.update(extra(ids))
        return Inputs((), kwargs)

    def make() -> CaseInputs:
        checks = [("other values", one(2, length, 1)), ("batch 3", one(3, length, 2))]
        if mask:
            checks.append(("padded row", one(2, length, 3, padded=True)))
        checks.append((f"length {other_length}", one(2, other_length, 4)))
        return CaseInputs(one(2, length, 0), checks)

    return make


def text_dynamic(mask: bool = True, extra_names: tuple[str, ...] = ()) -> dict:
    names = ("input_ids",) + (("attention_mask",) if mask else ()) + extra_names
    return {n: {0: "batch", 1: "sequence"} for n in names}
