"""Which file of the checked tree is which module: import resolution that needs no parse.

Requires: the list of files being checked. Computes: each file's dotted module name (the
package path given by the `__init__.py` files above it), and the answer to the two
questions the analysis asks of the tree:

    find_module(dotted) -> path | None   (`import a.b`, `from a.b import c`)
    package_of(path)    -> dotted        (the package a relative import starts from)

The answers depend on *which* files were named, not only on their contents: `check a.py`
cannot resolve `from models import Net` that `check .` resolves. So each question the
analysis of a file asked is one of that file's dependencies, written as a `lookup_key`,
and a cached result is valid only while every question still gets the same answer
(`answer`). This module imports nothing heavy, so that a warm run can check answers
without loading the engine.
"""

from __future__ import annotations

import io
import os
import re
import tokenize

from analyzer.construction_sites import constructions, keeps_default
from analyzer.forward_call_sites import keeps_forward_default

_IDENTIFIER = re.compile(r"\b[A-Z]\w*")  # class names, as the construction questions ask

# `x.attr(` where x is not a bare `self`, and `getattr(x, "attr")`: see `_attribute_uses`
_OTHER_CALL = re.compile(r"(?<!\bself)\.(\w+)\s*\(")
_GETATTR_NAME = re.compile(r"getattr\([^,()]+,\s*[\"'](\w+)[\"']")

# A lookup key can never be a file path: no path holds a NUL.
_LOOKUP = "\0"


def _without_comments(text: str) -> str:
    """``text`` with its comments blanked (all of it when it does not tokenize)."""
    lines = text.splitlines(keepends=True)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                (row, start), (_, end) = tok.start, tok.end
                lines[row - 1] = lines[row - 1][:start] + " " * (end - start) + lines[row - 1][end:]
    except (tokenize.TokenError, SyntaxError):
        return text
    return "".join(lines)


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


def lookup_key(kind: str, argument: str) -> str:
    """The dependency key of one question (`kind` is "module", "package", "default",
    "forward-default", "builders", "deriving" or "called-elsewhere")."""
    return f"{_LOOKUP}{kind}{_LOOKUP}{argument}"


def is_lookup(key: str) -> bool:
    return key.startswith(_LOOKUP)


def lookup_kind(key: str) -> str:
    """The kind of question a `lookup_key` asks."""
    return key.split(_LOOKUP, 2)[1]


