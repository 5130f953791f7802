"""File readers: UTF-8 text, vocabulary files and the ``LABEL WORD_ID:COUNT`` format.

The readers check what only the file can tell (its encoding, its line syntax) and name the
file and line of every problem; the facts about the parsed corpus (word ids inside the
vocabulary, class ids, finite ratings) are checked once, by :class:`~topiczoo.corpus.Corpus`,
and :func:`naming_lines` turns the document of such an error into the file and line.

Files are UTF-8 (a leading byte-order mark is ignored); lines end in ``\\n`` (a ``\\r``
before it is dropped) and a final newline is optional. Numbers in the counts format are
ASCII digits ``0-9``: other Unicode digits (``"٣"``), underscores (``"1_000"``) and
non-breaking spaces are errors naming the line.
"""

from __future__ import annotations

import os
import re
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from .errors import InputError, InputTypeError
from .text import CheckedVocabulary, check_vocabulary, is_choice

__all__ = ["MAX_TOKENS", "naming_lines", "read_labeled_counts", "read_lines", "read_text", "read_vocabulary"]

#: the most tokens a corpus may hold: the samplers index tokens with int32
MAX_TOKENS = 2**31 - 1

# one document: LABEL then WORD_ID:COUNT pairs separated by spaces or tabs (ASCII digits only)
_LINE_RE = re.compile(r"[ \t]*\S+(?:[ \t]+[0-9]+:[0-9]+)*[ \t]*")
_CLASS_ID_RE = re.compile(r"[-+]?[0-9]+")
_RATING_RE = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_TOO_LONG_NUMBER = re.compile(r"[0-9]{19,}")  # more than int64 holds


def _check_path(path, what: str = "path") -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"{what} must be a file path (str or os.PathLike), got {type(path).__name__}")
    return Path(path)


