"""Writing a file so that every reader sees either the old bytes or the new ones.

    atomic_write_bytes(path, data, keep=os.stat(path), sync=True)

The data goes to a temporary file in the same folder, which gets the metadata of the
file it replaces (mode, owner where allowed, extended attributes, and with them POSIX
ACLs and SELinux labels), and is then moved over it with ``os.replace``. A write that
fails at any step (a full disk, ``ulimit -f``, an attribute the filesystem refuses)
removes the temporary file and leaves the old one as it was.

The temporary file is named ``.NAME.<random>.tmp`` (`TEMPORARY_NAME`). Ctrl-C and
SIGTERM wait until the write is done (`analyzer.interrupts.deferred`); a run killed with
SIGKILL between creating and renaming the file leaves it behind, and nothing else.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from analyzer import interrupts

# What `atomic_write_bytes` leaves beside NAME for an instant, or after a SIGKILL.
TEMPORARY_NAME = re.compile(r"\.(?P<name>.+)\.[A-Za-z0-9_]+\.tmp")


class AttributeNotKept(OSError):
    """An extended attribute of the file replaced could not be given to the new one: the
    write is abandoned rather than drop it (an ACL or a label is part of the file)."""


def atomic_write_bytes(path: Path | str, data: bytes, mode: int | None = None,
                       owner: tuple[int, int] | None = None, sync: bool = False,
                       keep: os.stat_result | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and
    ``os.replace``, so readers never see a partial file.

    The new file gets ``mode`` (default: the mode of the file replaced, else what
    ``open`` would give under the umask) and, where the platform allows, ``owner``
    (uid, gid). With ``keep`` (the ``stat`` of the file replaced), it gets that file's
    mode, owner and extended attributes, or is not written at all (`AttributeNotKept`).
    ``sync`` makes the data durable before the rename (for a user's files; cache
    entries can be recomputed)."""
    path = Path(path)
    if keep is not None:
        mode, owner = stat.S_IMODE(keep.st_mode), (keep.st_uid, keep.st_gid)
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
            # chown first: a change of owner clears the set-user-ID and set-group-ID bits
            if owner is not None and hasattr(os, "chown"):
                _chown(temporary, owner)
            os.chmod(temporary, mode)
            if keep is not None:
                copy_extended_attributes(str(path), temporary)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise


def copy_extended_attributes(source: str, target: str) -> None:
    """Give ``target`` every extended attribute of ``source`` (``user.*``, and the
    ``system.posix_acl_*`` ACLs and ``security.*`` labels the user could set). Raises
    `AttributeNotKept` naming the first one that cannot be set."""
    if not hasattr(os, "listxattr"):
        return  # no extended attributes on this platform
    try:
        names = os.listxattr(source)
    except OSError as error:
        if error.errno in _UNSUPPORTED:
            return  # the filesystem has none
        raise
    for name in names:
        value = os.getxattr(source, name)
        try:
            if os.getxattr(target, name) == value:
                continue  # inherited (a default ACL of the folder) or set by the system
        except OSError:
            pass  # the new file has none of that name
        try:
            os.setxattr(target, name, value)
        except OSError as error:
            raise AttributeNotKept(error.errno, f"its extended attribute {name} cannot be kept "
                                                f"({error.strerror or error})") from None


# What listxattr raises on a filesystem without extended attributes.
_UNSUPPORTED = {errno.ENOTSUP, errno.EOPNOTSUPP}


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


