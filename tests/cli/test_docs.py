"""docs/rules.md is generated from the rules' own metadata and must not go stale."""

from __future__ import annotations

import subprocess
import sys

from analyzer.rules import all_rules
from analyzer.rules.docgen import rules_markdown

from .conftest import REPO, _env


def test_rules_md_is_up_to_date():
    generated = rules_markdown()
    current = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == generated, "docs/rules.md is stale: run `python -m analyzer.rules.docgen > docs/rules.md`"


def test_docgen_module_prints_the_same():
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer.rules.docgen"], capture_output=True, text=True, env=_env(), cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == rules_markdown()


def test_every_rule_has_a_section_with_all_headings():
    text = rules_markdown()
    for rule in all_rules():
        section = text.split(f"## {rule.code} `{rule.name}`", 1)[1].split("\n## ", 1)[0]
        for heading in ("### What it does", "### Why is this bad?"):
            assert heading in section, (rule.code, heading)
        if rule.example.strip():
            assert "### Example" in section
        if rule.use_instead.strip():
            assert "### Use instead" in section
        assert f"Default: **{'on' if rule.default_enabled else 'off'}**" in section
        assert f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | `{rule.name}` |" in text
