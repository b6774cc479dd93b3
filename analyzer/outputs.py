"""Where a command may write its output, and how: checked before any work starts, so
that a run never ends with a half-written report, nor writes over a file the user gave
it to read (a checked file, the configuration, a ``.gitignore``).

    output_problem("-o", "report.json", {"the checked file": ["model.py"]}) -> str | None
    write_output("report.json", data)

An output goes where a shell redirection (``> PATH``) would put it: through a symlink to
its target, into a named pipe or a device as a stream. Only a regular file, or a new
one, is replaced, and that atomically (`analyzer.writes`): a reader, or the user after a
failed write, sees the old file or the whole new one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

from analyzer.writes import atomic_write_bytes


def output_problem(flag: str, path: str, inputs: Mapping[str, Iterable[str]] = {}) -> str | None:
    """Why ``path`` cannot be the output of ``flag`` (one line), or None. ``inputs`` maps
    a description ("the TARGET file") to the paths it stands for: an output may not be
    one of them, since writing it would destroy what was read."""
    if not path:
        return f"{flag}: the file name is empty"
    try:
        mode = os.stat(path).st_mode  # through symlinks, as a redirection opens it
    except OSError:
        # a new file, or a symlink to one: its folder must exist
        written = os.path.dirname(path) or "."
        folder = os.path.dirname(os.path.realpath(path)) if os.path.islink(path) else written
        if not os.path.exists(folder):
            return f"{flag} {path}: folder {folder} does not exist"
        if not os.path.isdir(folder):
            return f"{flag} {path}: {folder} is not a folder"
        return None
    if stat.S_ISDIR(mode):
        return f"{flag} {path}: is a folder; name the file to write"
    if stat.S_ISSOCK(mode):
        return f"{flag} {path}: is a socket, which cannot be written as a file"
    for what, paths in inputs.items():
        for given in paths:
            if given and _same_file(path, given):
                return f"{flag} {path}: is {what}, which writing would destroy"
    return None


def write_output(path: str, data: bytes) -> None:
    """Write ``data`` to what ``path`` names. Raises OSError when that fails; a regular
    file is then left as it was."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        # new; through a dangling symlink, the file it names is made and the link kept
        atomic_write_bytes(os.path.realpath(path), data)
        return
    if stat.S_ISREG(mode):
        # replaced whole, where it lies; it keeps its mode, owner and extended attributes
        target = os.path.realpath(path)
        atomic_write_bytes(target, data, keep=os.stat(target))
        return
    # A named pipe or a device (`-o /dev/null`, `-o /dev/stdout`, a FIFO a reader waits
    # on): written into, as `>` does, never replaced by a regular file. Opened by the
    # name given: /dev/stdout resolves only inside the kernel.
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
