"""Which files ``untrace check`` reads.

Directories are walked recursively for ``*.py``, ``*.pyi`` and ``*.ipynb`` files (ruff's
default includes). A path is skipped when it matches
the excludes (ruff's default list, replaced by ``exclude`` and extended by
``extend-exclude``, gitignore-style globs relative to the configuration's directory) or
a ``.gitignore`` on the way down (nested ones too, the deepest deciding, as git does).
A file named on the command line is always checked, as in ruff, unless
``force_exclude`` (what the pre-commit hook uses, since pre-commit names every file).
``-`` stands for standard input. Directory symlinks are not followed (no cycles).
A walked entry with a source suffix is collected whatever it is (a named pipe, a broken
symlink): the checker reports what it cannot read, it is never skipped without a word.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from analyzer.config import Config, ConfigError
from analyzer.files import not_regular

# ruff's defaults, plus our own cache.
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".untrace_cache",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

STDIN = "-"

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")  # what a directory walk collects (ruff's default includes)


@dataclass(frozen=True)
class Discovered:
    files: list[str]  # paths as the user spelled them (joined for walked directories)
    stdin: bool  # "-" was among the paths
    # (directory, reason) for each directory below a named one that could not be listed:
    # what it holds was not checked, so the run is not clean
    unreadable: tuple[tuple[str, str], ...] = ()
    # the .gitignore files read to decide what to check, and those that govern the files
    # named: inputs of the run, which an output may not overwrite
    ignore_files: tuple[str, ...] = ()
    # walked file symlink -> its target, for each link whose target lies outside every
    # folder named: checked, but --fix writes only inside the folders named (or a file
    # named itself)
    links_out: dict[str, str] = field(default_factory=dict)


class Excluder:
    """Decides whether a path is excluded by the config globs or by a ``.gitignore``."""

    def __init__(self, config: Config, root: Path | None = None, git_top: Path | None = None):
        # `root` anchors the exclude globs; `git_top` is the outermost directory whose
        # .gitignore counts (default: the repository root). Both are set to a directory
        # that is itself excluded but was named on the command line, so that what lies
        # below it is judged on its own, as ruff does.
        self.config = config
        self.root = (root or config.root).absolute()
        self.git_top = git_top
        patterns = list(DEFAULT_EXCLUDE if config.exclude is None else config.exclude)
        patterns += config.extend_exclude
        try:
            self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        except Exception as error:  # pathspec raises several kinds for bad patterns
            raise ConfigError(f"{config.path or 'configuration'}: invalid exclude pattern: {error}") from None
        self._gitignores: dict[Path, pathspec.GitIgnoreSpec | None] = {}
        self.read: list[str] = []  # the .gitignore files read, in order
        self._chains: dict[Path, tuple[Path, ...]] = {}

    def _relative(self, path: Path) -> str | None:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def excluded_by_config(self, path: Path, is_dir: bool) -> bool:
        rel = self._relative(path)
        if rel == ".":
            return False
        if rel is None:
            # outside the project: the basename still matches "build", ".venv", ...
            rel = path.name
        if not rel:
            return False
        return self.spec.match_file(rel + "/" if is_dir else rel)

    def _gitignore(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._gitignores:
            spec = None
            try:
                if not_regular(str(directory / ".gitignore")):
                    raise OSError("not a regular file")  # a FIFO would block the walk
                lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
                self.read.append(str(directory / ".gitignore"))
                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            except OSError:
                pass
            except Exception:
                spec = None  # an unparsable .gitignore is git's problem, not a reason to stop
            self._gitignores[directory] = spec
        return self._gitignores[directory]

    def ignored_by_git(self, path: Path, is_dir: bool) -> bool:
        """Whether a ``.gitignore`` in a parent of ``path`` (up to the repository root)
        ignores it; the deepest file with a matching pattern decides."""
        decision = None
        for directory in self._chain(path.parent):
            spec = self._gitignore(directory)
            if spec is None:
                continue
            rel = path.relative_to(directory).as_posix()
            result = spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                decision = result.include
        return bool(decision)

    def _chain(self, directory: Path) -> tuple[Path, ...]:
        """``directory`` and its parents up to the repository root, outermost first."""
        chain = self._chains.get(directory)
        if chain is None:
            parent = directory.parent
            if parent == directory or directory == self.git_top or os.path.exists(directory / ".git"):
                chain = (directory,)
            else:
                chain = self._chain(parent) + (directory,)
            self._chains[directory] = chain
        return chain


def discover(paths: Sequence[str], config: Config, *, force_exclude: bool = False) -> Discovered:
    """The Python files under ``paths``; raises :class:`ConfigError` for a missing path."""
    excluder = Excluder(config)
    walkers = [excluder]
    walked: list[str] = []  # files found in a walk (not named themselves)
    roots: list[str] = []  # the folders named, resolved
    named: set[Path] = set()  # the files named
    files: list[str] = []
    seen: set[Path] = set()
    unreadable: list[tuple[str, str]] = []
    stdin = False
    for raw in paths or ["."]:
        if raw == STDIN:
            stdin = True
            continue
        absolute = Path(os.path.abspath(raw))
        try:
            is_dir = stat.S_ISDIR(os.stat(raw).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            if not os.path.islink(raw):
                raise ConfigError(f"path does not exist: {raw}") from None
            is_dir = False  # a broken symlink: reading it reports that
        except OSError:
            is_dir = False  # e.g. in a directory without search permission: reading it reports that
        if is_dir:
            # A directory named explicitly is walked even if excluded itself (ruff does
            # the same), unless --force-exclude; what is below it is filtered.
            walker = excluder
            if _excluded(excluder, absolute, True):
                if force_exclude:
                    continue
                walker = Excluder(config, root=absolute, git_top=absolute)
                walkers.append(walker)
            roots.append(os.path.realpath(raw))
            for found in _walk(raw, absolute, walker, unreadable):
                key = Path(os.path.abspath(found))
                if key not in seen:
                    seen.add(key)
                    files.append(found)
                    walked.append(found)
        else:
            if force_exclude and _excluded(excluder, absolute, False):
                continue
            named.add(absolute)
            if absolute not in seen:
                seen.add(absolute)
                files.append(raw)
    ignore_files = [read for walker in walkers for read in walker.read]
    # and the .gitignore files that govern the files named, read or not (without
    # --force-exclude a named file is not matched against them): they are the walk's
    # configuration, which an output may not overwrite
    for folder in sorted({Path(os.path.abspath(f)).parent for f in files}):
        ignore_files += [str(d / ".gitignore") for d in excluder._chain(folder) if os.path.lexists(d / ".gitignore")]
    links_out = {}
    for path in walked:
        if os.path.islink(path) and Path(os.path.abspath(path)) not in named:
            target = os.path.realpath(path)
            if not any(_inside(target, root) for root in roots):
                links_out[path] = target
    return Discovered(files=sorted(files, key=_sort_key), stdin=stdin, unreadable=tuple(unreadable),
                      ignore_files=tuple(dict.fromkeys(ignore_files)), links_out=links_out)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _sort_key(path: str) -> tuple:
    return tuple(Path(path).parts)


def _excluded(excluder: Excluder, absolute: Path, is_dir: bool) -> bool:
    if excluder.excluded_by_config(absolute, is_dir):
        return True
    # any excluded parent excludes the path too
    for parent in absolute.parents:
        if excluder._relative(parent) in (None, "."):
            break
        if excluder.excluded_by_config(parent, True):
            return True
    return excluder.ignored_by_git(absolute, is_dir)


def _walk(top: str | Path, absolute_top: Path, excluder: Excluder, unreadable: list[tuple[str, str]]) -> Iterable[str]:
    """Files under ``top`` (spelled as the user did), pruning excluded directories. A
    directory below ``top`` that cannot be listed is added to ``unreadable``; ``top``
    itself raises :class:`ConfigError`."""
    stack = [(str(top), absolute_top)]
    while stack:
        directory, absolute = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            continue  # vanished since its parent was listed: nothing to check there
        except OSError as error:
            reason = error.strerror or type(error).__name__
            if absolute == absolute_top:
                raise ConfigError(f"cannot read directory {_clean(directory)}: {reason}") from None
            unreadable.append((_clean(directory), reason))
            continue
        subdirs = []
        for entry in entries:
            entry_abs = absolute / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if excluder.excluded_by_config(entry_abs, True) or excluder.ignored_by_git(entry_abs, True):
                    continue
                subdirs.append((os.path.join(directory, entry.name), entry_abs))
            elif entry.name.endswith(SOURCE_SUFFIXES):
                # Whatever it is (a regular file, a FIFO, a broken symlink): the checker
                # reports what it cannot read rather than skip it without a word. A
                # symlink to a directory is a directory, and those are not followed.
                if _links_to_directory(entry):
                    continue
                if excluder.excluded_by_config(entry_abs, False) or excluder.ignored_by_git(entry_abs, False):
                    continue
                yield _clean(os.path.join(directory, entry.name))
        stack.extend(reversed(subdirs))


def _links_to_directory(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink() and entry.is_dir()
    except OSError:
        return False


def _clean(path: str) -> str:
    """``./a/b.py`` -> ``a/b.py``, as ruff prints paths."""
    return os.path.normpath(path)
