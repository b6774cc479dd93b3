"""Exceptions at export time: `raise`, `try` / `except` / `else` / `finally`, and the
Python errors that code run for real raises (a failed `getattr`, a missing dict key,
an `import` that fails).

The interpreter runs forward once, on what is known at export time. An exception that
Python code raises there, on known values, is one eager PyTorch raises too for these
inputs (`PythonException`), so a `try` handles it as Python does:

- the body runs; when it raises nothing, `else` runs, then `finally`;
- when it raises an exception a handler matches, that handler runs (with `as name`
  bound), then `finally`; a bare `raise` in it raises the exception again;
- when what the body raised was raised inside a graph region that the `try` is not in
  (one side of a data-dependent `If`, a `Loop` body), whether eager raises depends on
  tensor data: refused, naming both lines;
- a `raise` on one side of a data-dependent `if` is a check on the input, as a data
  `assert` is: the graph computes the other side (`DataIfs._emit_if`), unless a
  `try` with handlers encloses it, which is refused as above;
- a refusal of untrace itself (an op with no lowering, ...) is never an exception of
  the program: no handler catches it, and the export stops there.
"""

from __future__ import annotations

from analyzer.frontend import expr_text
from lowering.errors import LoweringError, PythonException
from lowering.interp.values import Frame, ReturnSignal

_RAISES_HINT = "the inputs given to export take a path that raises; check the shapes and arguments"


class Exceptions:
    def python_exception(self, exception: BaseException, message: str, construct: str = "call") -> PythonException:
        """`exception`, raised by Python code on values known at export time, as a refusal
        that a matching `except` can catch."""
        path, line = self.location
        return PythonException(message, path, line, construct, _RAISES_HINT, exception=exception, region=id(self.g))

    def _stmt_Raise(self, s, frame):
        if s.exc is None:
            if not self._handling:
                raise self.error("a bare `raise` outside an `except` block", construct="raise",
                                 hint="raise a named exception")
            raise self._handling[-1]
        try:
            raised = self.eval(s.exc, frame)
        except LoweringError:
            raised = None
        if isinstance(raised, type) and issubclass(raised, BaseException):
            try:
                raised = raised()
            except Exception:  # noqa: BLE001 - an exception class that needs arguments: keep the class
                pass
        exception = raised if isinstance(raised, BaseException) else None
        if s.cause is not None and exception is not None:
            cause = self.eval(s.cause, frame)  # `raise E from C`: C is E.__cause__, as Python sets it
            if isinstance(cause, type) and issubclass(cause, BaseException):
                cause = cause()
            exception.__cause__ = cause
        raise self.python_exception(exception, f"`raise {expr_text(s.exc)}` is reached at export time for these inputs",
                                    construct="raise")

    def _stmt_Try(self, s, frame):
        region = id(self.g)
        try:
            try:
                self._catching += bool(s.handlers)
                try:
                    self.exec_block(s.body, frame)
                finally:
                    self._catching -= bool(s.handlers)
            except PythonException as exc:
                handler = self._matching_handler(s, exc, frame)
                if handler is None:
                    raise
                if exc.region != region:
                    raise self.error(
                        f"an exception is raised at line {exc.line} inside a data-dependent branch or loop within "
                        f"this `try`: whether eager PyTorch raises it, and so whether the `except` at line "
                        f"{handler.span.line} runs, depends on tensor data",
                        "raise outside the data-dependent branch, or compute both results and choose with "
                        "torch.where", construct="try") from None
                self._run_handler(handler, exc, frame)
            else:
                self.exec_block(s.orelse, frame)
        except (PythonException, ReturnSignal):
            self.exec_block(s.finalbody, frame)  # Python runs `finally` on the way out, too
            raise
        self.exec_block(s.finalbody, frame)

    def _matching_handler(self, s, exc: PythonException, frame: Frame):
        if exc.exception is None:
            return None
        for handler in s.handlers:
            if handler.type is None:
                return handler
            types = self.eval(handler.type, frame)
            types = types if isinstance(types, tuple) else (types,)
            if not all(isinstance(t, type) and issubclass(t, BaseException) for t in types):
                raise self.error(f"`except {expr_text(handler.type)}` does not name exception classes known at "
                                 "export time", "name the exception classes directly", construct="try")
            if isinstance(exc.exception, types):
                return handler
        return None

    def _run_handler(self, handler, exc: PythonException, frame: Frame) -> None:
        if handler.name is not None:
            frame.env[handler.name] = exc.exception
        self._handling.append(exc)
        try:
            self.exec_block(handler.body, frame)
        finally:
            self._handling.pop()
            if handler.name is not None:
                frame.env.pop(handler.name, None)  # Python deletes the name after the handler

