"""Merging the two sides of a data-dependent If: equal known values stay known, the rest
become If outputs of one structure and dtype, with placeholders for slots a side never
reaches."""

from __future__ import annotations

import torch

from analyzer.frontend.structure import RET, RETVAL
from lowering.graph import Value
from lowering.interp.values import (MISSING, EarlierIterations, Maybe, Stacked, _align_maybe, _common_shape,
                                    _contains_graph, _describe, _flatten, _Missing, _same, _spec_without_maybe,
                                    _starts_with, _zero_tensor, keep_known_leaves)


class BranchMerging:
    def _merge_branches(self, s, names, envs, graphs, frame, in_place=frozenset()):
        """Decide each result: equal known values stay known; the rest become If outputs."""
        outputs = []
        for name in names:
            a = envs[0].get(name, MISSING)
            b = envs[1].get(name, MISSING)
            if a is MISSING or b is MISSING:
                present = a if b is MISSING else b
                if name.startswith("$") or name == RETVAL:
                    pass
                elif a is MISSING and b is MISSING:
                    continue
                else:
                    side = "else" if a is not MISSING else "then"
                    raise self.error(
                        f"`{name}` is assigned on one side of this data-dependent `if` only, and used after it",
                        f"assign `{name}` on the {side} side too, before the `if`, or use torch.where",
                        construct="if")
            if not _contains_graph(a) and not _contains_graph(b) and _same(a, b):
                self._bind_result(frame, name, a, in_place)
                continue
            before = frame.env.get(name, MISSING)
            prefix = None
            if type(a) is list and type(b) is list and type(before) is list and _starts_with(a, before) and _starts_with(b, before):
                # Only what each branch appended differs; a side that appended nothing
                # yields placeholders marked absent.
                prefix, a, b = list(before), a[len(before):], b[len(before):]
                if len(a) != len(b) and min(len(a), len(b)) == 0:
                    appended = a or b
                    present = [x if isinstance(x, Maybe) else Maybe(x, True) for x in appended]  # nested ifs: one flag
                    absent = [Maybe(MISSING, False) for _ in appended]
                    a, b = (present, absent) if a else (absent, present)
            if name == RETVAL:
                self._check_returned_none(envs, a, b)
            flat_a, spec_a = _flatten(a)
            flat_b, spec_b = _flatten(b)
            if a is MISSING or a is None and name.startswith("$"):
                flat_a, spec_a = [MISSING] * len(flat_b), spec_b
            if b is MISSING or b is None and name.startswith("$"):
                flat_b, spec_b = [MISSING] * len(flat_a), spec_a
            if _spec_without_maybe(spec_a) == _spec_without_maybe(spec_b) and spec_a != spec_b:
                flat_a, spec_a, flat_b, spec_b = _align_maybe(a, b)
            if spec_a != spec_b:
                raise self.error(f"`{name}` has a different structure on the two sides of a data-dependent `if`"
                                 f" ({_describe(a)} vs {_describe(b)})", construct="if",
                                 hint="give it the same structure (type, length, None-ness) on both sides, e.g. a zero tensor for None")
            spec_a, flat_a, flat_b = keep_known_leaves(spec_a, flat_a, flat_b)
            for va, vb in zip(flat_a, flat_b):
                if isinstance(va, (Stacked, EarlierIterations)) or isinstance(vb, (Stacked, EarlierIterations)):
                    if va is not vb:
                        raise self.error(
                            f"`{name}` is appended to by a data-dependent loop inside this data-dependent `if`: "
                            "untrace does not merge the items a loop appended on one side",
                            f"stack the loop's items into a tensor inside the `if` (`t = torch.stack({name})`), "
                            "or move the loop out of the `if`", construct="if")
            for graph, flat in ((graphs[0], flat_a), (graphs[1], flat_b)):
                self.check_region_result(name, flat, graph)
            per_branch = []
            for graph, flat, other in ((graphs[0], flat_a, flat_b), (graphs[1], flat_b, flat_a)):
                saved, self.g = self.g, graph
                try:
                    per_branch.append([self._branch_value(self._placeholder(o) if v is MISSING else v, o)
                                       for v, o in zip(flat, other)])
                finally:
                    self.g = saved
            for graph, values, others in ((graphs[0], *per_branch), (graphs[1], per_branch[1], per_branch[0])):
                for bv, ov in zip(values, others):
                    # Declared shape: the dims both branches agree on (the If output's shape).
                    graph.add_output(bv, shape=_common_shape(bv, ov))
            # The objects eager may hand on; a `$retval` that is None or unbound on a side has not been set there.
            sides = tuple(MISSING if v is None and name.startswith("$") else v for v in (a, b))
            outputs.append((name, (spec_a, flat_a, flat_b), prefix, sides))
        return outputs

    def _check_returned_none(self, envs, a, b):
        """`$retval` is None on a side that has not returned yet (then the other side's value
        stands for it) or on one that returned None. After a data-dependent `return`, `$ret`
        is a graph bool and a None `$retval` there is a returned None, which no graph value
        can stand for."""
        for value, other, env in ((a, b, envs[0]), (b, a, envs[1])):
            if value is None and _contains_graph(other) and env.get(RET, False) is not False:
                raise self.error(
                    "the function returns None or a value depending on a data-dependent `if` (an early `return None` "
                    "under it): ONNX has no value that is None for some inputs only",
                    "return a tensor on every path (an empty or all-False one where None is returned), or decide "
                    "the early return by a Python value", construct="return")

    def _branch_value(self, v, other):
        """A branch output, cast to the dtype both branches agree on."""
        gv = self.as_graph(v)
        if not isinstance(other, Value) and not isinstance(other, _Missing) and isinstance(other, (bool, int, float)):
            target = self.g.result_type(gv, other) if isinstance(v, Value) else self.as_graph(other).dtype
            if isinstance(v, Value):
                target = v.dtype
            else:
                target = torch.result_type(torch.tensor(v), torch.tensor(other))
            return self.g.cast(gv, target)
        if isinstance(other, Value) and not isinstance(v, Value):
            return self.g.cast(gv, other.dtype)
        if isinstance(other, Value) and other.dtype != gv.dtype:
            raise self.error(f"a value is {gv.dtype} on one side of a data-dependent `if` and {other.dtype} on the other",
                             "cast both sides to one dtype", construct="if")
        if isinstance(other, Value) and None not in (gv.rank, other.rank) and gv.rank != other.rank:
            # Every op after the `if` is lowered for one rank; the graph could not follow the other side.
            raise self.error(f"a tensor has rank {gv.rank} on one side of a data-dependent `if` and rank {other.rank} "
                             "on the other: the code after it is lowered for one rank",
                             "give the tensor one rank on both sides (reshape it on the side that differs)",
                             construct="if")
        return gv

    def _placeholder(self, other):
        """A value for a slot the branch never reaches (a `$retval` not yet set)."""
        ref = self.as_graph(other) if not isinstance(other, _Missing) else None
        if ref is None:
            return self.g.const(False)
        if ref.static_shape is not None and ref.static_shape:
            return self.g.op("ConstantOfShape", self.g.const(list(ref.static_shape), dtype=torch.int64),
                             value=_zero_tensor(ref.dtype), out_dtype=ref.dtype, out_shape=ref.static_shape)
        rank = ref.rank or 0
        return self.g.op("ConstantOfShape", self.g.const([0] * rank, dtype=torch.int64) if rank else self.g.shape_tensor([]),
                         value=_zero_tensor(ref.dtype), out_dtype=ref.dtype, out_shape=(0,) * rank if rank else ())
