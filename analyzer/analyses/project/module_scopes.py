"""Module scopes for the value-kind analysis: what each name of a module is bound to
(imports, classes, functions, assignments evaluated on first use), names found through
star-imports, and the values behind lazy bindings."""

from __future__ import annotations

import os

from analyzer.analyses.kinds.summaries import BUILTIN_NAMES, STAR_SEARCH_LIMIT
from analyzer.analyses.kinds.values import UNKNOWN, Value, join_all
from analyzer.analyses.project.index import ClassKey, FunctionKey
from analyzer.frontend import ir


class ModuleScopes:
    """The module scopes of `KindAnalyzer` (a mixin over its state and caches)."""

    def evaluate(self, expr, module: ir.Module, env: dict[str, Value]) -> Value:
        """The value of ``expr`` outside any function body (a module-level assignment, a
        class body, a base class, a parameter default), with names bound by ``env``.

        The semantics of expressions are the value-kind analysis's, which is built on these
        scopes: the analysis that combines the mixins supplies them (`KindAnalyzer`)."""
        raise NotImplementedError

    def module_ir(self, path: str) -> ir.Module | None:
        self._reads[-1].add(os.path.abspath(path))
        return self.project.module(path)

    def globals_of(self, module: ir.Module) -> dict[str, Value]:
        cached = self._globals.get(module.path)
        if cached is not None:
            self._reads[-1] |= self._global_reads.get(module.path, frozenset())
            return cached
        env: dict[str, Value] = {}
        self._globals[module.path] = env  # visible while being built: cyclic imports
        self._begin_reads()
        self._reads[-1].add(os.path.abspath(module.path))
        try:
            for stmt in module.body:
                self._bind_global(stmt, module, env)
        finally:
            self._global_reads[module.path] = self._end_reads()
        return env

    def _bind_global(self, stmt, module: ir.Module, env: dict[str, Value]) -> None:
        if isinstance(stmt, ir.Import):
            for name, value in self.import_bindings(stmt, module.path):
                env[name] = value
        elif isinstance(stmt, ir.ClassDef):
            env[stmt.name] = Value("class", ref=ClassKey(module.path, stmt.name))
        elif isinstance(stmt, ir.FunctionDef):
            env[stmt.name] = Value("function", ref=FunctionKey(module.path, stmt.name))
        elif isinstance(stmt, ir.Assign):
            if all(isinstance(t, ir.Name) for t in stmt.targets):
                # Evaluated on first use, like imports: module scopes of large packages
                # are full of registries and tables (`X = build_table(...)`) that no
                # forward reads, and evaluating them pulls in half the package. A name
                # assigned more than once (`try: X = a` / `except: X = b`) is the join.
                for t in stmt.targets:
                    key = (module.path, t.id)
                    self._deferred.setdefault(key, []).append((stmt, module))
                    env[t.id] = Value("deferred", ref=key)
                return
            value = self.evaluate(stmt.value, module, env)
            for t in stmt.targets:
                if isinstance(t, ir.Name):
                    env[t.id] = value
        elif isinstance(stmt, ir.If):
            # `if TYPE_CHECKING:` / try-import blocks: bind both sides.
            for s in stmt.body + stmt.orelse:
                self._bind_global(s, module, env)
        elif isinstance(stmt, ir.Try):
            for s in stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse:
                self._bind_global(s, module, env)

    def import_bindings(self, stmt: ir.Import, path: str):
        if stmt.module is None:
            for name, asname in stmt.names:
                target = self.project.find_module(name)
                if asname:
                    yield asname, Value("pymodule", ref=target) if target else Value.ext(name)
                else:
                    top = name.split(".")[0]
                    target = self.project.find_module(top)
                    yield top, Value("pymodule", ref=target) if target and top not in ("torch", "numpy") else Value.ext(top)
            return
        dotted = self.project.resolve_relative(path, stmt.module, stmt.level)
        # torch and numpy are never the scanned tree's (their semantics are built in);
        # torchvision, torchaudio or numpy_helpers are packages like any other.
        external = dotted.partition(".")[0] in ("torch", "numpy")
        target = self.project.find_module(dotted) if (stmt.level or not external) else None
        for name, asname in stmt.names:
            if name == "*":
                if target:
                    # Looked up name by name (`global_value`): expanding it here would
                    # read every module a package's `__init__` star-imports.
                    self._stars.setdefault(path, []).append(target)
                continue
            bound = asname or name
            if target:
                # Resolved on first use: most imported names are never evaluated.
                yield bound, Value("import", ref=(target, name, dotted))
                continue
            yield bound, Value.ext(f"{dotted}.{name}" if dotted else name)

    def global_value(self, module: ir.Module, name: str, _seen: set | None = None) -> Value | None:
        """What `name` is bound to at module level: the module's own bindings, then the
        public names of the modules it star-imports."""
        value = self.globals_of(module).get(name)
        if value is not None or name.startswith("_") or name in BUILTIN_NAMES or module.path not in self._stars:
            return value
        if _seen is None:  # the outermost lookup: remembered, with the files it read
            cached = self._star_lookups.get((module.path, name))
            if cached is not None:
                self._reads[-1] |= cached[1]
                return cached[0]
            self._begin_reads()
            try:
                found = self.global_value(module, name, {module.path})
            finally:
                self._star_lookups[(module.path, name)] = (found, self._end_reads())
            return found
        for target in self._stars[module.path]:
            if target in _seen:
                continue
            if len(_seen) >= STAR_SEARCH_LIMIT:
                return None  # a package re-exporting a whole tree: not worth parsing it all
            _seen.add(target)
            other = self.module_ir(target)
            found = self.global_value(other, name, _seen) if other is not None else None
            if found is not None:
                return found
        return None

    def resolve(self, value: Value, _depth: int = 0) -> Value:
        """The value behind a lazy binding: `from project.module import name`, or a
        module-level assignment not evaluated yet."""
        if value.type == "deferred":
            return self._deferred_value(value.ref)
        if value.type != "import":
            return value
        target, name, dotted = value.ref
        module = self.module_ir(target)
        found = self.global_value(module, name) if module is not None else None
        if found is None:
            sub = self.project.find_module(f"{dotted}.{name}")
            return Value("pymodule", ref=sub) if sub else UNKNOWN
        return self.resolve(found, _depth + 1) if _depth < 16 else UNKNOWN

    def _deferred_value(self, key: tuple) -> Value:
        cached = self._deferred_values.get(key)
        if cached is not None:
            self._reads[-1] |= cached[1]
            return cached[0]
        if key in self._in_progress or key not in self._deferred:
            return UNKNOWN  # `X = f(X)`-like cycles through other modules
        self._in_progress.add(key)
        self._begin_reads()
        try:
            value = join_all(self.resolve(self.evaluate(stmt.value, module, self.globals_of(module)))
                             for stmt, module in self._deferred[key]) or UNKNOWN
        finally:
            reads = self._end_reads()
            self._in_progress.discard(key)
        self._deferred_values[key] = (value, reads)
        return value
