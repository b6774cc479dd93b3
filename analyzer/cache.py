"""The content-hash cache that makes re-checking an unchanged tree almost free.

Layout: ``<root>/<untrace version>-<analyzer hash>/<key[:2]>/<key>.json``, where
``<root>`` is ``.untrace_cache`` next to the configuration or the ``--cache-dir``,
``<analyzer hash>`` is a hash of the source of every module of the ``analyzer`` package
(editing a rule or an analysis invalidates everything), and ``<key>`` is the sha256 of
the path as analysed, the target opset and the file's bytes. An entry holds

- the diagnostics of *all* rules for that file, after ``# noqa`` (which depends only on
  the content); select/ignore/per-file-ignores are applied when the entry is read, so
  changing them costs no re-analysis;
- what the analysis depended on (``deps``, as returned by ``analyze_file``): other files
  (path -> content hash) and the questions asked of the module index (which file is
  module ``a.b``; see ``analyzer.module_index``), whose answers depend on which files
  were named. The entry is valid only while every file hashes the same and every
  question gets the same answer from this run's files, so a cached run reports exactly
  what a run without the cache would, whatever ran before.

The cache owns only what it made. The root is used only when it is new, empty, or holds
nothing but what untrace writes there (``CACHEDIR.TAG``, its ``.gitignore``, version
folders); anything else is a ``CacheError`` before any file is checked, and nothing is
deleted. A ``.gitignore`` holding ``*`` is written only into a root untrace created. A
stale version folder is removed only when its name has our pattern *and* it holds the
marker file written when it was made.

Writes go to a temporary file and ``os.replace`` it into place, so a concurrent reader
sees either nothing or a whole entry. An entry that cannot be read or parsed is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path

from analyzer import __version__, interrupts
from analyzer.config import ConfigError
from analyzer.diagnostics import Diagnostic
from analyzer.module_index import ModuleIndex, is_lookup, lookup_kind

CACHE_DIR_NAME = ".untrace_cache"
FORMAT = 2
# The answers of the module index's questions that read the files' text, kept for the
# next run over the same files (see Cache._fingerprint).
ANSWERS_FILE = "answers.json"
TEXT_QUESTIONS = frozenset({"default", "forward-default", "builders", "deriving", "called-elsewhere"})

CACHEDIR_TAG = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# This file is a cache directory tag created by untrace.\n"
)
GITIGNORE = b"# Automatically created by untrace.\n*\n"
# Written into each version folder when it is made: what makes a folder ours to delete.
VERSION_MARKER = ".untrace-cache-version"
_VERSION_NAME = re.compile(r"\d+\.\d+[^/\\]*-[0-9a-f]{16}")
# What `atomic_write_bytes` leaves for an instant (or after a crash) beside a file.
_TEMPORARY = re.compile(r"\.(CACHEDIR\.TAG|\.gitignore)\..+\.tmp")


class CacheError(ConfigError):
    """A cache directory untrace will not use: a usage error, reported before any work."""


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
        if rel.startswith("report/") or rel in ("cli.py", "check_command.py", "commands.py", "rules/docgen.py"):
            continue  # presentation only: editing it changes no diagnostic
        try:
            data = path.read_bytes()
        except OSError:
            continue
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:16]


class Cache:
    def __init__(self, root: Path | str, files=()):
        self.root = Path(root)
        self.directory = self.root / f"{__version__}-{analyzer_hash()}"
        self._files = list(files)
        self._index: ModuleIndex | None = None
        self._hashes: dict[str, str | None] = {}
        self._known_answers: dict[str, str] | None = None  # read on first need (`_answers`)
        self._answers_fingerprint: str | None = None
        self._new_answers: dict[str, str] = {}
        self._prepared = False
        self._check_root()

    def _check_root(self) -> None:
        """Refuse a root that holds anything untrace did not make (see the module doc)."""
        if not os.path.lexists(self.root):
            return
        if self.root.is_symlink():
            raise CacheError(f"cache directory {self.root} is a symlink; name the folder it points to, "
                             "or a new or empty folder")
        if not self.root.is_dir():
            raise CacheError(f"cache directory {self.root} is not a directory; name a new or empty folder")
        try:
            names = sorted(os.listdir(self.root))
        except OSError as error:
            raise CacheError(f"cannot read cache directory {self.root}: {error.strerror or error}") from None
        foreign = [name for name in names if not self._ours(name)]
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise CacheError(
                f"cache directory {self.root} holds files untrace did not make ({shown}); "
                "name a new or empty folder for the cache (nothing was changed)"
            )

    def _ours(self, name: str) -> bool:
        path = self.root / name
        if name == "CACHEDIR.TAG" or name == ".gitignore":
            return _holds(path, CACHEDIR_TAG if name == "CACHEDIR.TAG" else GITIGNORE)
        if _VERSION_NAME.fullmatch(name):
            return path.is_dir() and not path.is_symlink()
        return bool(_TEMPORARY.fullmatch(name)) and path.is_file()

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

    def _current(self, dep: str) -> str | None:
        """What a dependency is now: a file's hash, or a module question's answer from
        this run's files."""
        if is_lookup(dep):
            text_question = lookup_kind(dep) in TEXT_QUESTIONS
            if text_question:
                known = self._answers().get(dep)
                if known is not None:
                    return known
            if self._index is None:
                self._index = ModuleIndex(self._files)
            answer = self._index.answer(dep)
            if text_question:
                self._new_answers[dep] = answer
            return answer
        return self.current_hash(dep)

    # -- answers of the questions read from the tree's text ----------------------------
    # A warm run re-asks every question its entries depend on; those that read the
    # tree's text (which class builds which, with what) cost a second on timm. Their
    # answers depend on nothing but which files were named and what each holds, so they
    # are kept under the fingerprint of exactly that (`_fingerprint`) and given back
    # only to a run with the same one.
    def _fingerprint(self) -> str:
        digest = hashlib.sha256(f"{len(self._files)}\0".encode())
        for path in sorted(os.path.abspath(f) for f in self._files):
            digest.update(f"{path}\0{self.current_hash(path) or '-'}\0".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def _answers(self) -> dict[str, str]:
        if self._known_answers is None:
            self._known_answers = {}
            self._answers_fingerprint = self._fingerprint()
            try:
                with open(self.directory / ANSWERS_FILE, "rb") as handle:
                    stored = json.loads(handle.read())
                if stored.get("format") == FORMAT and stored.get("fingerprint") == self._answers_fingerprint:
                    self._known_answers = {str(k): str(v) for k, v in stored["answers"].items()}
            except Exception:  # absent, corrupt, wrong shape: every answer is computed
                pass
        return self._known_answers

    def save_answers(self) -> None:
        """Keep this run's text answers for the next run over the same files (nothing is
        kept when a file changed while this run read it)."""
        if not self._new_answers:
            return
        fingerprint = self._fingerprint()
        answers = dict(self._known_answers or {})
        if self._answers_fingerprint is not None and self._answers_fingerprint != fingerprint:
            return
        answers.update(self._new_answers)
        entry = {"format": FORMAT, "fingerprint": fingerprint, "answers": answers}
        try:
            self._prepare()
            atomic_write_bytes(self.directory / ANSWERS_FILE, json.dumps(entry, separators=(",", ":")).encode())
        except OSError:
            pass

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
            for dep, expected in entry["deps"].items():
                if self._current(dep) != expected:
                    return None
            return [Diagnostic.from_dict(d) for d in entry["diagnostics"]]
        except FileNotFoundError:
            return None
        except Exception:  # corrupt, truncated, wrong shape: recompute
            return None

    def put(self, key: str, diagnostics: list[Diagnostic], deps: dict[str, str]) -> None:
        entry = {"format": FORMAT, "deps": dict(deps), "diagnostics": [d.to_dict() for d in diagnostics]}
        self._new_answers.update((dep, answer) for dep, answer in deps.items()
                                 if is_lookup(dep) and lookup_kind(dep) in TEXT_QUESTIONS)
        target = self._entry_path(key)
        try:
            self._prepare()
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, json.dumps(entry, separators=(",", ":")).encode())
        except OSError:
            pass  # a read-only tree still gets checked, just not cached

    def _prepare(self) -> None:
        """Create the root (tagged; git-ignored only when untrace made it) and this
        version's folder, and drop the stale version folders untrace made."""
        if self._prepared:
            return
        self._prepared = True
        try:
            self.root.mkdir(parents=True)
            created = True
        except FileExistsError:
            created = False
        if created:
            atomic_write_bytes(self.root / ".gitignore", GITIGNORE)
        if not (self.root / "CACHEDIR.TAG").exists():
            atomic_write_bytes(self.root / "CACHEDIR.TAG", CACHEDIR_TAG)
        try:
            self.directory.mkdir()
        except FileExistsError:
            return
        atomic_write_bytes(self.directory / VERSION_MARKER, _marker_text(self.directory.name))
        for sibling in self.root.iterdir():
            if sibling != self.directory and _is_our_version_folder(sibling):
                shutil.rmtree(sibling, ignore_errors=True)


