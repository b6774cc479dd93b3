"""What the in-tree callers pass for a `forward`'s inputs, for the writes into them (UT301).

A write into a forward input is a hazard when the input is the exported graph's input:
the trace copies into its own value, and the caller's tensor changes in eager only. A
module that is only ever a submodule never gets one:

    class Model(nn.Module):
        def __init__(self, config):
            self.encoder = Encoder(config)
        def forward(self, x, mask):
            h = self.projection(x)
            return self.encoder(h, mask)

    class Encoder(nn.Module):
        def forward(self, hidden_states, mask):
            hidden_states[~mask] = 0          # a write into the caller's `h`

The legacy tracer records that write on `h` faithfully (measured on whole models:
`benchmarks/judging/inplace_submodule_inputs.py`), so it is a local write (UT304). An
input counts as such a temporary ("passed-local") when the class has in-tree callers
only, by the conditions of `caller_bounds` (every mention a construction
`self.<attr> = Cls(...)` in a module's `__init__`, `self.<attr>` only called in that
module's forward, reached by its run, and no `<attr>` of another object called anywhere
in the tree), and every one of those calls passes, for it:

- a tensor the caller made (an op's result, a copy) or one of its own passed-local
  inputs, the caller being judged the same way (recursively);
- not a forward input of the caller, a parameter or buffer, a view of another tensor;
- in a call that hands no view expression (`self.act(y[:, :c])`) to any parameter: a
  write into a view leaves its base, which the caller may read again, unchanged in the
  trace.

Asked only of a forward whose run wrote into an input, since it runs the callers'
forwards. Plain functions the forward calls follow: they get the forward's values."""

from __future__ import annotations

from dataclasses import replace

from analyzer.analyses.engine.memo import memoized
from analyzer.analyses.kinds.facts import InplaceFact
from analyzer.analyses.kinds.values import PASSED_LOCAL
from analyzer.analyses.kinds.view_bases import view_base
from analyzer.analyses.project.index import ClassKey
from analyzer.analyses.ranges.caller_bounds import caller_arguments
from analyzer.frontend import ir

_MADE_BY_CALLER = (None, "copy", PASSED_LOCAL)  # origins of tensors no caller's caller shares


def writes_into_inputs(facts) -> bool:
    return any(isinstance(f, InplaceFact) and f.target == "input" for f in facts)


def localized_entry(analyzer, key: ClassKey, forward: ir.FunctionDef, args: dict) -> dict:
    """``args`` (the entry's parameter values) with the inputs every in-tree caller passes
    a tensor of its own for marked passed-local."""
    inputs = [name for name, v in args.items() if v.type == "tensor" and v.origin == "input"]
    if not inputs:
        return args
    local = memoized(analyzer, analyzer.caller_origins, key, lambda: _passed_local(analyzer, key, forward)) or ()
    return {name: replace(v, origin=PASSED_LOCAL) if name in local and name in inputs else v for name, v in args.items()}


def _passed_local(analyzer, key: ClassKey, forward: ir.FunctionDef) -> frozenset:
    calls = caller_arguments(analyzer, key, forward, entry=lambda caller, fn, args: localized_entry(analyzer, caller, fn, args),
                             callee=forward)
    if not calls or any(_hands_a_view(call) for call, _ in calls):
        return frozenset()
    return frozenset(p.name for p in forward.params[1:]
                     if all(_made_by_caller(bound.get(p.name)) for _, bound in calls))


def _made_by_caller(value) -> bool:
    return value is not None and value.type == "tensor" and value.origin in _MADE_BY_CALLER


def _hands_a_view(call: ir.Call) -> bool:
    return any(view_base(a.value) is not None for a in call.args)
