"""The three levels a Python value can depend on, ordered static < shape < data."""

from __future__ import annotations

from enum import IntEnum


class Level(IntEnum):
    STATIC = 0  # constants, config, self.training, `is None`, isinstance
    SHAPE = 1  # tensor shapes: .shape, .size(), .dim(), len(t), .numel()
    DATA = 2  # tensor values

    def join(self, other: "Level") -> "Level":
        return self if self >= other else other

    @property
    def label(self) -> str:
        return self.name.lower()
