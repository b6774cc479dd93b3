"""`import` statements in forward, run for real at export time (`with` statements are
`lowering.interp.context_managers`)."""

from __future__ import annotations


class ContextsAndImports:
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