def read_text(path: str | os.PathLike) -> str:
    """The contents of a UTF-8 text file (a leading byte-order mark is dropped).

    A file that cannot be read (missing, a folder, no permission) raises :class:`InputError`
    naming it and the reason; bytes that are not UTF-8 name the file, line and byte.
    """
    path = _check_path(path)
    try:
        data = path.read_bytes()
    except OSError as err:  # missing, a folder, unreadable: one clear error naming the path
        raise InputError(f"{path}: cannot read the file ({err.strerror or err})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise InputError(
            f"{path}: line {line}: the byte 0x{data[err.start]:02x} (byte {column} of the line) "
            "is not UTF-8; the file must be UTF-8 text"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a UTF-8 text file (split on ``\\n`` only, ``\\r`` dropped, a final newline allowed)."""
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_vocabulary(path: str | os.PathLike) -> CheckedVocabulary:
    """Read a vocabulary file (line ``i`` is word ``i``) into a tuple of ``V`` distinct str.

    A file whose every line is ``WORD COUNT`` (whitespace, then a whole number: the word and
    its frequency, as many tools write it) gives the words of its first column. Blank lines at
    the end are ignored (they shift no id). Blank lines elsewhere, words with leading or
    trailing whitespace and repeated words are errors naming the line(s). Returns a
    :class:`~topiczoo.text.CheckedVocabulary` (a tuple).
    """
    path = _check_path(path)
    vocab = read_lines(path)
    while vocab and not vocab[-1].strip():
        vocab.pop()
    if not vocab:
        raise InputError(f"{path}: the vocabulary file is empty")
    for i, w in enumerate(vocab):
        if not w.strip():
            raise InputError(f"{path}: line {i + 1}: blank vocabulary entry")
        if w != w.strip():
            raise InputError(f"{path}: line {i + 1}: the word {w!r} has leading or trailing whitespace")
    columns = [w.split() for w in vocab]
    if all(len(c) == 2 and c[1].isascii() and c[1].isdigit() for c in columns):
        vocab = [c[0] for c in columns]
    return check_vocabulary(vocab, str(path), positions=lambda i, j: f"lines {i + 1} and {j + 1}")


def _char_name(ch: str) -> str:
    return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed character')})"


def _diagnose(line: str) -> str:
    """Why a line does not match ``LABEL WORD_ID:COUNT ...`` (the first problem found)."""
    for col, ch in enumerate(line):
        if ch.isspace() and ch not in " \t":
            return f"the character {_char_name(ch)} at column {col + 1} separates fields; use spaces or tabs"
    parts = line.strip(" \t").split()
    if not parts:
        return "blank line (expected 'LABEL WORD_ID:COUNT ...')"
    for tok in parts[1:]:
        a, sep, b = tok.partition(":")
        if not sep:
            return f"token {tok!r} is not WORD_ID:COUNT"
        for what, s in (("word id", a), ("count", b)):
            bad = next((c for c in s if not "0" <= c <= "9"), None)
            if not s:
                return f"token {tok!r}: the {what} is missing"
            if bad is not None and bad.isdigit():
                return (
                    f"token {tok!r}: {what} {s!r} contains the non-ASCII digit {_char_name(bad)}; "
                    "only 0-9 are allowed"
                )
            if bad is not None:
                return f"token {tok!r}: {what} {s!r} is not a nonnegative integer"
    return f"cannot parse {line[:80]!r} (expected 'LABEL WORD_ID:COUNT ...')"


def _parse_label(head: str, label_map, label_type: str):
    """The label of one line, or raise ``ValueError`` with the reason (the caller adds the line)."""
    if label_map is not None:
        if head not in label_map:
            raise ValueError(f"label {head!r} is not in label_map {sorted(label_map)}")
        return label_map[head]
    digit = next((c for c in head if c.isdigit() and not "0" <= c <= "9"), None)
    if digit is not None:
        raise ValueError(f"label {head!r} contains the non-ASCII digit {_char_name(digit)}; only 0-9 are allowed")
    if label_type == "rating":
        if _RATING_RE.fullmatch(head) is None:
            raise ValueError(f"label {head!r} is not a decimal number (a rating)")
        return float(head)
    if _CLASS_ID_RE.fullmatch(head) is None:
        raise ValueError(
            f"label {head!r} is not an integer class id (pass label_map or label_type='rating')"
        )
    if len(head.lstrip("+-")) > 18:
        raise ValueError(f"class id {head} is too large")
    return int(head)


def _check_label_map(label_map) -> dict[str, int] | None:
    if label_map is None:
        return None
    if not isinstance(label_map, Mapping):
        raise InputTypeError(f"label_map must map raw label strings to class ids, got {type(label_map).__name__}")
    for k, v in label_map.items():
        if not isinstance(k, str):
            raise InputTypeError(f"label_map keys must be the raw label strings, got {type(k).__name__}: {k!r}")
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise InputTypeError(f"label_map[{k!r}] must be an int class id, got {v!r}")
    return {k: int(v) for k, v in label_map.items()}


@dataclass
class LabeledCounts:
    """The arrays of a ``LABEL WORD_ID:COUNT`` file: document ``d`` is on line ``d + 1``."""

    words: np.ndarray  # int64 [N]: not yet checked against the vocabulary
    doc_offsets: np.ndarray  # int64 [D+1]
    labels: np.ndarray  # int64 [D] or float64 [D]
    label_names: tuple[str, ...] | None


def read_labeled_counts(
    path: str | os.PathLike, *, label_map=None, label_names=None, label_type: str = "class"
) -> LabeledCounts:
    """Parse the ``LABEL WORD_ID:COUNT WORD_ID:COUNT ...`` format (one document per line).

    Labels are int class ids, mapped through ``label_map`` (raw label -> class id;
    ``label_names`` then defaults to the raw labels ordered by id when the ids are
    ``0..L-1``), or float ratings with ``label_type="rating"``. Tokens of a document are its
    word ids repeated ``COUNT`` times, in file order. Trailing blank lines are ignored; every
    other line is a document. Syntax errors raise :class:`InputError` naming the file and line.
    Use :meth:`Corpus.from_labeled_counts <topiczoo.corpus.Corpus.from_labeled_counts>` for a
    checked corpus.
    """
    path = _check_path(path)
    if not is_choice(label_type, ("class", "rating")):
        raise InputError(f"label_type must be 'class' or 'rating', got {label_type!r}")
    label_map = _check_label_map(label_map)
    if label_map is not None and label_type == "rating":
        raise InputError("label_map maps labels to class ids; it cannot be used with label_type='rating'")
    if label_map is not None and label_names is None:
        by_id = sorted(label_map.items(), key=lambda kv: kv[1])
        if [v for _, v in by_id] == list(range(len(by_id))):
            label_names = tuple(k for k, _ in by_id)
    lines = read_lines(path)
    while lines and not lines[-1].strip(" \t"):
        lines.pop()
    if not lines:
        raise InputError(f"{path}: the file has no documents (it is empty)")
    raw_labels: list = []
    rests: list[str] = []
    pairs_per_doc = np.zeros(len(lines), dtype=np.int64)
    for i, line in enumerate(lines):
        if _LINE_RE.fullmatch(line) is None:
            raise InputError(f"{path}: line {i + 1}: {_diagnose(line)}")
        parts = line.strip(" \t").split(None, 1)
        head, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        try:
            raw_labels.append(_parse_label(head, label_map, label_type))
        except ValueError as err:
            raise InputError(f"{path}: line {i + 1}: {err}") from None
        if _TOO_LONG_NUMBER.search(rest):
            raise InputError(f"{path}: line {i + 1}: the number {_TOO_LONG_NUMBER.search(rest)[0]} is too large")
        pairs_per_doc[i] = rest.count(":")
        rests.append(rest)
    flat = " ".join(rests).replace(":", " ")
    # every line matched _LINE_RE: the text is a plain list of nonnegative ASCII integers
    nums = np.fromstring(flat, dtype=np.int64, sep=" ") if flat.strip() else np.zeros(0, np.int64)
    assert nums.size == 2 * int(pairs_per_doc.sum()), "every line was checked by _LINE_RE"
    ids, counts = nums[0::2], nums[1::2]
    pair_doc = np.repeat(np.arange(len(lines)), pairs_per_doc)
    if counts.size and counts.max() > MAX_TOKENS:
        k = int(np.argmax(counts > MAX_TOKENS))
        raise InputError(f"{path}: line {pair_doc[k] + 1}: count {counts[k]} is more than {MAX_TOKENS:,} tokens")
    token_cum = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if token_cum[-1] > MAX_TOKENS:
        k = int(np.argmax(token_cum[1:] > MAX_TOKENS))
        raise InputError(
            f"{path}: line {pair_doc[k] + 1}: the file holds more than {MAX_TOKENS:,} tokens "
            "(the samplers index tokens with int32)"
        )
    words = np.repeat(ids, counts)
    pair_offsets = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(pairs_per_doc, out=pair_offsets[1:])
    offsets = token_cum[pair_offsets]
    labels = np.array(raw_labels, dtype=np.float64 if label_type == "rating" else np.int64)
    return LabeledCounts(words, offsets, labels, None if label_names is None else label_names)


@contextmanager
def naming_lines(path, first_line: int = 1):
    """Re-raise a corpus :class:`InputError` about document ``d`` as one naming ``path`` and
    line ``first_line + d`` (document ``d`` of a counts file is on line ``d + 1``)."""
    try:
        yield
    except InputError as err:
        if err.document is None:
            raise
        raise InputError(f"{path}: line {first_line + err.document}: {err.detail}") from None
