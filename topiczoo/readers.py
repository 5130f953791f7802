"""File readers: vocabulary files and the ``LABEL WORD_ID:COUNT`` format."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .text import _check_unique

__all__ = ["read_vocabulary"]

def read_vocabulary(path: str | os.PathLike) -> tuple[str, ...]:
    """Read a vocabulary file (line ``i`` is word ``i``) into a ``tuple[str, ...]`` of length ``V``.

    A final newline is allowed; blank lines inside the file and duplicate words are errors.
    """
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab = tuple(line.rstrip("\r") for line in lines)
    for i, w in enumerate(vocab):
        if not w.strip():
            raise ValueError(f"{path}: line {i + 1}: blank vocabulary entry")
    _check_unique(vocab, str(path))
    return vocab



_LINE_RE = re.compile(r"\s*\S+(?:[ \t]+\d+:\d+)*[ \t]*")


def _split_head(line: str) -> tuple[str, str]:
    parts = line.strip().split(None, 1)
    return parts[0], (parts[1] if len(parts) > 1 else "")


def _diagnose(line: str) -> str:
    parts = line.split()
    if not parts:
        return "blank line (expected 'LABEL WORD_ID:COUNT ...')"
    for tok in parts[1:]:
        a, sep, b = tok.partition(":")
        if not sep:
            return f"token {tok!r} is not WORD_ID:COUNT"
        if not a.isdigit():
            return f"token {tok!r}: word id {a!r} is not a nonnegative integer"
        if not b.isdigit():
            return f"token {tok!r}: count {b!r} is not a nonnegative integer"
    return f"cannot parse line {line[:80]!r} (expected 'LABEL WORD_ID:COUNT ...')"

