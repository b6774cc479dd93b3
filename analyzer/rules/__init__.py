"""The rule registry: every ``utNNN_*.py`` module in this package exposes ``RULE``.

Codes are stable and never reused; ``select`` / ``ignore`` take codes, prefixes
(``UT1``) or ``ALL``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from functools import cache

from analyzer.rules.base import Rule


@cache
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ut") and info.name[2:5].isdigit():
            rules.append(importlib.import_module(f"{__name__}.{info.name}").RULE)
    rules.sort(key=lambda r: r.code)
    codes = [r.code for r in rules]
    assert len(codes) == len(set(codes)), f"duplicate rule codes: {codes}"
    return tuple(rules)


def rule_by_code(code: str) -> Rule | None:
    code = code.upper()
    for rule in all_rules():
        if rule.code == code or rule.name == code.lower():
            return rule
    return None


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


def selected_rules(select: Iterable[str] | None = None, ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
    """Rules enabled by ``select`` (default: the rules enabled by default) minus ``ignore``.

    An explicit code or prefix in ``select`` turns on default-off rules (UT103/UT104).
    """
    select = [s.strip().upper() for s in select] if select else None
    ignore = [s.strip().upper() for s in ignore]
    chosen = []
    for rule in all_rules():
        enabled = rule.default_enabled if select is None else _matches(rule.code, select)
        if enabled and not _matches(rule.code, ignore):
            chosen.append(rule)
    return tuple(chosen)


def validate_codes(patterns: Iterable[str]) -> list[str]:
    """The patterns that match no rule (for a usage error)."""
    codes = [r.code for r in all_rules()]
    return [p for p in patterns if p.upper() != "ALL" and not any(c.startswith(p.upper()) for c in codes)]
