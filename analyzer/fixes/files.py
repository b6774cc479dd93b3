"""Writing a fix into a user's file, and only when that is safe.

`rewrite(path, planned, new)` replaces the bytes of ``path`` by ``new`` under these
promises (docs/reliability.md):

- **Only the text that was analysed is changed.** The fix was planned on bytes whose
  sha256 is ``planned``; the file is read again under the lock and left alone
  (`CHANGED`) when it is not that text any more: an edit made while the run went on is
  never overwritten, and edits computed for other bytes are never applied.
- **Two runs never interleave.** An advisory lock (``flock``) on the file is held from
  that read to the write. The file is replaced by a new inode, so a run that waited for
  the lock checks that the path still names the inode it locked, and starts again if
  not (it then sees the new text, and stops with `CHANGED`).
- **Atomic, and what the file was stays.** The new text goes to a temporary file in the
  same folder, with the old file's mode, owner (where allowed) and extended attributes
  (ACLs, labels), and is moved over it with ``os.replace``: a write that fails, or a
  run killed at any point, leaves the old text. A symlink is followed: its target is
  fixed and the link kept (the caller decides whether the target may be written).
- **A file with hard links is not written** (`HARD_LINKED`). Every link would have to
  see the fix, and no system call replaces the contents of an inode at once: an
  in-place write cut short by a full disk, ``ulimit -f`` or a kill leaves a file that
  is neither the old text nor the new in every link. ``os.replace`` would instead
  leave the other links silently on the old text.
- **A read-only file is not written** (`READ_ONLY`), even by root.
"""

from __future__ import annotations

import hashlib
import os
import stat

from analyzer.writes import AttributeNotKept, atomic_write_bytes

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, the content check still holds
    fcntl = None

WRITTEN = "written"
CHANGED = "changed since analysis, not fixed"
READ_ONLY = "read-only, not fixed"
UNREADABLE = "cannot be read, not fixed"


def hard_linked(links: int) -> str:
    return (f"has {links} hard links, not fixed: no write can change every link at once "
            "(`untrace check --diff` shows the fix)")


_LOCK_ATTEMPTS = 20


class _Locked:
    """An open descriptor on ``path``'s current inode, with an exclusive lock on it."""

    def __init__(self, path: str):
        self.path = path
        self.fd = -1

    def __enter__(self) -> "_Locked":
        for _ in range(_LOCK_ATTEMPTS):
            fd = os.open(self.path, os.O_RDONLY)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                if _same_file(os.fstat(fd), os.stat(self.path)):
                    self.fd = fd
                    return self
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # replaced while we waited: lock the file the path names now
        raise OSError(f"{self.path} keeps being replaced")

    def read(self) -> bytes:
        chunks = []
        os.lseek(self.fd, 0, os.SEEK_SET)
        while chunk := os.read(self.fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)

    def __exit__(self, *exc) -> None:
        os.close(self.fd)  # closing releases the lock


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def rewrite(path: str, planned: str, new: bytes) -> str:
    """Replace the bytes of ``path`` by ``new`` if their sha256 is still ``planned``;
    returns `WRITTEN` or why not. Raises OSError when writing fails."""
    target = os.path.realpath(path)  # a symlink: fix its target, keep the link
    try:
        info = os.stat(target)
    except OSError:
        return UNREADABLE
    if not stat.S_ISREG(info.st_mode):
        return UNREADABLE
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return READ_ONLY
    try:
        lock = _Locked(target).__enter__()
    except OSError:
        return UNREADABLE
    try:
        if hashlib.sha256(lock.read()).hexdigest() != planned:
            return CHANGED
        info = os.fstat(lock.fd)
        if info.st_nlink > 1:
            return hard_linked(info.st_nlink)
        try:
            atomic_write_bytes(target, new, keep=info, sync=True)
        except AttributeNotKept as error:
            return f"{error.strerror}, not fixed"
        return WRITTEN
    finally:
        lock.__exit__()
