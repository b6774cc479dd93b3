"""Which object a value is, when the data chose it.

A data-dependent `if`, ternary or loop hands on a new value for what each side (or
iteration) held: an If output for a tensor, a rebuilt tuple, list, namedtuple or
dataclass instance for a structure of them. Eager PyTorch hands on one of the sides'
objects itself, so `y is x` after `y = x; if c: y = x + 1` is True for some inputs and
False for others, and a dataclass instance that was chosen may be the very object another
name still holds. untrace keeps, for each value a merge made, the objects it stands for
(`note_choice`), and

- `a is b` is answered only when no object could be both: `y is None` after the `if` is
  False on every path, `y is x` there is refused (`check_identity`);
- a dataclass instance a merge rebuilt, and each instance it stands for, is read, never
  changed: setting an attribute of one would change, in eager, the object the data
  chose, which other names may hold (`check_record_change`).
"""

from __future__ import annotations

from lowering.interp.values import MISSING, record_state


def note_choice(interp, merged, sides, region: str) -> None:
    """`merged` stands for whichever of `sides` the data picks; so do its items, for the
    items of the sides in the same places."""
    sides = [s for s in sides if s is not MISSING]
    if any(merged is s for s in sides):
        return  # a known value both sides held: no choice
    interp.chosen_identities[id(merged)] = (merged, tuple(sides), region)
    for side in sides:
        if record_state(side) is not None:
            interp.chosen_identities.setdefault(id(side), (side, (), region))  # read only from now on
    for key, item in _items(merged):
        parts = [dict(_items(s)).get(key, MISSING) for s in sides]
        note_choice(interp, item, parts, region)


def _items(v) -> list:
    if isinstance(v, (tuple, list)):
        return list(enumerate(v))
    if isinstance(v, dict):
        return list(v.items())
    state = record_state(v)
    return list(state.items()) if state is not None else []


def possible_objects(interp, v) -> dict[int, str | None]:
    """The objects `v` may be in eager, with the region that chose among them."""
    out: dict[int, str | None] = {id(v): None}
    entry = interp.chosen_identities.get(id(v))
    if entry is not None and entry[0] is v:
        for side in entry[1]:
            for key in possible_objects(interp, side):
                out.setdefault(key, entry[2])
    return out


def check_identity(interp, left, right) -> bool:
    """`left is right`, refused when the data decides it."""
    if left is right:
        return True
    mine, theirs = possible_objects(interp, left), possible_objects(interp, right)
    common = mine.keys() & theirs.keys()
    if common:
        key = next(iter(common))
        region = mine.get(key) or theirs.get(key)
        raise interp.error(f"whether one value `is` the other depends on the data: {region} chose one of them, "
                           "and eager hands on the object of the side it took",
                           "compare values (`torch.equal`, `==`), or decide with a Python flag set on each side",
                           construct="compare")
    return False


def is_chosen_record(interp, obj) -> bool:
    entry = interp.chosen_identities.get(id(obj))
    return entry is not None and entry[0] is obj and record_state(obj) is not None


def check_record_change(interp, obj, describe: str) -> None:
    if is_chosen_record(interp, obj):
        region = interp.chosen_identities[id(obj)][2]
        raise interp.error(f"`{describe}` changes a {type(obj).__name__} that {region} chose: eager changes the "
                           "object of the side it took, which other names may hold too",
                           f"build a new one (`dataclasses.replace(obj, {describe.rpartition('.')[2]}=...)`), or set "
                           "the attribute on each side of the `if` before it ends", construct="assign")
