"""The content-hash cache that makes re-checking an unchanged tree almost free.

Layout: ``<root>/.untrace_cache/<untrace version>-<analyzer hash>/<key[:2]>/<key>.json``
where ``<analyzer hash>`` is a hash of the source of every module of the ``analyzer``
package (editing a rule or an analysis invalidates everything), and ``<key>`` is the
sha256 of the path as analysed, the target opset and the file's bytes. An entry holds

- the diagnostics of *all* rules for that file, after ``# noqa`` (which depends only on
  the content); select/ignore/per-file-ignores are applied when the entry is read, so
  changing them costs no re-analysis;
- the files the analysis depended on (``deps``, path -> content hash, as returned by
  ``analyze_file``): the entry is valid only while each of them hashes the same.

Writes go to a temporary file and ``os.replace`` it into place, so a concurrent reader
sees either nothing or a whole entry. An entry that cannot be read or parsed is a miss.
Entries of other versions are removed when a new version directory is created.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

from analyzer import __version__
from analyzer.diagnostics import Diagnostic

CACHE_DIR_NAME = ".untrace_cache"
FORMAT = 1


def content_hash(data: bytes) -> str:
    """The hash used for cache keys and for the ``deps`` of ``analyze_file``."""
    return hashlib.sha256(data).hexdigest()


@cache
def analyzer_hash() -> str:
    """A hash of the source of the ``analyzer`` package (rules, analyses, front end)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{__version__}/{FORMAT}".encode())
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith("report/") or rel in ("cli.py", "rules/docgen.py"):
            continue  # presentation only: editing it changes no diagnostic
        try:
            data = path.read_bytes()
        except OSError:
            continue
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:16]


class Cache:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.directory = self.root / f"{__version__}-{analyzer_hash()}"
        self._hashes: dict[str, str | None] = {}
        self._prepared = False

    # -- hashes of files, shared by keys and dependency checks ------------------------
    def remember(self, path: str, data: bytes) -> str:
        digest = content_hash(data)
        self._hashes[os.path.abspath(path)] = digest
        return digest

    def current_hash(self, path: str) -> str | None:
        key = os.path.abspath(path)
        if key not in self._hashes:
            try:
                with open(key, "rb") as handle:
                    self._hashes[key] = content_hash(handle.read())
            except OSError:
                self._hashes[key] = None
        return self._hashes[key]

    # -- entries ----------------------------------------------------------------------
    @staticmethod
    def key(path: str, data: bytes, opset: int | None = None) -> str:
        """The entry of a file's bytes as analysed for a target opset (UT302/UT403
        depend on it; everything else does not, but one key is simpler than two)."""
        digest = hashlib.sha256(path.encode("utf-8", "surrogateescape") + b"\0")
        if opset is not None:
            digest.update(f"opset={opset}\0".encode())
        digest.update(data)
        return digest.hexdigest()

    def _entry_path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Diagnostic] | None:
        """The cached diagnostics, or ``None`` for a miss (absent, corrupt or stale)."""
        try:
            with open(self._entry_path(key), "rb") as handle:
                entry = json.loads(handle.read())
            if entry.get("format") != FORMAT:
                return None
            for dep, digest in entry["deps"].items():
                if self.current_hash(dep) != digest:
                    return None
            return [Diagnostic.from_dict(d) for d in entry["diagnostics"]]
        except FileNotFoundError:
            return None
        except Exception:  # corrupt, truncated, wrong shape: recompute
            return None

    def put(self, key: str, diagnostics: list[Diagnostic], deps: dict[str, str]) -> None:
        entry = {"format": FORMAT, "deps": dict(deps), "diagnostics": [d.to_dict() for d in diagnostics]}
        target = self._entry_path(key)
        try:
            self._prepare()
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, json.dumps(entry, separators=(",", ":")).encode())
        except OSError:
            pass  # a read-only tree still gets checked, just not cached

    def _prepare(self) -> None:
        """Create the cache root (git-ignored, tagged) and drop stale version directories."""
        if self._prepared:
            return
        self._prepared = True
        fresh = not self.directory.exists()
        self.directory.mkdir(parents=True, exist_ok=True)
        gitignore = self.root / ".gitignore"
        if not gitignore.exists():
            atomic_write_bytes(gitignore, b"# Automatically created by untrace.\n*\n")
        tag = self.root / "CACHEDIR.TAG"
        if not tag.exists():
            atomic_write_bytes(
                tag,
                b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by untrace.\n",
            )
        if fresh:
            for sibling in self.root.iterdir():
                if sibling.is_dir() and sibling != self.directory:
                    shutil.rmtree(sibling, ignore_errors=True)


def atomic_write_bytes(path: Path | str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``, so readers never see a partial file."""
    path = Path(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777  # keep the mode of the file replaced
        except OSError:
            mode = 0o666 & ~_umask()
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
