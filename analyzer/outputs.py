"""Where a command may write its output: checked before any work starts, so that a run
never ends with a half-written report, nor writes over a file the user gave it to read.

    output_problem("-o", "report.json", {"the checked file": "model.py"}) -> str | None
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping


def output_problem(flag: str, path: str, inputs: Mapping[str, Iterable[str]] = {}) -> str | None:
    """Why ``path`` cannot be the output of ``flag`` (one line), or None. ``inputs`` maps
    a description ("the TARGET file") to the paths it stands for: an output may not be
    one of them, since writing it would destroy what was read."""
    if not path:
        return f"{flag}: the file name is empty"
    if os.path.isdir(path):
        return f"{flag} {path}: is a folder; name the file to write"
    folder = os.path.dirname(path) or "."
    if not os.path.exists(folder):
        return f"{flag} {path}: folder {folder} does not exist"
    if not os.path.isdir(folder):
        return f"{flag} {path}: {folder} is not a folder"
    if os.path.exists(path):
        for what, paths in inputs.items():
            for given in paths:
                if given and os.path.exists(given) and os.path.samefile(path, given):
                    return f"{flag} {path}: is {what}, which writing would destroy"
    return None
