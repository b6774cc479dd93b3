"""``check_source`` never raises and never fails internally, on programs generated from
Python's grammar (hypothesmith), nor on arbitrary bytes."""

from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer import check_source

# hypothesmith compiles the programs it generates; CPython's warnings about them are noise
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _assert_sound(diagnostics, source_lines: int) -> None:
    for d in diagnostics:
        assert d.name != "internal-error", d.message
        assert d.line >= 1 and d.column >= 1
        assert (d.end_line, d.end_column) >= (d.line, d.column) or d.code == "UT000"


@SETTINGS
@given(hypothesmith.from_grammar())
def test_grammar_programs(source):
    diagnostics = check_source(source, "generated.py", select=["ALL"])
    _assert_sound(diagnostics, source.count("\n") + 1)


@SETTINGS
@given(hypothesmith.from_grammar().map(lambda s: "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n" + "".join("        " + line + "\n" for line in s.splitlines())))
def test_grammar_programs_inside_forward(source):
    _assert_sound(check_source(source, "generated.py", select=["ALL"]), source.count("\n") + 1)


@SETTINGS
@given(st.binary(max_size=2000))
def test_arbitrary_bytes(data):
    _assert_sound(check_source(data, "bytes.py", select=["ALL"]), 0)