class ModuleIndex:
    def __init__(self, files=()):
        self.files = [os.path.abspath(str(f)) for f in files]
        self._by_module: dict[str, str] = {}
        self._by_suffix: dict[str, list[str]] = {}
        self._constructions: dict[str, list | None] = {}
        # answers that read every file mentioning a class, asked once per forward run
        self._builders: dict[str, tuple[str, ...] | None] = {}
        self._deriving: dict[str, tuple[str, ...]] = {}
        self._packages: dict[str, str] = {}  # path -> `package_of`
        self._file_texts: list[str] = []
        self._identifiers: dict[str, list[int]] | None = None  # identifier -> files holding it
        self._outside_calls: dict[str, list[int]] | None = None  # attr -> files calling it on another object
        for f in self.files:
            name = module_name_for(f)
            self._by_module.setdefault(name, f)
            parts = name.split(".")
            for i in range(len(parts)):
                self._by_suffix.setdefault(".".join(parts[i:]), []).append(f)

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

    def keeps_default(self, class_name: str, param: str, position: int) -> bool:
        """Whether every construction of ``class_name`` in the tree leaves its constructor's
        ``param`` (positional index ``position``) at its default (`construction_sites`)."""
        if class_name not in self._constructions:
            self._constructions[class_name] = constructions(self._mentioning(class_name), class_name)
        return keeps_default(self._constructions[class_name], param, position)

    def keeps_forward_default(self, class_name: str, param: str, position: int) -> bool:
        """Whether every call in the tree of the modules of ``class_name`` leaves its
        forward's ``param`` (positional index ``position``) at its default
        (`forward_call_sites`)."""
        if class_name not in self._constructions:
            self._constructions[class_name] = constructions(self._mentioning(class_name), class_name)
        calls = self._constructions[class_name]
        if not calls or any(attr is None for _, _, attr in calls):
            return False  # without reading every file
        return keeps_forward_default(self._file_texts, calls, param, position)

    def builders(self, class_name: str) -> tuple[str, ...] | None:
        """The files that mention ``class_name``, when every mention of it in the tree is a
        construction (`construction_sites`) or a base of a class; None when some is not."""
        if class_name not in self._builders:
            mentions = self._mentioning(class_name, with_paths=True)
            found = None
            if constructions([text for _, text in mentions], class_name, bases_too=True) is not None:
                found = tuple(sorted(path for path, _ in mentions))
            self._builders[class_name] = found
        return self._builders[class_name]

    def deriving(self, class_name: str) -> tuple[str, ...]:
        """The files with a `class` statement that names ``class_name`` among its bases."""
        if class_name not in self._deriving:
            base = re.compile(r"^\s*class\s+\w+\s*\([^)]*(?<![\w])" + re.escape(class_name) + r"\b", re.M)
            self._deriving[class_name] = tuple(sorted(
                path for path, text in self._mentioning(class_name, with_paths=True) if base.search(text)))
        return self._deriving[class_name]

    def called_elsewhere(self, attr: str, holders: tuple[str, ...] | None = None) -> bool:
        """Whether the tree calls a submodule ``attr`` of anything but `self`
        (`layer.mlp.experts(h)`), or reads it by name (`getattr(m, "experts")`).

        With ``holders`` (the names of the classes whose instances hold the asked module as
        `self.<attr>`, and of that module's class), only such a use in a file that mentions
        one of them counts: an object reaches the module only as an instance of a holder,
        and a file that names none gets one only from elsewhere. That is the semantics of
        a realistic caller: an object built by a generic factory (`AutoModel`), or handed
        in by code that names no holder, is taken as no instance of ours."""
        if self._outside_calls is None:
            self._outside_calls = self._attribute_uses()
        found = self._outside_calls.get(attr, ())
        if holders is None or not found:
            return bool(found)
        return any(self._names_any(i, holders) for i in found)

    def _attribute_uses(self) -> dict[str, list[int]]:
        """attr -> the files that call ``.attr(...)`` on anything but a bare `self`, or read
        it with ``getattr(obj, "attr")``: one pass over the tree answers every attribute,
        where a search per attribute read the whole tree each time (a fifth of a check of
        transformers). Each match is the whole word after the dot, or between the quotes,
        so this is exactly the files a search for one attribute's pattern finds."""
        self._mentioning("")  # reads the tree once
        uses: dict[str, list[int]] = {}
        for i, text in enumerate(self._file_texts):
            for attr in set(_OTHER_CALL.findall(text)) | set(_GETATTR_NAME.findall(text)):
                uses.setdefault(attr, []).append(i)
        return uses

    def _names_any(self, i: int, names: tuple[str, ...]) -> bool:
        """Whether the code of file ``i`` mentions one of the identifiers ``names`` (its
        comments do not: `# Copied from ...Wav2Vec2Model` gives the file no object)."""
        text = self._file_texts[i]
        if not any(i in self._identifiers.get(n, ()) if _IDENTIFIER.fullmatch(n) else n in text for n in names):
            return False  # the common answer, without tokenizing
        code = _without_comments(text)
        return any(re.search(r"\b" + re.escape(n) + r"\b", code) for n in names)

    def _mentioning(self, name: str, with_paths: bool = False) -> list:
        """The texts of the files whose text holds the identifier ``name`` (with their paths
        when ``with_paths``): one pass over the tree builds the index of identifiers, each
        question then reads only those."""
        if self._identifiers is None:
            self._file_texts, self._file_paths, self._identifiers = [], [], {}
            for f in self.files:
                try:
                    with open(f, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                except OSError:
                    continue
                i = len(self._file_texts)
                self._file_texts.append(text)
                self._file_paths.append(f)
                for word in set(_IDENTIFIER.findall(text)):
                    self._identifiers.setdefault(word, []).append(i)
        found = self._identifiers.get(name, ())
        if with_paths:
            return [(self._file_paths[i], self._file_texts[i]) for i in found]
        return [self._file_texts[i] for i in found]

    def read_tree(self) -> None:
        """Build now the tables that the first construction or call question builds
        (every file's text, its identifiers, the attributes called on other objects):
        a process that forks workers builds them once for all of them."""
        self._mentioning("")
        if self._outside_calls is None:
            self._outside_calls = self._attribute_uses()

    def package_of(self, path: str) -> str:
        # asked for every relative import a module scope resolves: each answer walks the
        # directories up to the package's top (half a million `stat`s on transformers)
        known = self._packages.get(path)
        if known is None:
            name = module_name_for(path)
            known = self._packages[path] = name if os.path.basename(path) == "__init__.py" else name.rpartition(".")[0]
        return known

    def answer(self, key: str) -> str:
        """The answer to a `lookup_key` question as a string ("" for no module)."""
        _, kind, argument = key.split(_LOOKUP, 2)
        if kind == "module":
            return self.find_module(argument) or ""
        if kind == "package":
            return self.package_of(argument)
        if kind == "deriving":
            return "\n".join(self.deriving(argument))
        if kind == "called-elsewhere":
            attr, _, holders = argument.partition(":")
            return "yes" if self.called_elsewhere(attr, tuple(holders.split(",")) if holders else None) else ""
        if kind == "builders":
            return "\n".join(self.builders(argument) or ())
        if kind == "default":
            class_name, param, position = argument.split(":")
            return "yes" if self.keeps_default(class_name, param, int(position)) else ""
        if kind == "forward-default":
            class_name, param, position = argument.split(":")
            return "yes" if self.keeps_forward_default(class_name, param, int(position)) else ""
        raise ValueError(f"unknown lookup {kind!r}")
