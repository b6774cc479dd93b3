"""Every rule's own fix examples (`Rule.fixes`, `Rule.not_fixed`), as `untrace rule CODE`
shows them: `--fix --unsafe-fixes` turns each "before" into its "after" exactly, and leaves
each "not rewritten" source alone with the reason it states."""

import pytest

from analyzer import check_source
from analyzer.rules import all_rules

from .exporting import fix_until_stable

FIXED = [(r, i, before, after) for r in all_rules() for i, (before, after) in enumerate(r.fixes)]
NOT_FIXED = [(r, i, source, why) for r in all_rules() for i, (source, why) in enumerate(r.not_fixed)]


@pytest.mark.parametrize("rule,index,before,after", FIXED, ids=[f"{r.code}-fix{i}" for r, i, _, _ in FIXED])
def test_the_fix_example_is_what_the_fix_writes(rule, index, before, after):
    assert rule.code in {d.code for d in check_source(before, "m.py")}
    fixed, applied = fix_until_stable(before)
    assert rule.code in {d.code for d in applied}
    assert fixed == after


@pytest.mark.parametrize("rule,index,source,why", NOT_FIXED, ids=[f"{r.code}-kept{i}" for r, i, _, _ in NOT_FIXED])
def test_the_example_left_alone_says_why(rule, index, source, why):
    found = [d for d in check_source(source, "m.py") if d.code == rule.code]
    assert found and all(d.fix is None for d in found)
    assert any(why in d.suggestion for d in found), [d.suggestion for d in found]


def test_the_rules_with_fixes_show_them():
    assert {r.code for r in all_rules() if r.fixes} == {"UT101", "UT102", "UT201", "UT301"}
