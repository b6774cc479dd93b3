"""Decoding Python sources, for `# noqa` and the reporters (the engine decodes on its
own)."""

from __future__ import annotations

import io
import tokenize

from analyzer.files import not_regular


def decode_source(data: bytes | str) -> str:
    """The text of a Python source as its encoding declaration says, with undecodable
    bytes replaced (good enough for finding ``# noqa`` and printing a line)."""
    if isinstance(data, str):
        return data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (SyntaxError, LookupError):
        encoding = "utf-8"
    try:
        text = data.decode(encoding, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str) -> str | None:
    if not_regular(path):
        return None
    try:
        with open(path, "rb") as handle:
            return decode_source(handle.read())
    except OSError:
        return None
