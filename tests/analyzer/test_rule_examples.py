"""Every rule's own VALID / INVALID examples: INVALID fires the rule, VALID keeps it quiet."""

import pytest

from analyzer.engine import analyze_file
from analyzer.rules import all_rules

CASES = [(r, "invalid", i, src) for r in all_rules() for i, src in enumerate(r.invalid)] + [
    (r, "valid", i, src) for r in all_rules() for i, src in enumerate(r.valid)
]


@pytest.mark.parametrize("rule,kind,index,source", CASES, ids=[f"{r.code}-{k}{i}" for r, k, i, _ in CASES])
def test_rule_example(rule, kind, index, source):
    facts, _ = analyze_file("<string>", source)
    codes = [d.code for d in rule.detect(facts)]
    if kind == "invalid":
        assert codes, f"{rule.code} stays quiet on its INVALID example:\n{source}"
    else:
        assert not codes, f"{rule.code} fires on its VALID example:\n{source}"


def test_every_rule_has_examples_and_docs():
    for rule in all_rules():
        assert rule.invalid and rule.valid, rule.code
        assert rule.what and rule.why and rule.example and rule.use_instead, rule.code


def test_codes_are_unique_and_well_formed():
    codes = [r.code for r in all_rules()]
    assert len(codes) == len(set(codes))
    assert all(c.startswith("UT") and len(c) == 5 and c[2:].isdigit() for c in codes)
    assert {"UT000", "UT101", "UT102", "UT103", "UT104", "UT105", "UT201", "UT202", "UT301"} <= set(codes)
