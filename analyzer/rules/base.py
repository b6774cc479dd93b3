"""What a rule is: stable code and name, its own documentation and examples, and a
pure function from the facts of one file to diagnostics.

Each rule lives in its own module ``analyzer/rules/utNNN_<name>.py`` and exposes
``RULE``. The registry (``analyzer.rules``) collects them; codes are never reused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from analyzer.analyses.kinds.facts import Fact, Site
from analyzer.diagnostics import Diagnostic, Fix


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str  # one line: what it reports
    what: str  # "What it does"
    why: str  # "Why is this bad?"
    example: str  # code that triggers it
    use_instead: str  # the exportable rewrite
    detect: Callable[[Sequence[Fact]], Iterable[Diagnostic]]
    valid: tuple[str, ...] = ()  # sources on which the rule must stay quiet
    invalid: tuple[str, ...] = ()  # sources on which the rule must fire
    # What `--fix --unsafe-fixes` makes of an INVALID source: (before, after), after every pass
    fixes: tuple[tuple[str, str], ...] = ()
    # INVALID sources it leaves alone: (source, the reason the finding gives)
    not_fixed: tuple[tuple[str, str], ...] = ()
    severity: str = "error"
    default_enabled: bool = True

    def diagnostic(
        self,
        site: Site,
        message: str,
        suggestion: str | None = None,
        fix: Fix | None = None,
    ) -> Diagnostic:
        return Diagnostic(
            code=self.code,
            name=self.name,
            message=message,
            severity=self.severity,
            path=site.path,
            line=site.line,
            column=site.column,
            end_line=site.end_line,
            end_column=site.end_column,
            function=site.function,
            call_path=site.call_path,
            suggestion=suggestion,
            fix=fix,
        )

