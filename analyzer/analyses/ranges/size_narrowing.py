"""Narrowing by a size test: inside `if a.shape[:2] == b.shape[:2]:` the first size of
`a` is the first size of `b`, so a tensor sized by data (a boolean mask's rows) has there
the shape kind of the other side:

    latents = latents[latents_mask]                     # rows: data
    latent_embeds = self.embed(latents)
    if latent_embeds.shape[:2] == inputs_embeds.shape[:2]:
        inputs_embeds = torch.where(token_mask, latent_embeds, inputs_embeds)   # batch: a shape

The test itself stays a finding (it is decided by data); what the branch computes from
the sizes it has established is not data-sized beyond it. A data shape means data in the
first size only (`shapes.size_level`), and the tests compare it: `a.shape == b.shape`,
`a.shape[:k] == b.shape[:k]` (k >= 1), `a.shape[0] == b.shape[0]`, `a.size(0) == b.size(0)`,
either way round, with `a` and `b` names. Only the body of such an `if` is narrowed, only
for a name the body does not rebind, to the shape kind the other side had at the test."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.levels import Level
from analyzer.frontend import ir
from analyzer.frontend.verify import assigned_names


class SizeNarrowing:
    """The names narrowed by size tests in one function body."""

    def __init__(self):
        self._tests: dict[int, tuple | None] = {}
        self._levels: dict[int, dict[str, Level]] = {}  # per `if`: the other side's shape kind at the test

    def narrow(self, node, state: dict) -> None:
        for region in node.regions:
            if not isinstance(region, ir.If) or (test := self._test(region)) is None or id(region) not in self._levels:
                continue
            if id(node.stmt) not in test[2]:
                continue
            for name, level in self._levels[id(region)].items():
                value = state.get(name)
                if level is not None and name not in test[3] and value is not None and value.type == "tensor" \
                        and value.shape_level > level:
                    state[name] = replace(value, shape_level=level)
        if node.kind == "if" and (test := self._test(node.stmt)) is not None:
            a, b = test[0], test[1]
            self._levels[id(node.stmt)] = {a: _shape_level(state.get(b)), b: _shape_level(state.get(a))}

    def _test(self, s) -> tuple | None:
        if not isinstance(s, ir.If):
            return None
        if id(s) not in self._tests:
            self._tests[id(s)] = _size_test(s)
        return self._tests[id(s)]


def _shape_level(value) -> Level | None:
    return value.shape_level if value is not None and value.type == "tensor" else None


def _size_test(s: ir.If) -> tuple | None:
    """(a, b, ids of the body's statements, names the body rebinds) of `if <size of a> == <size of b>:`."""
    t = s.test
    if not (isinstance(t, ir.Compare) and t.ops == ["=="]):
        return None
    a, b = _leading_size_of(t.left), _leading_size_of(t.comparators[0])
    if a is None or b is None or a[1] != b[1] or a[0] == b[0]:
        return None
    return a[0], b[0], {id(x) for x in ir.walk_statements(s.body)}, assigned_names(s.body)


def _leading_size_of(e) -> tuple[str, str] | None:
    """(name, form) when ``e`` holds the first size of a named tensor: `x.shape`, `x.size()`,
    `x.shape[:k]` with k >= 1 (form "shape[:k]"), `x.shape[0]`, `x.size(0)` (form "0")."""
    if isinstance(e, ir.Attribute) and e.attr == "shape" and isinstance(e.value, ir.Name):
        return e.value.id, "shape"
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute) and e.func.attr == "size" \
            and isinstance(e.func.value, ir.Name):
        if not e.args:
            return e.func.value.id, "shape"
        if len(e.args) == 1 and e.args[0].keyword is None and _is_int(e.args[0].value, 0):
            return e.func.value.id, "0"
        return None
    if isinstance(e, ir.Subscript) and isinstance(e.value, ir.Attribute) and e.value.attr == "shape" \
            and isinstance(e.value.value, ir.Name):
        index = e.index
        if _is_int(index, 0):
            return e.value.value.id, "0"
        if isinstance(index, ir.Slice) and index.lower is None and index.step is None and isinstance(index.upper, ir.Const) \
                and isinstance(index.upper.value, int) and not isinstance(index.upper.value, bool) and index.upper.value >= 1:
            return e.value.value.id, f"shape[:{index.upper.value}]"
    return None


def _is_int(e, n: int) -> bool:
    return isinstance(e, ir.Const) and type(e.value) is int and e.value == n
