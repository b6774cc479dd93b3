"""What the fix tests prove on a small model: ``--fix --unsafe-fixes`` (applied until no
fix is left, as the command line does), then the fixed model

- gives the original's eager outputs, bit for bit, on every input;
- exports with ``torch.export.export(strict=False)``, and the exported program gives the
  original's eager outputs on every input;
- exports with ``torch.onnx.export(dynamo=True)``, and onnxruntime gives them too.

The inputs are chosen to take every branch and every trip count the fix changes.
"""

from __future__ import annotations

import contextlib
import io
import sys
import textwrap
import types
import warnings

import torch
import torch.utils._pytree as pytree

from analyzer import check_source
from analyzer.runner import apply_fixes


def fix_until_stable(source: str, passes: int = 4) -> tuple[str, list]:
    """The text after every applicable fix, and the diagnostics whose fix was applied."""
    source = textwrap.dedent(source)
    applied_all = []
    for _ in range(passes):
        diagnostics = check_source(source, "m.py")
        fixed, applied = apply_fixes(source, diagnostics, unsafe=True)
        if not applied or fixed == source:
            break
        applied_all += applied
        source = fixed
    return source, applied_all


_COUNT = [0]


def build(source: str, cls: str = "M") -> torch.nn.Module:
    """``cls()`` from ``source``, in a module of its own (torch.cond / while_loop look it up)."""
    _COUNT[0] += 1
    name = f"untrace_fix_test_{_COUNT[0]}"
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own test model
    torch.manual_seed(0)
    return getattr(module, cls)().eval()


def _same(got, expected, exact: bool) -> None:
    got, expected = pytree.tree_leaves(got), pytree.tree_leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g = torch.as_tensor(g)
        assert tuple(g.shape) == tuple(e.shape)
        if exact:
            assert torch.equal(g, e), (g, e)
        else:
            torch.testing.assert_close(g.to(e.dtype), e, rtol=1e-4, atol=1e-5)


@contextlib.contextmanager
def _quiet():
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def check_fixed_model(original: str, fixed: str, inputs: list[tuple], *, onnx: bool = True) -> None:
    """The three promises above (``onnx=False``: torch.export only)."""
    torch.set_num_threads(1)
    before, after = build(textwrap.dedent(original)), build(fixed)
    after.load_state_dict(before.state_dict())
    with torch.no_grad():
        expected = [before(*args) for args in inputs]
        for args, want in zip(inputs, expected):
            _same(after(*args), want, exact=True)
    with _quiet():
        program = torch.export.export(after, inputs[0], strict=False)
    runnable = program.module()
    with torch.no_grad():
        for args, want in zip(inputs, expected):
            _same(runnable(*args), want, exact=False)
    if onnx:
        with _quiet():
            onnx_program = torch.onnx.export(after, inputs[0], dynamo=True, verbose=False)
            for args, want in zip(inputs, expected):
                _same(onnx_program(*args), want, exact=False)


def does_not_export(source: str, inputs: list[tuple]) -> bool:
    """torch.export(strict=False) refuses ``source`` as it is (the fix is needed)."""
    model = build(textwrap.dedent(source))
    try:
        with _quiet():
            torch.export.export(model, inputs[0], strict=False)
    except Exception:  # noqa: BLE001 - any refusal
        return True
    return False
