"""The findings on the five real trees are exactly the snapshot's, byte for byte.

The speed and memory work of `untrace check` (workers replaced at their memory budget,
caches, positions per method) must not change a finding; a change of the analyses that
does updates `benchmarks/data/tree_findings/` in the same commit
(`python benchmarks/tree_findings.py --update`) and says why. Each tree is checked cold,
with two jobs, in a subprocess: transformers takes a few minutes.
"""

from __future__ import annotations

import pytest

from benchmarks import tree_findings


@pytest.mark.slow
@pytest.mark.parametrize("tree", list(tree_findings.TREES))
def test_findings_on_a_real_tree_are_the_snapshot(tree):
    assert (tree_findings.REAL_TREES / tree).is_dir(), \
        "the real trees are not unpacked: `make test` unpacks them (make real-trees)"
    expected = tree_findings.read_snapshot(tree)
    actual = tree_findings.check_tree(tree)
    if actual != expected:
        report = "\n".join(tree_findings.differences(expected, actual))
        pytest.fail(f"the findings on {tree} changed (if meant: benchmarks/tree_findings.py --update {tree}, "
                    f"and say why in the commit):\n{report or '(the same findings, written differently)'}")
