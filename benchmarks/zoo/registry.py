"""All the zoo's cases, by library. Importing this imports none of the libraries: each
case builds its model only when asked."""

from __future__ import annotations

from benchmarks.zoo import timm_models, torchvision_models, transformers_models
from benchmarks.zoo.cases import Case

LIBRARIES = ("timm", "torchvision", "transformers")

ALL_CASES: list[Case] = [*timm_models.CASES, *torchvision_models.CASES, *transformers_models.CASES]


def find(key: str) -> Case:
    """A case by `library/name`, or by bare name when only one library has it."""
    matches = [c for c in ALL_CASES if key in (c.key, c.name)]
    if len(matches) != 1:
        known = ", ".join(c.key for c in ALL_CASES)
        raise KeyError(f"{key!r} names {len(matches)} cases (known: {known})")
    return matches[0]


def select(names=None, library: str | None = None) -> list[Case]:
    cases = [find(n) for n in names] if names else list(ALL_CASES)
    return [c for c in cases if library is None or c.library == library]
