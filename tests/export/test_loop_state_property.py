"""The promise of `untrace export`, as a property: on generated `forward` functions that
change Python lists, int counters (also through a closure's `nonlocal`, or a walrus in a
condition), dicts and float accumulators, or update in place a view that tensor data chose,
under tensor-dependent `while` / `for` / `if`, every export either
raises `LoweringError` or gives eager PyTorch's outputs on onnxruntime, on inputs that
run each loop 0, 1 and several times and take both sides of each branch. Never a graph
that is silently wrong.

The programs are source text written to a file (untrace reads forward's source), exec'd
into a module. The budget here is small and derandomized, so the suite is deterministic;
`make fuzz` runs the same property much longer (`UNTRACE_FUZZ_EXAMPLES`, and
`UNTRACE_FUZZ_SEED` for a fresh random search).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile

import onnxruntime as ort
import pytest
import torch
from hypothesis import HealthCheck, event, given, note, seed, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

from lowering import LoweringError, export
from tests.export.harness import LOOP_INPUTS, assert_session_matches

EXAMPLES = int(os.environ.get("UNTRACE_FUZZ_EXAMPLES", "150"))
SEED = os.environ.get("UNTRACE_FUZZ_SEED")
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=SEED is None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

# x has 3 elements; s = x.sum() drives every while loop (each iteration ends with s = s - 1),
# so these inputs run a `while s > 0` loop 0, 1, 2, 4 and 7 times, and order x[0], x[1] both ways.
INPUTS = LOOP_INPUTS

TENSOR_PREDICATES = ["s > 1", "s > 2.5", "x[0] > x[1]", "s.abs() < 2", "x[1] > 0"]
# Python state read in conditions (the length of the list being built most often: issue 11).
STATE_PREDICATES = ["len(out) < {k}", "len(out) < {k}", "len(out) <= {k}", "n < {k}", "len(d) < {k}", "n % 2 == 0",
                    "len(out) % 2 == 1", "out[-1] > {k}", "(m := m + 1) < {k}"]
VALUES = ["s", "s * 2", "x[0] + n", "s + len(out)", "s * len(out)", "out[-1] + 1", "x[1] - len(d)", "d['a'] + s",
          "x[0] + t"]
READS = ["s", "len(out)", "len(out)", "n", "out[-1]", "len(d)", "d['a']", "out[0]", "out[len(out) - 1]", "t"]
# `t` starts as a Python float: a number accumulated from tensor values (`float(s)`, a
# ternary or round() of one), which never shares memory, or a tensor from `t += s` on,
# which eager then updates in place (issue 24).
FLOATS = ["t += float(s)", "t += float(x[0]) if s > 1 else 0.5", "t = float(s) if x[0] > x[1] else t",
          "t += round(float(s))", "t += abs(float(x[1]))", "t += s", "t = t + s", "u = t", "y = y + u"]


# Constructs of the conformance corpus (tests/export/conformance) among the state changes:
# comprehensions, a walrus, augmented assignment of a tuple, the min / max / sum builtins.
CONSTRUCTS = ["y = y + sum([s * i for i in range(3)])", "y = y + sum(s * i for i in range(2))",
              "y = y + (w := s + 1) - w", "tp += (s,)", "y = y + tp[-1] + len(tp)", "y = y + max(s, x[1])",
              "y = y + min(x[0], x[2])", "y = y + sum([x[0], s])", "n = max(n, len(out))", "n = min(n + 1, 3)",
              "y = y + sum([o * 2 for o in out])", "y = y + len({k: 0 for k in d})"]


@st.composite
def blocks(draw, depth: int, in_loop: bool):
    """A list of statement lines (unindented: nested lines carry their own indent)."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 2 if depth else 3))):
        kind = draw(st.sampled_from(["append", "append", "count", "dict", "read", "float", "construct", "if", "loop"]
                                    if depth < 2 else ["append", "append", "count", "dict", "read", "float",
                                                       "construct"]))
        if kind == "append":
            lines.append(f"out.append({draw(st.sampled_from(VALUES))})")
        elif kind == "count":
            lines.append(draw(st.sampled_from(["n = n + 1", "n += 2", "n = n + int(s > 1)", "n = len(out)",
                                               "n = n + len(d)", "bump()"])))
        elif kind == "dict":
            lines.append(draw(st.sampled_from([f"d['a'] = {draw(st.sampled_from(VALUES))}",
                                               f"d['k{draw(st.integers(0, 2))}'] = s",
                                               "d[len(out)] = s", "d.pop('k0', None)"])))
        elif kind == "float":
            lines.append(draw(st.sampled_from(FLOATS)))
        elif kind == "construct":
            lines.append(draw(st.sampled_from(CONSTRUCTS)))
        elif kind == "read":
            lines.append(f"y = y + {draw(st.sampled_from(READS))}")
        elif kind == "if":
            k = draw(st.integers(0, 5))
            test = draw(st.sampled_from(TENSOR_PREDICATES + STATE_PREDICATES)).format(k=k)
            lines.append(f"if {test}:")
            lines += ["    " + ln for ln in draw(blocks(depth + 1, in_loop))]
            if draw(st.booleans()):
                lines.append("else:")
                lines += ["    " + ln for ln in draw(blocks(depth + 1, in_loop))]
        else:
            lines += draw(loops(depth + 1))
    return lines


