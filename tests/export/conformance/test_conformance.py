"""The conformance corpus (see `tests/export/conformance/__init__.py`): every entry in
every context exports and matches eager PyTorch on onnxruntime, or is refused by name
with a place and a way out; an `xfail` says why it is wrong today."""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import types

import onnxruntime as ort
import pytest
import torch

from lowering import LoweringError, export
from tests.export.conformance import CONTEXTS, all_entries, forward_source, refused_list
from tests.export.harness import LOOP_INPUTS, assert_session_matches

INPUTS = LOOP_INPUTS
ENTRIES = all_entries()
_DIR = tempfile.mkdtemp(prefix="untrace_conformance_")


def load(source: str):
    """Write `source` to a file of its own (untrace reads forward's source), exec it."""
    path = os.path.join(_DIR, f"c_{hashlib.sha1(source.encode()).hexdigest()[:16]}.py")
    with open(path, "w") as fh:
        fh.write(source)
    module = types.ModuleType(f"conformance_{os.path.basename(path)[:-3]}")
    module.__file__ = path
    sys.modules[module.__name__] = module  # dataclasses and pickling look the module up
    exec(compile(source, path, "exec"), module.__dict__)
    return module.M().eval(), path


def _cases():
    for entry in ENTRIES:
        for context in CONTEXTS:
            if not entry.applies(context):
                continue
            marks = []
            if context in entry.xfail:
                marks.append(pytest.mark.xfail(strict=True, reason=entry.xfail[context]))
            yield pytest.param(entry, context, marks=marks, id=f"{entry.group}:{entry.name}:{context}")


def _eager_inputs(model):
    ok = []
    for x in INPUTS:
        try:
            with torch.no_grad():
                model(x.clone())
        except (ArithmeticError, IndexError, KeyError, RuntimeError, ValueError, TypeError):
            continue
        ok.append(x)
    return ok


@pytest.mark.parametrize("entry,context", list(_cases()))
def test_conformance(entry, context):
    source = forward_source(entry, context)
    model, path = load(source)
    refusal = entry.refusal(context)
    if refusal is not None:
        with pytest.raises(LoweringError) as info:
            export(model, (INPUTS[0].clone(),))
        err = info.value
        assert re.search(refusal, err.message), f"refusal does not name the construct: {err!r}\n{source}"
        assert err.path == path and err.line is not None, f"refusal without the generated file:line: {err!r}"
        assert err.hint, f"refusal without a way out: {err!r}"
        return
    inputs = _eager_inputs(model) if entry.eager_runs else []
    assert inputs, f"eager raises on every input:\n{source}"
    proto = export(model, (inputs[0].clone(),))
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in inputs:
        assert_session_matches(session, model, (x,))


def test_every_entry_has_a_context():
    assert all(any(e.applies(c) for c in CONTEXTS) for e in ENTRIES)
    names = [(e.group, e.name) for e in ENTRIES]
    assert len(names) == len(set(names)), "entry names repeat"


def test_the_readme_lists_what_the_corpus_refuses():
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "README.md")).read()
    listed = readme.split("<!-- refused:start -->\n", 1)[1].split("<!-- refused:end -->", 1)[0]
    assert listed == refused_list(), "regenerate the README's list with tests.export.conformance.refused_list()"
