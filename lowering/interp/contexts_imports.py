"""`with` and `import` statements in forward: the context managers that change nothing a
graph holds (no_grad, autocast, a lock) and imports, run for real at export time."""

from __future__ import annotations

import threading

from analyzer.frontend import expr_text


# A lock guards against other threads; an export runs forward once, in one thread.
_LOCKS = (type(threading.Lock()), type(threading.RLock()))


def _is_harmless_context(value) -> bool:
    name = type(value).__name__
    return name in ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "autocast", "nullcontext",
                    "_DecoratorContextManager") or value is None or isinstance(value, _LOCKS)


class ContextsAndImports:
    def _stmt_With(self, s, frame):
        for ctx, target in s.items:
            value = self.eval(ctx, frame)
            if not _is_harmless_context(value):
                raise self.error(f"`with {expr_text(ctx)}` is not supported", construct="with",
                                 hint="call forward's body without the context manager (untrace accepts "
                                      "torch.no_grad, autocast, nullcontext, a lock)")
            if target is not None:
                self.assign(target, None, frame)
        self.exec_block(s.body, frame)

    def _stmt_Import(self, s, frame):
        try:
            self._import(s, frame)
        except ImportError as exc:
            raise self.python_exception(exc, f"the import fails at export time: {exc!r}", construct="import") from None

    def _import(self, s, frame):
        import importlib

        for name, asname in s.names:
            if s.module is None:
                mod = importlib.import_module(name)
                frame.env[asname or name.split(".")[0]] = mod if asname else importlib.import_module(name.split(".")[0])
            else:
                package = frame.globals.get("__package__")
                mod = importlib.import_module(("." * s.level) + s.module, package) if s.level else importlib.import_module(s.module)
                frame.env[asname or name] = getattr(mod, name)