@st.composite
def loops(draw, depth: int = 0):
    kind = draw(st.sampled_from(["while", "while", "for-range", "for-static"]))
    k = draw(st.integers(1, 5))
    if kind == "while":
        state = draw(st.sampled_from([None] + STATE_PREDICATES))
        test = "s > 0" if state is None else draw(st.sampled_from([f"{state} and s > 0", f"s > 0 and {state}"]))
        head = f"while {test.format(k=k)}:"
        tail = ["s = s - 1"]
    elif kind == "for-range":
        head = "for i in range(int(s.clamp(0, 4))):"
        tail = draw(st.sampled_from([[], ["s = s - 1"]]))
    else:
        head = f"for i in range({k + 1}):"  # unrolled; the state it changes sits under graph Ifs
        tail = []
    body = draw(blocks(depth, True))
    return [head] + ["    " + ln for ln in body + tail]


@st.composite
def programs(draw) -> str:
    setup = ["s = x.sum()",
             draw(st.sampled_from(["out = [x[0] * 0]", "out = [x[2], x[1]]"])),
             draw(st.sampled_from(["n = 0", "n = 1"])),
             "m = 0",
             "d = {'a': x[0] * 0}",
             "y = x[0] * 0",
             "t = 0.0",
             "u = 0.0",
             "tp = (x[0] * 0,)",
             "def bump():",  # a closure that changes `n` (nonlocal)
             "    nonlocal n",
             "    n += 1"]
    body = []
    for _ in range(draw(st.integers(1, 2))):
        body += draw(loops() if draw(st.integers(0, 3)) else blocks(0, False))
    body += draw(st.sampled_from([[], ["y = y + len(out) + n", "y = y + out[-1] + len(d)"]]))
    lines = setup + body + ["return torch.stack(out), y + n + len(out) + len(d) + m, y + d['a'] + t + u"]
    return module_source(lines)


def module_source(lines: list[str]) -> str:
    """A module whose forward(self, x) is `lines`."""
    return ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            + "".join("        " + ln + "\n" for ln in lines))


_DIR = tempfile.mkdtemp(prefix="untrace_loopstate_")


def load(source: str) -> torch.nn.Module:
    """Write `source` to a file of its own (untrace reads forward's source) and exec it."""
    path = os.path.join(_DIR, f"gen_{hashlib.sha1(source.encode()).hexdigest()[:16]}.py")
    with open(path, "w") as fh:
        fh.write(source)
    namespace: dict = {"__name__": "generated"}
    exec(compile(source, path, "exec"), namespace)
    return namespace["M"]().eval()


def eager_runs(model, x) -> bool:
    try:
        with torch.no_grad():
            model(x.clone())
    except (IndexError, KeyError, RuntimeError, ZeroDivisionError):
        return False
    return True


def _note(text: str) -> None:
    if currently_in_test_context():
        note(text)


def check_program(source: str) -> str:
    """'refused' or 'matches'; raises AssertionError when the graph differs from eager."""
    model = load(source)
    inputs = [x for x in INPUTS if eager_runs(model, x)]
    if not inputs:
        return "eager-raises"
    try:
        proto = export(model, (inputs[0].clone(),))
    except LoweringError as exc:
        _note(f"refused: {exc}")
        return "refused"
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in inputs:
        _note(f"input {x.tolist()}")
        assert_session_matches(session, model, (x,))
    return "matches"


def _budget(test):
    test = SETTINGS(test)
    return seed(int(SEED))(test) if SEED is not None else test


