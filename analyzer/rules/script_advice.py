"""The "script it" advice the UT1xx rules append to their suggestions: proposed only when
the engine found no construct `torch.jit.script` rejects in the class (a
`ScriptabilityFact`), otherwise the first such construct is named so that nobody tries."""

from __future__ import annotations

from analyzer.analyses.kinds.facts import ScriptabilityFact


def script_advice(facts, fact) -> str:
    """A sentence to append to ``fact``'s suggestion ("" when the class is unknown)."""
    path = fact.site.call_path or ((fact.site.function,) if fact.site.function else ())
    if not path or "." not in path[0]:
        return ""
    cls = path[0].split(".", 1)[0]
    verdict = next((f for f in facts if isinstance(f, ScriptabilityFact) and f.cls == cls), None)
    if verdict is None:
        return ""
    if verdict.reason is None:
        return (f"; or script `{cls}` with `torch.jit.script`, which keeps it (no construct TorchScript is "
                "known to reject was found; type errors show only when scripting)")
    return f"; `torch.jit.script` would reject `{cls}`: {verdict.reason} at {verdict.where}"
