"""Builtins that are never run at export time: input and output other than print, code
run from strings, the debugger. Each is refused by name, with a way out."""

from tests.export.conformance import Entry

ENTRIES = [
    Entry("open", "with open('/dev/null') as fh:\n    fh.read()\nr = v", refused=r"`open\(\)`"),
    Entry("input", "a = input()\nr = v", refused=r"`input\(\)`"),
    Entry("eval", "r = v * eval('1 + 1')", refused=r"`eval\(\)`"),
    Entry("exec", "exec('a = 1')\nr = v", refused=r"`exec\(\)`"),
    Entry("breakpoint", "breakpoint()\nr = v", refused=r"`breakpoint\(\)`"),
    Entry("help", "help(len)\nr = v", refused=r"`help\(\)`"),
]
