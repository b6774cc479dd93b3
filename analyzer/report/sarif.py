"""SARIF 2.1.0, as GitHub code scanning and other viewers read it.

One run; ``tool.driver.rules`` lists every rule (stable ``id`` = code, ``name``, short
and full description, markdown ``help`` from the rule's own docs, default level and
whether it is on by default); each result points at its rule by ``ruleId`` and
``ruleIndex``. Columns are Unicode code points (``columnKind``), as in the diagnostics.
A finding reached through calls carries the call path as a ``codeFlow`` of logical
locations (the functions, from ``forward`` to the one holding the site).
"""

from __future__ import annotations

import json
from urllib.parse import quote
from collections.abc import Sequence

from analyzer import __version__
from analyzer.diagnostics import Diagnostic
from analyzer.report import ReportContext, json_text

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/untrace/"

_INTERNAL = {
    "code": "UT000",
    "name": "parse-error",
    "summary": "The file cannot be read, decoded or parsed, or its analysis failed.",
}


def _level(severity: str) -> str:
    return {"error": "error", "warning": "warning"}.get(severity, "note")


def rule_descriptors() -> list[dict]:
    from analyzer.rules import all_rules
    from analyzer.rules.docgen import rule_markdown

    descriptors = []
    for rule in all_rules():
        help_markdown = rule_markdown(rule, level=2)
        descriptors.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": " ".join(rule.summary.split())},
                "fullDescription": {"text": " ".join(rule.what.split())},
                "help": {"text": " ".join(rule.why.split()), "markdown": help_markdown},
                "defaultConfiguration": {"level": _level(rule.severity), "enabled": rule.default_enabled},
                "properties": {"tags": ["onnx", "torch.onnx.export", "trace-hazard"]},
            }
        )
    if not any(d["id"] == _INTERNAL["code"] for d in descriptors):
        descriptors.insert(
            0,
            {
                "id": _INTERNAL["code"],
                "name": _INTERNAL["name"],
                "shortDescription": {"text": _INTERNAL["summary"]},
                "fullDescription": {"text": _INTERNAL["summary"]},
                "help": {"text": _INTERNAL["summary"], "markdown": _INTERNAL["summary"]},
                "defaultConfiguration": {"level": "error", "enabled": True},
            },
        )
    return descriptors


def _physical(diag: Diagnostic, context: ReportContext) -> dict:
    path = context.relative_uri(diag.path)
    if path.startswith("/"):
        artifact = {"uri": "file://" + quote(path, errors="surrogateescape")}
    else:  # a name that is not UTF-8 is percent-encoded as its bytes
        artifact = {"uri": quote(path, errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}
    region = {
        "startLine": max(1, diag.line),
        "startColumn": max(1, diag.column),
        "endLine": max(diag.line, diag.end_line, 1),
        "endColumn": max(1, diag.end_column),
    }
    if region["endLine"] == region["startLine"] and region["endColumn"] < region["startColumn"]:
        region["endColumn"] = region["startColumn"]
    snippet = context.source_line(diag)
    if snippet is not None and diag.end_line == diag.line and len(snippet) < 1000:
        region["snippet"] = {"text": snippet}
    return {"artifactLocation": artifact, "region": region}


def _result(diag: Diagnostic, index: int, context: ReportContext) -> dict:
    text = diag.message
    if diag.cell is not None:
        # SARIF has no notebook cells: the region's lines are those of the cell named here
        text = f"cell {diag.cell}, line {diag.line}: {text}"
    if diag.suggestion:
        text += f" Help: {diag.suggestion}"
    location: dict = {"physicalLocation": _physical(diag, context)}
    if diag.function:
        location["logicalLocations"] = [{"fullyQualifiedName": diag.function, "kind": "function"}]
    result: dict = {
        "ruleId": diag.code,
        "level": _level(diag.severity),
        "message": {"text": text},
        "locations": [location],
    }
    if index >= 0:
        result["ruleIndex"] = index
    flows = []
    for call_path in diag.all_call_paths:
        if len(call_path) <= 1:
            continue
        steps = []
        for depth, function in enumerate(call_path):
            step: dict = {
                "logicalLocations": [{"fullyQualifiedName": function, "kind": "function"}],
                "message": {"text": f"calls {call_path[depth + 1]}" if depth + 1 < len(call_path) else "hazard here"},
            }
            if depth == len(call_path) - 1:
                step["physicalLocation"] = _physical(diag, context)
            steps.append({"location": step, "nestingLevel": depth})
        flows.append(
            {
                "message": {"text": "reached from " + " -> ".join(call_path)},
                "threadFlows": [{"locations": steps}],
            }
        )
    if flows:  # one code flow per call path through calls that reaches the site
        result["codeFlows"] = flows
    if diag.fix is not None:
        result["properties"] = {"fix": diag.fix.message, "applicability": diag.fix.applicability}
    if diag.cell is not None:
        result.setdefault("properties", {})["cell"] = diag.cell
    return result


def to_sarif(diagnostics: Sequence[Diagnostic], context: ReportContext) -> dict:
    rules = rule_descriptors()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [_result(d, index.get(d.code, -1), context) for d in diagnostics]
    internal = [d for d in diagnostics if d.name == "internal-error"]
    base = context.cwd.absolute().as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "untrace",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base}},
                "columnKind": "unicodeCodePoints",
                "invocations": [_invocation(internal, context)],
                "results": results,
            }
        ],
    }


def _invocation(internal: list, context: ReportContext) -> dict:
    """Not successful when a file's analysis failed or a directory could not be read:
    the results do not cover the whole tree."""
    invocation: dict = {"executionSuccessful": not internal and not context.unreadable}
    if context.unreadable:
        count = context.unreadable
        what = "1 directory" if count == 1 else f"{count} directories"
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": f"{what} could not be read; the files in them were not checked"}}
        ]
    return invocation


def render(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    return json_text(json.dumps(to_sarif(diagnostics, context), indent=2, ensure_ascii=False)) + "\n"
