"""Output comparison: one system's outputs against eager PyTorch's, for one input.

Nested tuple/list/dict outputs are flattened in order (dicts in insertion order); Python
numbers become 0-d tensors and ``None`` leaves are dropped, as ``lowering.exporter`` does.

Metrics, over all output leaves together (``a`` = system, ``b`` = eager):

- ``max_abs`` = max |a - b|
- ``max_rel`` = max |a - b| / |b| over the elements where b != 0
- ``cosine``  = <a, b> / (|a| |b|) of all leaves concatenated (1.0 when both are all zero)
- ``shapes_agree``: same number of leaves, same shape leaf by leaf
- ``match`` = shapes agree and every element satisfies |a - b| <= atol + rtol |b|
  (NaN matches NaN in the same place; +-inf must be equal)

Non-finite metrics are reported as ``None`` (JSON has no NaN).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass(frozen=True)
class Comparison:
    match: bool
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None
    shapes_agree: bool = True
    error: str | None = None
    outputs: tuple[tuple[int, ...], ...] = field(default=(), compare=False)

    def to_dict(self) -> dict:
        return {
            "match": self.match,
            "max_abs": self.max_abs,
            "max_rel": self.max_rel,
            "cosine": self.cosine,
            "shapes_agree": self.shapes_agree,
            "error": self.error,
        }


def failed(error: str) -> Comparison:
    """A system that produced no output for this input."""
    return Comparison(match=False, shapes_agree=False, error=error)


def flatten(value) -> list[np.ndarray]:
    """Tensors of a (nested) output, in order, as numpy arrays."""
    out: list[np.ndarray] = []

    def visit(v):
        if v is None:
            return
        if isinstance(v, torch.Tensor):
            out.append(v.detach().cpu().resolve_conj().resolve_neg().numpy() if v.dtype != torch.bfloat16
                       else v.detach().float().cpu().numpy())
        elif isinstance(v, np.ndarray):
            out.append(v)
        elif isinstance(v, (bool, int, float, np.generic)):
            out.append(np.asarray(v))
        elif isinstance(v, dict):
            for item in v.values():
                visit(item)
        elif isinstance(v, (tuple, list)):
            for item in v:
                visit(item)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):  # the order the export gives its outputs (lowering.outputs)
                visit(getattr(v, f.name))
        else:
            raise TypeError(f"output leaf of type {type(v).__name__} is not a tensor")

    visit(value)
    return out


def compare(got: list[np.ndarray], want: list[np.ndarray], *, rtol: float, atol: float) -> Comparison:
    shapes = tuple(tuple(np.shape(g)) for g in got)
    if len(got) != len(want):
        return Comparison(False, shapes_agree=False, outputs=shapes,
                          error=f"{len(got)} outputs, eager has {len(want)}")
    bad_shape = [i for i, (g, w) in enumerate(zip(got, want)) if np.shape(g) != np.shape(w)]
    if bad_shape:
        i = bad_shape[0]
        return Comparison(False, shapes_agree=False, outputs=shapes,
                          error=f"output {i} has shape {list(np.shape(got[i]))}, eager {list(np.shape(want[i]))}")
    max_abs = 0.0
    max_rel = 0.0
    match = True
    dot = norm_g = norm_w = 0.0
    for g, w in zip(got, want):
        g64 = np.asarray(g).astype(np.float64, copy=False).ravel()
        w64 = np.asarray(w).astype(np.float64, copy=False).ravel()
        if g64.size == 0:
            continue
        both_nan = np.isnan(g64) & np.isnan(w64)
        same_inf = np.isinf(w64) & (g64 == w64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(g64 - w64)
        diff = np.where(both_nan | same_inf, 0.0, diff)
        diff = np.where(np.isnan(diff), np.inf, diff)
        ok = diff <= atol + rtol * np.abs(np.where(np.isfinite(w64), w64, 0.0))
        match = match and bool(ok.all())
        max_abs = max(max_abs, float(diff.max()))
        nonzero = w64 != 0
        if nonzero.any():
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                rel = diff[nonzero] / np.abs(w64[nonzero])
            rel = np.where(np.isnan(rel), 0.0, rel)
            max_rel = max(max_rel, float(rel.max()))
        finite = np.isfinite(g64) & np.isfinite(w64)
        with np.errstate(over="ignore", invalid="ignore"):
            dot += float(np.dot(g64[finite], w64[finite]))
            norm_g += float(np.dot(g64[finite], g64[finite]))
            norm_w += float(np.dot(w64[finite], w64[finite]))
    if norm_g == 0.0 and norm_w == 0.0:
        cosine = 1.0
    elif norm_g == 0.0 or norm_w == 0.0:
        cosine = 0.0
    else:
        cosine = dot / (math.sqrt(norm_g) * math.sqrt(norm_w))
    return Comparison(match, _finite(max_abs), _finite(max_rel), _finite(cosine), True, None, shapes)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
