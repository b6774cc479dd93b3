"""Narrowing by a type test: inside `if isinstance(x, dict):` the value of `x` is a dict,
whatever `x` was taken for before (a parameter annotated `torch.Tensor | None` that a
caller may also hand a prebuilt per-layer dict of masks):

    if isinstance(attention_mask, dict):
        causal_mask = next(iter(attention_mask.values()))   # a dict's values: no tensor iterated
    else:
        causal_mask = build_mask(attention_mask)

Only the body of such an `if` is narrowed, only for a name the body does not rebind, and
only from a tensor to the Python container the test names (its items unknown)."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.kinds.values import UNKNOWN, Value
from analyzer.analyses.ranges.size_narrowing import SizeNarrowing
from analyzer.frontend import expr_text, ir
from analyzer.frontend.verify import assigned_names

# The type names a test narrows to, and the `ref` of the container they make.
CONTAINER_TYPES = {
    "dict": "dict", "Mapping": "dict", "collections.abc.Mapping": "dict", "typing.Mapping": "dict",
    "MutableMapping": "dict", "OrderedDict": "dict",
    "list": "list", "tuple": "tuple", "(list, tuple)": "list", "(tuple, list)": "list",
    "Sequence": "list", "collections.abc.Sequence": "list", "typing.Sequence": "list",
    "set": "set", "frozenset": "set",
}


class TypeNarrowing:
    """The narrowed names of the statements of one function body."""

    def __init__(self):
        self._tests: dict[int, tuple[str, str, set[int]] | None] = {}
        self._sizes = SizeNarrowing()  # and by a size test (`size_narrowing`)

    def narrow(self, node, state: dict) -> None:
        """Rebind in ``state`` every name that a type test of an enclosing `if` whose body
        holds ``node``'s statement narrows from a tensor to a container, and every tensor a
        size test narrows to the shape kind of the other side."""
        self._sizes.narrow(node, state)
        for region in node.regions:
            if not isinstance(region, ir.If):
                continue
            test = self._narrowing(region)
            if test is None:
                continue
            name, ref, body = test
            value = state.get(name)
            if value is not None and value.type == "tensor" and id(node.stmt) in body:
                state[name] = replace(Value.container(UNKNOWN, ref=ref), ctl=value.ctl)

    def _narrowing(self, s: ir.If) -> tuple[str, str, set[int]] | None:
        if id(s) not in self._tests:
            self._tests[id(s)] = _container_test(s)
        return self._tests[id(s)]


def _container_test(s: ir.If) -> tuple[str, str, set[int]] | None:
    """(name, container ref, ids of the body's statements) of `if isinstance(name, T):`
    (or `if isinstance(name, T) and ...:`)."""
    tests = s.test.values if isinstance(s.test, ir.BoolOp) and s.test.op == "and" else [s.test]
    found = next((c for c in map(container_test, tests) if c is not None), None)
    if found is None or found[0] in assigned_names(s.body):
        return None
    return found[0], found[1], {id(x) for x in ir.walk_statements(s.body)}


def container_test(t) -> tuple[str, str] | None:
    """(name, container ref) of the expression `isinstance(name, T)`, T a container type."""
    if not (isinstance(t, ir.Call) and expr_text(t.func) == "isinstance" and len(t.args) == 2
            and all(a.keyword is None and not a.star for a in t.args) and isinstance(t.args[0].value, ir.Name)):
        return None
    ref = CONTAINER_TYPES.get(expr_text(t.args[1].value))
    return (t.args[0].value.id, ref) if ref is not None else None


def narrowed(state: dict, test) -> dict:
    """``state`` as the operands after ``test`` in `test and ...` see it: a tensor that
    `isinstance(name, T)` tests is the container T there."""
    found = container_test(test)
    value = state.get(found[0]) if found is not None else None
    if value is None or value.type != "tensor":
        return state
    inner = dict(state)
    inner[found[0]] = replace(Value.container(UNKNOWN, ref=found[1]), ctl=value.ctl)
    return inner
