"""Errors raised while lowering a model to ONNX.

``LoweringError`` is the one user-facing error of ``untrace export``: whatever cannot be
lowered (an unsupported argument combination, an unknown dtype, an op with no ONNX
equivalent that matches eager PyTorch) is refused with it, never emitted as a graph that
is silently wrong.  Op lowerings raise it without a location; ``GraphBuilder.error``
fills in the current source location, and the interpreter may fill in ``construct``.

Bugs in a lowering (an ONNX node whose types do not check) are *not* ``LoweringError``:
the builder raises ``GraphConstructionError`` for those, so that tests never count a bug
as a deliberate refusal.
"""

from __future__ import annotations


__all__ = ["LoweringError", "PythonException", "GraphConstructionError"]


class LoweringError(Exception):
    """A construct that untrace refuses to lower.

    ``str(err)`` renders ``path:line: message`` and, when there is one, the ``hint`` (the
    way out: rewrite with ``torch.where``, register a lowering, ...) on the next line.
    """

    def __init__(
        self,
        message: str,
        path: str | None = None,
        line: int | None = None,
        construct: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.construct = construct
        self.hint = hint

    def __str__(self) -> str:
        if self.path is not None and self.line is not None:
            head = f"{self.path}:{self.line}: {self.message}"
        elif self.path is not None:
            head = f"{self.path}: {self.message}"
        else:
            head = self.message
        return head if not self.hint else f"{head}\n{self.hint}"

    def __repr__(self) -> str:
        return (
            f"LoweringError({self.message!r}, path={self.path!r}, line={self.line!r}, "
            f"construct={self.construct!r}, hint={self.hint!r})"
        )

    def __reduce__(self):  # keeps every field across pickling (pytest-xdist, multiprocessing)
        return (type(self), (self.message, self.path, self.line, self.construct, self.hint))

    def with_location(
        self, path: str | None, line: int | None, construct: str | None = None
    ) -> "LoweringError":
        """This error with the location (and construct) filled in where it was missing."""
        return type(self)(
            self.message,
            self.path if self.path is not None else path,
            self.line if self.line is not None else line,
            self.construct if self.construct is not None else construct,
            self.hint,
        )


class PythonException(LoweringError):
    """Python code raised `exception` at export time, on values known then: eager PyTorch
    raises it too for these inputs. A `try` whose handler matches it takes the handler,
    as eager does, unless it was raised inside a graph region (`region`, the builder that
    was active) that the `try` is not: then which path runs depends on tensor data."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 construct: str | None = None, hint: str | None = None, *,
                 exception: BaseException | None = None, region: int = 0) -> None:
        super().__init__(message, path, line, construct, hint)
        self.exception = exception
        self.region = region

    def __reduce__(self):
        return (_rebuild_python_exception, (self.message, self.path, self.line, self.construct, self.hint,
                                            self.exception, self.region))

    def with_location(self, path, line, construct=None) -> "PythonException":
        located = super().with_location(path, line, construct)
        located.exception, located.region = self.exception, self.region
        return located


def _rebuild_python_exception(message, path, line, construct, hint, exception, region):
    return PythonException(message, path, line, construct, hint, exception=exception, region=region)


class GraphConstructionError(RuntimeError):
    """A lowering built an ill-typed ONNX node: a bug in untrace, not a user error."""
