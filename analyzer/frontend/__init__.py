"""Front end: libcst source -> the untrace IR (structured control flow, spans)."""

from analyzer.frontend.build import ParseError, Unmodelled, parse_module
from analyzer.frontend.printer import expr_text, print_function, print_module
from analyzer.frontend.verify import verify

__all__ = ["ParseError", "Unmodelled", "parse_module", "expr_text", "print_function", "print_module", "verify"]
