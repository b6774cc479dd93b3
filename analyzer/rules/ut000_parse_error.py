"""UT000 parse-error."""

from analyzer.analyses.kinds.facts import ParseErrorFact
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
         "nesting too deep to parse, CPython's limits such as 200 nested parentheses), at the "
         "position of the error: the first byte that does not decode, or CPython's line and "
         "column. Also files that cannot be read, paths that are not regular files (a named "
         "pipe, a socket, a device: never opened), and notebooks that are not valid nbformat 4 "
         "JSON. In a notebook, a syntax error is reported at its cell and the line in that "
         "cell. Every other file in the run is still checked, and the summary counts these "
         "files apart from the hazards.",
    why="A file untrace cannot read may hide trace hazards; the report says so rather than pass it silently.",
    example='print "hello"   # Python 2',
    use_instead='print("hello")',
    detect=detect,
    valid=("x = 1\n", ""),
    invalid=("def f(:\n    pass\n", 'print "hello"\n'),
)
