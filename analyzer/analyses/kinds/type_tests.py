"""Type tests decided by what the analysis knows of a value, as the traced call sees them.

`isinstance(x, torch.Tensor)`, `torch.is_tensor(x)`, `is_torch_tensor(x)` of a value known
to be a tensor are True (and False of None): the other side of such a dispatch (a NumPy
variant) is not what the traced call runs. `isinstance(x, list)` is True of a list the code
built (`[t.permute(0, 3, 1, 2) for t in outputs]`) and False of a tensor, so that

    h, w = feats[i].shape[2:] if isinstance(feats, list) else (int(feats[i][0]), int(feats[i][1]))

runs only the side its `feats` takes. Anything else is not decided (None).
"""

from __future__ import annotations

from analyzer.analyses.kinds import torch_api as api
from analyzer.analyses.kinds.values import Value
from analyzer.frontend import expr_text, ir

_TENSOR_TYPES = frozenset({"torch.Tensor", "Tensor"})
_LIST_TYPES = frozenset({"list", "(list, tuple)", "(tuple, list)"})


def type_test_truth(test: ir.Call, name: str, state: dict) -> bool | None:
    """The value of the type test ``test`` (a call of ``name``) on the values in ``state``."""
    args = [a.value for a in test.args if a.keyword is None and not a.star]
    if name == "isinstance":
        if len(args) != 2:
            return None
        types = expr_text(args[1])
    elif name in api.TENSOR_TESTS and len(args) == 1:
        types = "torch.Tensor"
    else:
        return None
    if not isinstance(args[0], ir.Name) or args[0].id not in state:
        return None
    return _isinstance(state[args[0].id], types)


def _isinstance(value: Value, types: str) -> bool | None:
    if value.type == "none" and (types in _TENSOR_TYPES or types in _LIST_TYPES):
        return False
    if types in _TENSOR_TYPES:
        return True if value.is_certain_tensor else None
    if types in _LIST_TYPES:
        if value.is_certain_tensor:
            return False
        if value.type == "container" and value.ref == "list":
            return True  # a list comprehension's result
    return None
