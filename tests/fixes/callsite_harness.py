"""The facts `analyze_file` returns for an export script (the engine appends the export
call-site facts, with the kind facts of each exported class attached) and the UT4xx rules."""

from __future__ import annotations

import importlib
import pkgutil

import analyzer.rules as rules_pkg
from analyzer.engine import analyze_file
from analyzer.rules import all_rules


def wired_facts(path: str, source: str, project=None) -> list:
    facts, _ = analyze_file(path, source, project)
    return list(facts)


def ut4_rules() -> tuple:
    found = []
    for info in pkgutil.iter_modules(rules_pkg.__path__):
        name = info.name.lstrip("_")
        if name.startswith("ut4") and name[2:5].isdigit():
            found.append(importlib.import_module(f"analyzer.rules.{info.name}").RULE)
    known = {r.code for r in all_rules()}
    return tuple(sorted((r for r in found if r.code not in known), key=lambda r: r.code)) + tuple(
        r for r in all_rules() if r.code.startswith("UT4"))
