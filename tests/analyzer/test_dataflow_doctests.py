"""The analyses' own tiny programs (doctests in their docstrings)."""

import doctest

import pytest

from analyzer.analyses.engine import liveness, reaching, regions
from analyzer.analyses.kinds import ranks


@pytest.mark.parametrize("module", [liveness, reaching, regions, ranks], ids=lambda m: m.__name__)
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
