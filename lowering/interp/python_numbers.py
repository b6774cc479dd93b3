"""Which graph values stand for Python numbers of eager code, through the regions that merge them.

A Python int, float or bool is immutable: it never shares memory with anything, and
`n += 1` on it binds a new number, where `t += 1` on a tensor updates every name bound
to that tensor (`lowering.interp.inplace_updates`). The interpreter holds a number that
eager code computed from tensors (`float(t)`, `len(x)`, `round(...)`) as a 0-d graph
value in `python_numbers`; this module says what is still such a number where values
meet:

- an If output (statement or ternary) is a Python number when every side that reaches
  it is one (a number on one side and a tensor on the other is a tensor for aliasing:
  treating a number as a tensor can only refuse, the converse could be silently wrong);
- a Loop-carried value that is a number before the loop stays one in the body only when
  the body hands a number on. `total = 0.0; for row in x: total += row.sum()` makes it a
  tensor after the first iteration, and eager then updates it *in place* from the second
  iteration on: the body is interpreted again with it as a tensor
  (`NumberBecomesTensor`), and in that interpretation an in-place update of it while
  another name is bound to it is refused, since in the first iteration that name kept
  the old number (`first_iteration_numbers`).
"""

from __future__ import annotations

from lowering.graph import Value
from lowering.interp.values import MISSING


def is_python_number(interp, v) -> bool:
    if isinstance(v, Value):
        return v in interp.python_numbers
    return isinstance(v, (int, float))  # bool too: immutable, never sharing memory


def mark_merged(interp, out: Value, sides) -> Value:
    """`out` merges `sides` (the values each branch or iteration hands on; MISSING for a
    side that never reaches it): a Python number when every side that reaches it is one."""
    reached = [s for s in sides if s is not MISSING]
    if reached and all(is_python_number(interp, s) for s in reached):
        interp.python_number(out)
    return out


class NumberBecomesTensor(Exception):
    """A loop-carried Python number is a tensor after an iteration: emit the loop again
    with it as a tensor from the start."""

    def __init__(self, name: str, value=None):
        super().__init__(name)
        self.name = name
        self.value = value  # the tensor the body hands on: the loop carries its dtype and rank from the start


def refuse_first_iteration_alias(interp, old: Value, updated: str) -> None:
    """`updated` is updated in place; in eager it was still a Python number in the loop's
    first iteration, so a name bound to it then kept the old number, where every later
    iteration shows the update through that name: no one graph body does both."""
    if old not in interp.first_iteration_numbers:
        return
    others = sorted({name for frame in interp.frames for name, bound in frame.env.items()
                     if bound is old and name != updated and not name.startswith("$")})
    if others:
        raise interp.error(
            f"in-place update of `{updated}` inside a graph loop while `{others[0]}` is bound to it: `{updated}` is a "
            "Python number before the loop and a tensor after its first iteration, so eager PyTorch shows the update "
            f"through `{others[0]}` from the second iteration on only",
            f"update out of place (`{updated} = {updated} + ...`), or start `{updated}` as a tensor before the loop "
            f"(`{updated} = torch.zeros(())`)", construct="inplace")