@pytest.mark.slow
@_budget
@given(programs())
def test_exports_match_eager_or_are_refused(source):
    note(source)
    event(check_program(source))


# Python numbers only: what these programs do to `t` and `u` rebinds numbers, which never
# share memory, so nothing in them may be refused as an in-place update (issue 24).
NUMBER_STATEMENTS = ["t += float(s)", "t += float(x[0]) if s > 1 else 0.5", "t = float(s) if x[0] > x[1] else t",
                     "t += round(float(s))", "t += abs(float(x[1]))", "t = t * 0.5 + float(s)", "u = t",
                     "u += 1.0", "y = y + t", "y = y + u", "t -= float(x[2]) if t > 1 else 0.25"]


@st.composite
def statement_blocks(draw, statements: list[str], depth: int, with_else: bool = False):
    """Lines drawn from `statements`, under tensor-dependent `if`s and graph loops."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["stmt", "stmt", "stmt", "if", "loop"] if depth < 2 else ["stmt"]))
        if kind == "stmt":
            lines.append(draw(st.sampled_from(statements)))
        elif kind == "if":
            lines.append(f"if {draw(st.sampled_from(TENSOR_PREDICATES))}:")
            lines += ["    " + ln for ln in draw(statement_blocks(statements, depth + 1, with_else))]
            if with_else and draw(st.booleans()):
                lines.append("else:")
                lines += ["    " + ln for ln in draw(statement_blocks(statements, depth + 1, with_else))]
        else:
            lines += draw(statement_loops(statements, depth + 1, with_else))
    return lines


@st.composite
def statement_loops(draw, statements: list[str], depth: int = 0, with_else: bool = False):
    head = draw(st.sampled_from(["while s > 0:", "for i in range(int(s.clamp(0, 4))):"]))
    tail = ["s = s - 1"] if head.startswith("while") else []
    return [head] + ["    " + ln for ln in draw(statement_blocks(statements, depth, with_else)) + tail]


@st.composite
def number_programs(draw) -> str:
    lines = ["s = x.sum()", "t = 0.0", "u = 0.0", "y = x[0] * 0", *draw(statement_loops(NUMBER_STATEMENTS)),
             "return y + t + u"]
    return module_source(lines)


@pytest.mark.slow
@_budget
@given(number_programs())
def test_python_numbers_in_graph_loops_export_and_match(source):
    """Never refused: a refusal here is the float-aliasing bug of issue 24."""
    note(source)
    assert check_program(source) == "matches"


# A view chosen by tensor data (a ternary, an `if`, a loop-carried name that is a view on
# some iterations), then updated in place: eager updates `z` in the region the data chose.
# `z` is returned, so a lost update shows; `z += 1` while `v` is live must be refused.
VIEW_STATEMENTS = ["v = z[0] if s > 1 else z[1]", "v = z[2] if x[0] > x[1] else v", "v = z[1]", "v = z[0]",
                   "v = v * 2", "v = z[1] if s > 2.5 else z[0] * 2", "v += 1", "v.add_(s)", "v[0] = s",
                   "v.copy_(x[:2])", "v.mul_(0.5)", "z += 1", "y = y + v.sum()"]


@st.composite
def view_programs(draw) -> str:
    lines = ["s = x.sum()", "z = x.unsqueeze(1) * torch.ones(2)", "v = z[0]", "y = x[0] * 0",
             *draw(statement_blocks(VIEW_STATEMENTS, 0, with_else=True)), "return y, z"]
    return module_source(lines)


@pytest.mark.slow
@_budget
@given(view_programs())
def test_views_chosen_by_data_then_updated_match_eager_or_are_refused(source):
    note(source)
    event(check_program(source))


ISSUE_11 = ("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
            "        out = [x[0] * 0]\n        s = x.sum()\n        while len(out) < 3 and s > 0:\n"
            "            out.append(s)\n            s = s - 1\n        return torch.stack(out)\n")


def test_the_program_of_issue_11_matches_eager():
    assert check_program(ISSUE_11) == "matches"


def test_the_checker_fails_on_a_wrong_graph(monkeypatch):
    """What the property would see for issue 11 before the fix: the loop runs past len(out) == 3."""
    wrong = ISSUE_11.replace("while len(out) < 3 and s > 0", "while s > 0")
    real_export = export
    monkeypatch.setattr(sys.modules[__name__], "export", lambda model, args: real_export(load(wrong), args))
    with pytest.raises(AssertionError):
        check_program(ISSUE_11)
