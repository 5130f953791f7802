"""Tokenizing texts and choosing vocabularies: the text half of :mod:`topiczoo.corpus`.

:func:`tokenize` splits one text into words; :func:`select_words` applies the frequency filters
of :meth:`Corpus.filter_vocabulary <topiczoo.corpus.Corpus.filter_vocabulary>`.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

__all__ = ["RANKINGS", "english_stop_words", "select_words", "tokenize"]

# Runs of ASCII letters/digits, possibly joined by single apostrophes ("don't", "o'neill").
# Anything else (punctuation, hyphens, non-ASCII symbols) separates tokens.
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
_HAS_DIGIT_RE = re.compile(r"[0-9]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop list (318 words) as a frozenset of str."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _normalize_token(token: str) -> str:
    """Strip a possessive ``'s`` and then every remaining apostrophe (``don't`` -> ``dont``)."""
    if "'" in token:
        if token.endswith("'s"):
            token = token[:-2]
        token = token.replace("'", "")
    return token


def _resolve_stop_words(stop_words) -> frozenset[str]:
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words == "english":
            return english_stop_words()
        raise ValueError(
            f"stop_words must be 'english', an iterable of words or None, got the string {stop_words!r}"
        )
    return frozenset(_normalize_token(str(w).lower().translate(_APOSTROPHES)) for w in stop_words)


def _clean_token(tok: str, stop: frozenset[str], min_word_length: int) -> str:
    """The word a raw token stands for, or ``""`` if the token is dropped."""
    if _HAS_DIGIT_RE.search(tok):
        return ""  # numbers and alphanumeric codes ("2004", "mp3", "1.13bn") are dropped
    tok = _normalize_token(tok)
    if len(tok) < min_word_length or tok in stop:
        return ""
    return tok


def _tokenize(
    text: str, stop: frozenset[str], min_word_length: int, cache: dict[str, str] | None = None
) -> list[str]:
    """Tokens of one text; ``cache`` (raw token -> cleaned word or ``""``) may be shared
    between calls with the same ``stop`` and ``min_word_length`` to clean each distinct raw
    token only once."""
    text = unicodedata.normalize("NFKD", text).lower().translate(_APOSTROPHES)
    raw = _TOKEN_RE.findall(text)
    if cache is None:
        cache = {}
    for tok in set(raw).difference(cache):
        cache[tok] = _clean_token(tok, stop, min_word_length)
    return [w for w in map(cache.__getitem__, raw) if w]


def tokenize(text: str, *, stop_words="english", min_word_length: int = 2) -> list[str]:
    """Split one text into word tokens, in text order.

    The text is Unicode-normalised (NFKD, so accents become separate marks and drop out) and
    lower-cased; tokens are runs of ASCII letters and digits joined by apostrophes. Tokens
    containing a digit are dropped, a possessive ``'s`` is removed and other apostrophes are
    deleted (``don't`` -> ``dont``); tokens shorter than ``min_word_length`` and stop words
    (``"english"`` = scikit-learn's list, an iterable of words, or ``None``) are removed.

    Returns a ``list[str]`` of length ``<=`` the number of words in ``text``.
    """
    return _tokenize(text, _resolve_stop_words(stop_words), int(min_word_length))


def _check_unique(vocab: tuple[str, ...], where: str = "vocabulary") -> None:
    if len(set(vocab)) != len(vocab):
        seen: dict[str, int] = {}
        for i, w in enumerate(vocab):
            if w in seen:
                raise ValueError(f"{where}: word {w!r} appears twice (ids {seen[w]} and {i})")
            seen[w] = i



RANKINGS = ("df", "count", "tfidf")


def select_words(
    vocab, df, counts, num_docs, *, min_df, max_df, min_count, max_vocab, rank_by
) -> np.ndarray:
    """bool ``[V]``: the words kept by :meth:`Corpus.filter_vocabulary`."""
    lo = _doc_count(min_df, num_docs, "min_df")
    hi = _doc_count(max_df, num_docs, "max_df")
    if hi < lo:
        raise ValueError(
            f"max_df={max_df} corresponds to fewer documents ({hi}) than min_df={min_df} ({lo})"
        )
    if isinstance(min_count, (bool, np.bool_)) or int(min_count) != min_count or min_count < 0:
        raise ValueError(f"min_count must be an integer >= 0, got {min_count!r}")
    if rank_by not in RANKINGS:
        raise ValueError(f"rank_by must be one of {', '.join(RANKINGS)}, got {rank_by!r}")
    keep = (df >= max(lo, 1)) & (df <= hi) & (counts >= int(min_count))
    if max_vocab is not None:
        if isinstance(max_vocab, (bool, np.bool_)) or int(max_vocab) < 0:
            raise ValueError(f"max_vocab must be >= 0, got {max_vocab}")
        if keep.sum() > int(max_vocab):
            if rank_by == "df":
                score = df.astype(np.float64)
            elif rank_by == "count":
                score = counts.astype(np.float64)
            else:
                with np.errstate(divide="ignore"):
                    score = counts * np.log(num_docs / np.maximum(df, 1))
            cand = sorted(np.flatnonzero(keep).tolist(), key=lambda i: (-score[i], vocab[i]))
            keep = np.zeros(len(vocab), dtype=bool)
            keep[cand[: int(max_vocab)]] = True
    return keep


def _doc_count(value, num_docs: int, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int count or a float fraction")
    if isinstance(value, (float, np.floating)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} as a float must be a fraction in [0, 1], got {value}")
        return int(np.floor(value * num_docs + 1e-9)) if name == "max_df" else int(np.ceil(value * num_docs - 1e-9))
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value