def _marker_text(name: str) -> bytes:
    return f"untrace cache {name}\n".encode()


def _is_our_version_folder(path: Path) -> bool:
    """A folder untrace made for another version: our name pattern and our marker."""
    if not _VERSION_NAME.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
        return False
    marker = path / VERSION_MARKER
    return not marker.is_symlink() and _holds(marker, _marker_text(path.name))


def _holds(path: Path, expected: bytes) -> bool:
    """Whether ``path`` is a regular file with exactly ``expected`` in it."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size != len(expected):
            return False
        return path.read_bytes() == expected
    except OSError:
        return False


def atomic_write_bytes(path: Path | str, data: bytes, mode: int | None = None,
                       owner: tuple[int, int] | None = None, sync: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``, so readers never see a partial file. The file gets ``mode`` (default:
    the mode of the file replaced, else what ``open`` would give under the umask) and,
    where the platform allows, ``owner`` (uid, gid). ``sync`` makes the data durable
    before the rename (for a user's files; cache entries can be recomputed)."""
    path = Path(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777  # keep the mode of the file replaced
        except OSError:
            mode = 0o666 & ~_umask()
    # Ctrl-C or SIGTERM is held while the file is written: the new file is whole, or
    # nothing is written (not started after the signal), and no temporary file is left
    # behind. Only SIGKILL can leave one (``.NAME.*.tmp``).
    with interrupts.deferred():
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if sync:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            if owner is not None and hasattr(os, "chown"):
                _chown(temporary, owner)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise


def _chown(path: str, owner: tuple[int, int]) -> None:
    current = os.stat(path)
    if (current.st_uid, current.st_gid) == owner:
        return
    try:
        os.chown(path, *owner)
    except OSError:
        pass  # not ours to give away (not root): the file keeps its writer as owner


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
