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

from analyzer.frontend import ParseError, ir, parse_module


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


def module_name_for(path: str) -> str:
    """Dotted module name of a file from the `__init__.py` files above it."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
        if not package:
            break
    return ".".join(parts)


class Project:
    """The scanned tree. Parses lazily and caches per process."""

    def __init__(self, files=(), roots=()):
        self.files = [os.path.abspath(str(f)) for f in files]
        self.roots = [str(r) for r in roots]
        self._by_module: dict[str, str] = {}
        self._by_suffix: dict[str, list[str]] = {}
        for f in self.files:
            name = module_name_for(f)
            self._by_module.setdefault(name, f)
            parts = name.split(".")
            for i in range(len(parts)):
                self._by_suffix.setdefault(".".join(parts[i:]), []).append(f)
        self._modules: dict[str, ir.Module | None] = {}
        self._hashes: dict[str, str] = {}

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
        module = parse_module(source, path)
        self._modules[key] = module
        self._hashes[key] = digest
        return module, stale

    def module(self, path: str) -> ir.Module | None:
        path = _key(path)
        if path in self._modules:
            return self._modules[path]
        module = None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            self._hashes[path] = hashlib.sha256(data).hexdigest()
            if len(data) <= 2_000_000:
                module = parse_module(data, path)
        except (OSError, ParseError):
            module = None
        self._modules[path] = module
        return module

    def content_hash(self, path: str) -> str | None:
        return self._hashes.get(_key(path))

    # ----------------------------------------------------------------- resolution

    def find_module(self, dotted: str) -> str | None:
        """File of a module by its dotted name; falls back to the longest suffix that is
        unique in the tree (so `corpora.multi_file.blocks` finds `multi_file/blocks.py`
        when `corpora/` itself is not a package)."""
        if dotted in self._by_module:
            return self._by_module[dotted]
        parts = dotted.split(".")
        for i in range(len(parts)):
            candidates = self._by_suffix.get(".".join(parts[i:]), [])
            if len(candidates) == 1:
                return candidates[0]
        return None

    def package_of(self, path: str) -> str:
        name = module_name_for(path)
        if os.path.basename(path) == "__init__.py":
            return name
        return name.rpartition(".")[0]

    def resolve_relative(self, path: str, module: str, level: int) -> str:
        if level == 0:
            return module
        package = self.package_of(path).split(".") if self.package_of(path) else []
        if level > 1:
            package = package[: len(package) - (level - 1)]
        return ".".join([*package, module] if module else package)


def _key(path: str) -> str:
    return path if path in ("<stdin>", "<string>") else os.path.abspath(path)
