"""UT000 parse-error."""

from analyzer.analyses.facts import ParseErrorFact
from analyzer.rules.base import Rule


def detect(facts):
    for fact in facts:
        if isinstance(fact, ParseErrorFact):
            yield RULE.diagnostic(fact.site, f"cannot analyse this file: {fact.message}",
                                  "fix the syntax or encoding; the rest of the run is unaffected")


RULE = Rule(
    code="UT000",
    name="parse-error",
    summary="The file cannot be parsed or decoded, so it was not analysed.",
    what="Reports files that are not valid Python 3 (syntax errors, undecodable bytes, NUL bytes, "
         "nesting too deep to parse). Every other file in the run is still checked.",
    why="A file untrace cannot read may hide trace hazards; the report says so rather than pass it silently.",
    example='print "hello"   # Python 2',
    use_instead='print("hello")',
    detect=detect,
    valid=("x = 1\n", ""),
    invalid=("def f(:\n    pass\n", 'print "hello"\n'),
)
