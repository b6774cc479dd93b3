"""Input search: mutate inputs until the untrace ONNX takes the sides no input took yet.

Only the untrace ONNX runs during the search (it is cheap, and its probe outputs say which
side every ``If`` took and how many times every ``Loop`` ran); eager PyTorch is run only
on a candidate that covers something new, to make sure the model accepts it.

The candidate's *score* is the fraction of the still-missing sides (see
``lowering.verification.coverage``) it takes, with a small credit (0.1) for reaching a site
whose side it does not take yet, so that a nested ``if`` pulls towards its enclosing
one. The search:

1. sweeps each floating input through a ladder of scales (both signs, 1e-3 .. 1e3), the
   cheapest way across a magnitude threshold such as ``if x.sum() > 100``, then puts a
   NaN, +inf and -inf into it (sanitising branches: ``if torch.isnan(x).any()``);
2. then hill-climbs: mutate the current candidate (scale, sign flip of all or some
   elements or rows, shift, noise, single elements, constants, a random restart), keep
   it when the score does not drop, restart from a fresh point after a run of failures.

Integer inputs stay in [min(0, least seen), greatest seen] -- up to the smallest
``nn.Embedding`` size when there is one -- and keep their dtype; shapes never change.
The budget counts candidate evaluations; ``time_limit`` (seconds) stops it too.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from lowering.verification import inputs as inp
from lowering.verification.coverage import CoverageCounter, Observation, Probe, Site, hits, observe

SCALES = (10.0, -1.0, 100.0, 0.1, -10.0, 1000.0, 0.01, -100.0, 0.0, 3.0, -0.1, -1000.0, 0.001, 0.3, -3.0, -0.01)
SPECIAL = (math.nan, math.inf, -math.inf)
STALL = 12


def _with_element(t: torch.Tensor, value: float, flat_index: int) -> torch.Tensor:
    out = t.contiguous().clone()
    out.view(-1)[flat_index] = value
    return out


@dataclass
class SearchResult:
    found: list[tuple] = field(default_factory=list)  # inputs that covered something new
    evaluations: int = 0
    seconds: float = 0.0
    gained: list[tuple[Site, str]] = field(default_factory=list)
    missing: list[tuple[Site, str]] = field(default_factory=list)
    budget: int = 0
    note: str | None = None

    def to_dict(self) -> dict:
        return {
            "budget": self.budget,
            "evaluations": self.evaluations,
            "seconds": round(self.seconds, 3),
            "found": len(self.found),
            "gained": [f"{s[0]}:{s[1]} {side}" for s, side in self.gained],
            "still_missing": [f"{s[0]}:{s[1]} {side}" for s, side in self.missing],
            "note": self.note,
        }


@dataclass
class _Bounds:
    lo: int
    hi: int


class _Search:
    def __init__(self, run, probes, counter, starts, budget, time_limit, accept, embedding, seed):
        self.run = run
        self.probes = probes
        self.counter = counter
        self.starts = starts
        self.budget = budget
        self.deadline = time.perf_counter() + time_limit if time_limit else math.inf
        self.accept = accept
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.result = SearchResult(budget=budget)
        self.targets = counter.missing_sides()
        self.bounds = self._bounds(embedding)

    # ------------------------------------------------------------------ budget and scoring

    def exhausted(self) -> bool:
        return not self.targets or self.result.evaluations >= self.budget or time.perf_counter() >= self.deadline

    def evaluate(self, args) -> dict[Site, Observation] | None:
        self.result.evaluations += 1
        try:
            real, values = self.run(args)
        except Exception:
            return None
        for r in real:
            a = np.asarray(r)
            if a.dtype.kind in "fc" and not np.isfinite(a).all():
                return None
        return observe(self.probes, values)

    def score(self, obs: dict[Site, Observation] | None) -> float:
        if obs is None or not self.targets:
            return -1.0
        total = 0.0
        for site, side in self.targets:
            o = obs.get(site)
            if o is None:
                continue
            if hits(side, o, self.counter.sites[site]):
                total += 1.0
            elif o.reached:
                total += 0.1
        return total / len(self.targets)

    def consider(self, args, obs) -> bool:
        """Keep ``args`` when it covers a missing side and eager PyTorch accepts it."""
        if obs is None:
            return False
        gains = self.counter.gains(obs)
        if not gains or not self.accept(args):
            return False
        self.counter.add(obs)
        self.result.found.append(args)
        self.result.gained.extend(gains)
        self.targets = self.counter.missing_sides()
        return True

    # ------------------------------------------------------------------ the search

    def go(self) -> SearchResult:
        start = time.perf_counter()
        self.sweep()
        self.climb()
        self.result.seconds = time.perf_counter() - start
        self.result.missing = list(self.targets)
        return self.result

    def sweep(self) -> None:
        for base in self.starts:
            leaves = inp.tensor_leaves(base)
            floats = [j for j, t in enumerate(leaves) if t.dtype.is_floating_point and t.numel()]
            groups = ([floats] if len(floats) > 1 else []) + [[j] for j in floats]
            for scale in SCALES:
                for group in groups:
                    if self.exhausted():
                        return
                    new = [t * scale if j in group else t for j, t in enumerate(leaves)]
                    cand = inp.replace_leaves(base, new)
                    self.consider(cand, self.evaluate(cand))
            for special in SPECIAL:
                for j in floats:
                    if self.exhausted():
                        return
                    new = list(leaves)
                    new[j] = _with_element(leaves[j], special, int(self.rng.integers(leaves[j].numel())))
                    cand = inp.replace_leaves(base, new)
                    self.consider(cand, self.evaluate(cand))

    def climb(self) -> None:
        if self.exhausted():
            return
        current = self.starts[self.rng.integers(len(self.starts))]
        current_obs = self.evaluate(current)
        best = self.score(current_obs)
        stall = 0
        while not self.exhausted():
            cand = self.mutate(current)
            obs = self.evaluate(cand)
            if self.consider(cand, obs):
                current, current_obs, best, stall = cand, obs, self.score(obs), 0
                continue
            s = self.score(obs)
            if s > best or (s == best and s >= 0 and self.rng.random() < 0.3):
                stall = 0 if s > best else stall + 1
                current, current_obs, best = cand, obs, s
            else:
                stall += 1
            if stall >= STALL:
                base = self.starts[self.rng.integers(len(self.starts))]
                current = self.restart(base) if self.rng.random() < 0.7 else base
                current_obs = self.evaluate(current)
                self.consider(current, current_obs)
                best, stall = self.score(current_obs), 0

    # ------------------------------------------------------------------ mutations

    def _bounds(self, embedding: int | None) -> list[_Bounds | None]:
        per_leaf: list[_Bounds | None] = []
        leaves_per_start = [inp.tensor_leaves(s) for s in self.starts]
        for j, t in enumerate(leaves_per_start[0]):
            if t.dtype.is_floating_point or t.dtype == torch.bool:
                per_leaf.append(None)
                continue
            seen = [ls[j] for ls in leaves_per_start if j < len(ls) and ls[j].numel()]
            lo = min([0] + [int(s.min()) for s in seen])
            hi = max([0] + [int(s.max()) for s in seen])
            if embedding is not None and hi < embedding - 1:
                hi = embedding - 1
            per_leaf.append(_Bounds(lo, max(hi, lo)))
        return per_leaf

    def restart(self, base):
        leaves = inp.tensor_leaves(base)
        return inp.replace_leaves(base, [self._fresh(j, t) for j, t in enumerate(leaves)])

    def _fresh(self, j: int, t: torch.Tensor) -> torch.Tensor:
        if t.dtype == torch.bool:
            return torch.rand(t.shape, generator=self.gen) < self.rng.random()
        if not t.dtype.is_floating_point:
            b = self.bounds[j]
            return torch.randint(b.lo, b.hi + 1, t.shape, generator=self.gen).to(t.dtype)
        scale = 10.0 ** self.rng.uniform(-2, 2)
        shift = 0.0 if self.rng.random() < 0.6 else float(self.rng.normal()) * scale
        return (torch.randn(t.shape, generator=self.gen) * scale + shift).to(t.dtype)

    def mutate(self, base):
        leaves = list(inp.tensor_leaves(base))
        live = [j for j, t in enumerate(leaves) if t.numel()]
        if not live:
            return base
        if self.rng.random() < 0.1:
            return self.restart(base)
        j = live[self.rng.integers(len(live))]
        t = leaves[j]
        if t.dtype == torch.bool:
            leaves[j] = self._mutate_bool(t)
        elif t.dtype.is_floating_point:
            leaves[j] = self._mutate_float(t).to(t.dtype)
        else:
            leaves[j] = self._mutate_int(t, self.bounds[j])
        return inp.replace_leaves(base, leaves)

    def _mask(self, t: torch.Tensor, p: float | None = None) -> torch.Tensor:
        p = self.rng.uniform(0.05, 0.5) if p is None else p
        return torch.rand(t.shape, generator=self.gen) < p

    def _mutate_float(self, t: torch.Tensor) -> torch.Tensor:
        op = self.rng.integers(10)
        spread = float(t.float().std()) if t.numel() > 1 else abs(float(t.float().reshape(-1)[0]))
        spread = spread if math.isfinite(spread) and spread > 0 else 1.0
        if op == 0:
            return t * SCALES[self.rng.integers(len(SCALES))]
        if op == 1:
            return torch.where(self._mask(t), -t, t)
        if op == 2:
            return t.abs() * (1.0 if self.rng.random() < 0.5 else -1.0)
        if op == 3:
            return t + float(self.rng.choice([-1, 1])) * spread * 10.0 ** self.rng.uniform(-1, 1.5)
        if op == 4:
            return t + torch.randn(t.shape, generator=self.gen) * spread * 10.0 ** self.rng.uniform(-2, 0.5)
        if op == 5 and t.dim() >= 1 and t.shape[0] > 1:
            rows = torch.zeros(t.shape[0], dtype=torch.bool)
            rows[self.rng.integers(t.shape[0])] = True
            rows = rows.reshape(-1, *([1] * (t.dim() - 1)))
            return torch.where(rows, t * SCALES[self.rng.integers(len(SCALES))], t)
        if op == 6:
            return torch.full_like(t, float(self.rng.choice([-1, 0, 1])) * 10.0 ** self.rng.uniform(-2, 2))
        if op == 7:
            value = float(self.rng.choice([-1, 1])) * spread * 10.0 ** self.rng.uniform(-1, 3)
            return torch.where(self._mask(t, 1.5 / max(t.numel(), 1)), torch.full_like(t, value), t)
        if op == 8:
            return _with_element(t, SPECIAL[self.rng.integers(len(SPECIAL))], int(self.rng.integers(t.numel())))
        return t * float(10.0 ** self.rng.uniform(-0.5, 0.5))

    def _mutate_int(self, t: torch.Tensor, b: _Bounds) -> torch.Tensor:
        op = self.rng.integers(4)
        if op == 0:
            values = torch.randint(b.lo, b.hi + 1, t.shape, generator=self.gen).to(t.dtype)
            return torch.where(self._mask(t), values, t)
        if op == 1:
            return torch.where(self._mask(t), torch.full_like(t, b.lo if self.rng.random() < 0.5 else b.hi), t)
        if op == 2:
            return torch.full_like(t, int(self.rng.integers(b.lo, b.hi + 1)))
        return torch.randint(b.lo, b.hi + 1, t.shape, generator=self.gen).to(t.dtype)

    def _mutate_bool(self, t: torch.Tensor) -> torch.Tensor:
        op = self.rng.integers(3)
        if op == 0:
            return torch.where(self._mask(t), ~t, t)
        if op == 1:
            return torch.full_like(t, bool(self.rng.random() < 0.5))
        return torch.rand(t.shape, generator=self.gen) < self.rng.random()


def search(run: Callable, probes: list[Probe], counter: CoverageCounter, starts: list[tuple], *, budget: int,
           time_limit: float | None = None, accept: Callable[[tuple], bool] = lambda args: True,
           embedding: int | None = None, seed: int = 0) -> SearchResult:
    """Search from ``starts`` for inputs that cover ``counter``'s missing sides.

    ``run(args) -> (real outputs, probe values)`` evaluates one candidate (the untrace
    ONNX); ``counter`` is updated in place with every input kept. ``accept`` vets a
    candidate before it is kept (verify runs eager PyTorch on it)."""
    if not starts or budget <= 0:
        return SearchResult(budget=budget, missing=counter.missing_sides())
    return _Search(run, probes, counter, starts, budget, time_limit, accept, embedding, seed).go()
