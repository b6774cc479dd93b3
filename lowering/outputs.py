"""What forward returns -> the graph's outputs, in order, with names.

The legacy tracer (`torch.onnx.export(dynamo=False)`) flattens a returned tuple, list,
namedtuple and dict depth first, in order (a dict in insertion order), and drops the None
in them: forward returning `{"a": x, "b": None, "c": y}` has two outputs. untrace
flattens the same way, and a dataclass instance too, by its fields in declaration order
(the legacy tracer refuses one that is not a dict): a field that is None is dropped as a
None dict value is.

Names: the path to the leaf, its keys and field names joined by "." and positions
written as numbers (`logits`, `0.hidden`, `past.1`), so that a user finds an output by the
name forward gave it. A path without any name (a tensor, a plain tuple of tensors) keeps
the positional names `output` / `output_<i>`. A name the graph already uses (an input
`x` and a returned `{"x": ...}`) gets a suffix.
"""

from __future__ import annotations

import dataclasses

from lowering.interp.values import _flatten, record_state


def named_leaves(result) -> list[tuple[tuple, object]]:
    """(path, leaf) for every leaf of `result` that is not None, in the tracer's order;
    a path is the keys, field names (str) and positions (int) leading to the leaf."""
    out: list[tuple[tuple, object]] = []

    def walk(value, path: tuple) -> None:
        if value is None:
            return
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, path + (k if isinstance(k, str) else str(k),))
        elif isinstance(value, tuple) and hasattr(type(value), "_fields"):
            for k, v in zip(type(value)._fields, value):
                walk(v, path + (k,))
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                walk(v, path + (i,))
        elif record_state(value) is not None:
            # The declared fields, as `dataclasses.astuple` reads them; an attribute
            # `__post_init__` added that is not a field is not an output, as it is not
            # part of what the dataclass says it holds.
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name), path + (f.name,))
        else:
            leaves, _ = _flatten(value)  # an interpreter value (a scan output, an array)
            if len(leaves) == 1:
                out.append((path, leaves[0]))
            else:
                out.extend((path + (i,), leaf) for i, leaf in enumerate(leaves))

    walk(result, ())
    return out


def output_name(path: tuple, position: int, count: int) -> str:
    if not any(isinstance(p, str) for p in path):
        return f"output_{position}" if count > 1 else "output"
    return ".".join(str(p) for p in path)
