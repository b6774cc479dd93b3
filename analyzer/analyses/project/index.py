"""The project index: which file defines which module, and import resolution.

Requires: the list of files being checked (and the roots they were found under).
Computes, lazily and cached per process: each file's IR, its dotted module name
(the package path given by `__init__.py` files), and the resolution of
`import` / `from ... import` to project files, classes and functions. Names that do not
resolve into the project are external (`torch.nn.Linear`, `numpy.asarray`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from analyzer.analyses.engine.memo import forget_function_caches
from analyzer.construction_sites import forget_texts
from analyzer.frontend import ParseError, ir, parse_module
from analyzer.module_index import ModuleIndex, lookup_key, module_name_for  # noqa: F401 - re-exported


@dataclass(frozen=True, slots=True)
class ClassKey:
    path: str
    name: str  # top-level class name

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class FunctionKey:
    path: str
    qualname: str  # "helper" or "Class.method"

    def __str__(self) -> str:
        return self.qualname


class Project:
    """The scanned tree. Parses lazily and caches per process."""

    def __init__(self, files=(), roots=()):
        self.index = ModuleIndex(files)
        self.files = self.index.files
        self.roots = [str(r) for r in roots]
        self._modules: dict[str, ir.Module | None] = {}
        self._hashes: dict[str, str] = {}
        # Told of every question asked of the index (see analyzer.module_index): the
        # analysis records them as dependencies of the file being checked.
        self.on_lookup = None

    def release(self) -> None:
        """Forget every parsed file and everything the analysis derived from them (its
        summaries and tables hold the IR); they are parsed and derived again when asked
        for. The module index, which answers from the files' text, stays (without the
        tokens it kept per text)."""
        self._modules.clear()
        self._hashes.clear()
        self.__dict__.pop("kind_analyzer", None)
        self.on_lookup = None  # the analyzer's recorder, which holds the analyzer
        forget_function_caches()
        forget_texts()

    # ----------------------------------------------------------------- files

    def parse_source(self, path: str, source: str | bytes) -> tuple[ir.Module, bool]:
        """The IR of the file being checked, and whether this process had read another
        text of it before (so results computed from that text are stale).

        A file already parsed as another file's dependency, with the same content, is not
        parsed again: on a whole tree most files are both. Raises `ParseError`."""
        key = _key(path)
        data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
        digest = hashlib.sha256(data).hexdigest()
        known = self._modules.get(key)
        if known is not None and self._hashes.get(key) == digest:
            return known, False
        stale = key in self._modules and self._hashes.get(key) != digest
        module = parse_module(source, path, defer_functions=True)
        self._modules[key] = module
        self._hashes[key] = digest
        return module, stale

    def module(self, path: str, *, defer_methods: bool = True) -> ir.Module | None:
        """The IR of a file read for another file's analysis, parsed once per process. Its
        methods' bodies are parsed when first read (`frontend.deferred_bodies`): such a
        file is read for its classes, signatures and the few methods its users call.
        ``defer_methods=False`` parses them with it, for a file that most files read."""
        path = _key(path)
        if path in self._modules:
            return self._modules[path]
        module = None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            self._hashes[path] = hashlib.sha256(data).hexdigest()
            if len(data) <= 2_000_000:
                module = parse_module(data, path, defer_functions=True, defer_methods=defer_methods)
        except (OSError, ParseError):
            module = None
        self._modules[path] = module
        return module

    def content_hash(self, path: str) -> str | None:
        return self._hashes.get(_key(path))

    # ----------------------------------------------------------------- resolution

    def find_module(self, dotted: str) -> str | None:
        self._asked("module", dotted)
        return self.index.find_module(dotted)

    def keeps_default(self, class_name: str, param: str, position: int) -> bool:
        self._asked("default", f"{class_name}:{param}:{position}")
        return self.index.keeps_default(class_name, param, position)

    def builders(self, class_name: str) -> tuple[str, ...] | None:
        self._asked("builders", class_name)
        return self.index.builders(class_name)

    def deriving(self, class_name: str) -> tuple[str, ...]:
        self._asked("deriving", class_name)
        return self.index.deriving(class_name)

    def called_elsewhere(self, attr: str, holders: tuple[str, ...] | None = None) -> bool:
        holders = tuple(sorted(set(holders))) if holders is not None else None
        self._asked("called-elsewhere", attr + (":" + ",".join(holders) if holders else ""))
        return self.index.called_elsewhere(attr, holders)

    def keeps_forward_default(self, class_name: str, param: str, position: int) -> bool:
        self._asked("forward-default", f"{class_name}:{param}:{position}")
        return self.index.keeps_forward_default(class_name, param, position)

    def package_of(self, path: str) -> str:
        self._asked("package", os.path.abspath(path))
        return self.index.package_of(path)

    def _asked(self, kind: str, argument: str) -> None:
        if self.on_lookup is not None:
            self.on_lookup(lookup_key(kind, argument))

    def resolve_relative(self, path: str, module: str, level: int) -> str:
        if level == 0:
            return module
        package = self.package_of(path).split(".") if self.package_of(path) else []
        if level > 1:
            package = package[: len(package) - (level - 1)]
        return ".".join([*package, module] if module else package)


def _key(path: str) -> str:
    return path if path in ("<stdin>", "<string>") else os.path.abspath(path)
