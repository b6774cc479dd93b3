"""What ``untrace`` may open: regular files only.

Opening a named pipe for reading blocks until a writer comes (forever, in pre-commit),
and a device or a socket is not source code either. Every place that reads a file the
user pointed at asks :func:`not_regular` first, which only ``stat``\\s the path.
"""

from __future__ import annotations

import os
import stat

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def not_regular(path: str) -> str | None:
    """What ``path`` is when it exists and is not a regular file ("a named pipe",
    "a socket", ...), else None (a regular file, or nothing there: opening it reports
    that). Symbolic links are followed, as ``open`` would."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def not_regular_message(kind: str) -> str:
    return f"not a regular file ({kind}); not read" if kind != "not a regular file" else "not a regular file; not read"
