"""Tokenizing texts and choosing vocabularies.

A :class:`Tokenizer` turns one text into word tokens in five explicit steps (every step an
option, the defaults stated below):

1. **normalise** the text (``unicode_form="NFKD"``: compatibility decomposition, so ligatures
   and full-width letters become plain letters and accented letters become a letter plus a
   combining accent); ``None`` leaves the text as is;
2. **lowercase** it (``lowercase=True``) and drop the combining accents
   (``strip_accents=True``, so ``"Café"`` -> ``"cafe"``); curly apostrophes become ``'``;
3. **find tokens**: the non-overlapping matches of ``token_pattern``; the default,
   :data:`DEFAULT_TOKEN_PATTERN`, is runs of Unicode letters and digits joined by single
   apostrophes (``"don't"``, ``"o'neill"``, ``"w123"``, ``"δέλτα"``); everything else
   (spaces, punctuation, hyphens, underscores, symbols) separates tokens;
4. **normalise tokens**: a possessive ``'s`` is removed, then every other apostrophe
   (``"company's"`` -> ``"company"``, ``"don't"`` -> ``"dont"``);
5. **drop tokens**, each by the first rule that applies, counted per rule:
   ``digits`` (``"keep"`` = the default: keep every token; ``"drop-numbers"``: drop tokens
   made of digits only, such as ``"2004"``; ``"drop"``: drop every token containing a digit,
   such as ``"2004"``, ``"mp3"``, ``"w123"``), ``min_word_length`` (default 2: one-letter
   tokens go) and ``stop_words`` (default ``"english"``: scikit-learn's 318-word list; an
   iterable of words, normalised like the text; or ``None``).

Letters and digits that no token covers (possible only with a custom ``token_pattern`` or
:data:`ASCII_TOKENIZER`) are counted as *skipped characters*; :meth:`Corpus.from_texts
<topiczoo.corpus.Corpus.from_texts>` warns about them with a :class:`DataLossWarning`.

:data:`ASCII_TOKENIZER` is the tokenizer of the named data sets (and the only behaviour of
topiczoo 0.1): ASCII letters and digits only, accents not stripped (so they split a word),
tokens containing a digit dropped. Keeping it for the data sets keeps their token counts.

Vocabulary helpers: :func:`english_stop_words`, :func:`check_vocabulary` (the one check of a
vocabulary, used by :class:`~topiczoo.corpus.Corpus`) and :func:`select_words` (the frequency
filters of :meth:`Corpus.filter_vocabulary <topiczoo.corpus.Corpus.filter_vocabulary>`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace

import numpy as np

from .errors import DataLossWarning, InputError, InputTypeError
from .labels import shown

__all__ = [
    "ASCII_TOKENIZER",
    "CheckedVocabulary",
    "DEFAULT_TOKEN_PATTERN",
    "DIGIT_RULES",
    "DataLossWarning",
    "RANKINGS",
    "Tokenizer",
    "check_vocabulary",
    "english_stop_words",
    "select_words",
    "tokenize",
]

#: runs of Unicode letters/digits joined by single apostrophes (``[^\W_]`` is a letter or digit)
DEFAULT_TOKEN_PATTERN = r"[^\W_]+(?:'[^\W_]+)*"
#: the token pattern of :data:`ASCII_TOKENIZER` (applied after lower-casing)
ASCII_TOKEN_PATTERN = r"[a-z0-9]+(?:'[a-z0-9]+)*"
#: values of ``Tokenizer.digits``
DIGIT_RULES = ("keep", "drop-numbers", "drop")
#: values of ``Tokenizer.unicode_form``
UNICODE_FORMS = (None, "NFC", "NFKC", "NFD", "NFKD")

# the names under which the drop rules are counted (Corpus.report and the warnings use them)
RULE_DIGITS = "digits"
RULE_LENGTH = "length"
RULE_STOP = "stop"

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_WORD_CHAR = re.compile(r"[^\W_]")
_ANY_DIGIT = re.compile(r"\d")
_ONLY_DIGITS = re.compile(r"\d+")


def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop list (318 lower-case ASCII words) as a frozenset of str."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _normalize_token(token: str) -> str:
    """Strip a possessive ``'s`` and then every remaining apostrophe (``don't`` -> ``dont``)."""
    if "'" in token:
        if token.endswith("'s"):
            token = token[:-2]
        token = token.replace("'", "")
    return token


def is_choice(value, choices) -> bool:
    """``value`` is one of ``choices`` (str or None), compared without calling ``==`` on
    arrays or other objects that compare element-wise."""
    return any(value is c if c is None else isinstance(value, str) and value == c for c in choices)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Tokenizer:
    """How texts become tokens (see the module docstring for the steps and their order).

    Parameters (all keyword, all validated here, errors name the option)
    ----------------------------------------------------------------------
    token_pattern : str, default :data:`DEFAULT_TOKEN_PATTERN`
        Regular expression of one token (the whole match is the token; groups are ignored).
    lowercase : bool, default True
        Lower-case the text first. With ``False`` a token is a stop word when its lower-case
        form is in the list.
    stop_words : ``"english"``, iterable of str, or None; default ``"english"``
    min_word_length : int >= 0, default 2
    digits : ``"keep"`` (default), ``"drop-numbers"`` or ``"drop"``
    unicode_form : ``"NFKD"`` (default), ``"NFKC"``, ``"NFD"``, ``"NFC"`` or None
    strip_accents : bool, default True
        Remove combining marks after normalising (meaningful with a decomposing form).

    A tokenizer is immutable and hashable; ``tokenizer(text)`` tokenizes one text.
    """

    token_pattern: str = DEFAULT_TOKEN_PATTERN
    lowercase: bool = True
    stop_words: object = "english"
    min_word_length: int = 2
    digits: str = "keep"
    unicode_form: str | None = "NFKD"
    strip_accents: bool = True
    _regex: re.Pattern = field(init=False, repr=False, compare=False)
    _stop: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.token_pattern, str):
            raise InputTypeError(
                f"token_pattern must be a regular expression (str), got {type(self.token_pattern).__name__}"
            )
        try:
            regex = re.compile(self.token_pattern)
        except re.error as err:
            raise InputError(f"token_pattern {self.token_pattern!r} is not a valid regular expression: {err}") from None
        for name in ("lowercase", "strip_accents"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InputTypeError(f"{name} must be True or False, got {shown(getattr(self, name))}")
        if not _is_int(self.min_word_length) or self.min_word_length < 0:
            raise InputError(f"min_word_length must be an integer >= 0, got {shown(self.min_word_length)}")
        if not is_choice(self.digits, DIGIT_RULES):
            raise InputError(f"digits must be one of {', '.join(map(repr, DIGIT_RULES))}, got {self.digits!r}")
        if not is_choice(self.unicode_form, UNICODE_FORMS):
            raise InputError(
                f"unicode_form must be one of {', '.join(map(repr, UNICODE_FORMS))}, got {self.unicode_form!r}"
            )
        set_(self, "min_word_length", int(self.min_word_length))
        set_(self, "_regex", regex)
        stop = self.stop_words
        if stop is None:
            resolved = frozenset()
        elif isinstance(stop, str):
            if stop != "english":
                raise InputError(
                    f"stop_words must be 'english', an iterable of words or None, got the string {stop!r}"
                )
            resolved = english_stop_words()
        elif isinstance(stop, (bytes, Mapping)) or not isinstance(stop, Iterable):
            raise InputTypeError(
                f"stop_words must be 'english', an iterable of str or None, got {type(stop).__name__}"
            )
        else:
            words = tuple(stop)
            for w in words:
                if not isinstance(w, str):
                    raise InputTypeError(f"stop_words must hold str, got {type(w).__name__}: {shown(w)}")
            set_(self, "stop_words", tuple(sorted(set(words))))  # hashable, order-free
            resolved = frozenset(_normalize_token(self._prepare(w).lower()) for w in words)
        set_(self, "_stop", resolved)

    # ------------------------------------------------------------------ the steps
    def _prepare(self, text: str) -> str:
        """Steps 1-2: normalise, lower-case, strip accents, unify apostrophes."""
        if not text.isascii():
            if self.unicode_form is not None:
                text = unicodedata.normalize(self.unicode_form, text)
            if self.lowercase:
                text = text.lower()
            if self.strip_accents:
                text = "".join(c for c in text if not unicodedata.combining(c))
            return text.translate(_APOSTROPHES)
        return (text.lower() if self.lowercase else text).translate(_APOSTROPHES)

    def _raw_tokens(self, prepared: str) -> list[str]:
        """Step 3: the matches of the token pattern (empty matches are not tokens)."""
        regex = self._regex
        raw = [m.group(0) for m in regex.finditer(prepared)] if regex.groups else regex.findall(prepared)
        return [t for t in raw if t] if "" in raw else raw

    def _clean(self, raw: str) -> tuple[str, str | None]:
        """Steps 4-5 for one raw token: ``(word, None)`` or ``("", rule that dropped it)``."""
        if self.digits == "drop" and _ANY_DIGIT.search(raw):
            return "", RULE_DIGITS
        tok = _normalize_token(raw)
        if self.digits == "drop-numbers" and _ONLY_DIGITS.fullmatch(tok):
            return "", RULE_DIGITS
        if len(tok) < self.min_word_length or not tok:
            return "", RULE_LENGTH
        if (tok if self.lowercase else tok.lower()) in self._stop:
            return "", RULE_STOP
        return tok, None

    def __call__(self, text: str) -> list[str]:
        """The tokens of one text, in text order (``list[str]``)."""
        if not isinstance(text, str):
            raise InputTypeError(f"tokenize takes one text (str), got {type(text).__name__}")
        return self.tokenize_many([text]).documents[0]

    def tokenize_many(self, texts: Iterable[str]) -> "Tokenized":
        """Tokenize many texts, each distinct raw token cleaned once; counts what was dropped."""
        cache: dict[str, str] = {}
        rule_of: dict[str, str] = {}
        seen: Counter = Counter()
        docs: list[list[str]] = []
        raw_per_doc: list[int] = []
        skipped: list[int] = []
        sub = self._regex.sub
        for text in texts:
            prepared = self._prepare(text)
            raw = self._raw_tokens(prepared)
            seen.update(raw)
            for tok in set(raw).difference(cache):
                word, rule = self._clean(tok)
                cache[tok] = word
                if rule is not None:
                    rule_of[tok] = rule
            docs.append([w for w in map(cache.__getitem__, raw) if w])
            raw_per_doc.append(len(raw))
            skipped.append(len(_WORD_CHAR.findall(sub(" ", prepared))))
        dropped = {RULE_DIGITS: 0, RULE_LENGTH: 0, RULE_STOP: 0}
        for tok, rule in rule_of.items():
            dropped[rule] += seen[tok]
        words = sorted({w for w in cache.values() if w})
        return Tokenized(docs, words, np.asarray(raw_per_doc, np.int64), dropped, np.asarray(skipped, np.int64))

    def describe(self) -> str:
        """One line naming the options that differ from the defaults (for reports)."""
        diff = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.init and getattr(self, f.name) != getattr(_DEFAULT, f.name, None)
        ]
        return "default tokenizer" if not diff else "tokenizer " + ", ".join(diff)

    def rule_name(self, rule: str) -> str:
        """Human wording of a drop rule, with this tokenizer's setting."""
        if rule == RULE_DIGITS:
            return "containing a digit" if self.digits == "drop" else "numbers"
        if rule == RULE_LENGTH:
            return f"shorter than {self.min_word_length} characters"
        if rule == RULE_STOP:
            return "stop words"
        return rule


@dataclass
class Tokenized:
    """What :meth:`Tokenizer.tokenize_many` found: per-document tokens, the sorted distinct
    kept words, raw tokens (pattern matches) per document, tokens dropped per rule and
    letters/digits outside every token per document."""

    documents: list[list[str]]
    words: list[str]
    raw_per_doc: np.ndarray
    dropped: dict[str, int]
    skipped_per_doc: np.ndarray


_DEFAULT = Tokenizer()

#: the tokenizer of the named data sets (the only behaviour of topiczoo 0.1): ASCII letters and
#: digits only, tokens containing a digit dropped, accents decomposed but not stripped (so an
#: accent ends a token: "café" -> "cafe", "résumé" -> "re", "sume"; letters without an ASCII
#: decomposition, such as "ø" or Greek, are skipped)
ASCII_TOKENIZER = Tokenizer(token_pattern=ASCII_TOKEN_PATTERN, digits="drop", strip_accents=False)


def make_tokenizer(tokenizer: Tokenizer | None = None, **options) -> Tokenizer:
    """``tokenizer`` (default :class:`Tokenizer()`) with ``options`` replaced; unknown options
    raise :class:`InputTypeError` listing the known ones."""
    if tokenizer is None:
        tokenizer = _DEFAULT
    elif not isinstance(tokenizer, Tokenizer):
        raise InputTypeError(f"tokenizer must be a topiczoo.text.Tokenizer, got {type(tokenizer).__name__}")
    if not options:
        return tokenizer
    known = [f.name for f in fields(Tokenizer) if f.init]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InputTypeError(f"unknown tokenizer option(s) {', '.join(unknown)}; the options are {', '.join(known)}")
    return replace(tokenizer, **options)


def tokenize(text: str, tokenizer: Tokenizer | None = None, **options) -> list[str]:
    """Split one text into word tokens, in text order.

    ``tokenizer`` (default: ``Tokenizer()``, see the module docstring) with any of its
    options overridden by keyword, e.g. ``tokenize(text, stop_words=None, digits="drop")``.
    Returns a ``list[str]`` of length ``<=`` the number of tokens the pattern finds.
    """
    return make_tokenizer(tokenizer, **options)(text)


# --------------------------------------------------------------------------------------------
# vocabularies
# --------------------------------------------------------------------------------------------


class CheckedVocabulary(tuple):
    """A ``tuple`` of distinct ``str`` that :func:`check_vocabulary` has checked.

    Corpora keep their vocabulary in this form, so a vocabulary passed from one corpus to the
    next (or from :func:`~topiczoo.readers.read_vocabulary`) is not checked again. It compares,
    hashes and prints like the plain tuple.
    """

    __slots__ = ()


def _ids(i: int, j: int) -> str:
    return f"ids {i} and {j}"


def check_vocabulary(vocabulary, where: str = "vocabulary", positions=_ids) -> CheckedVocabulary:
    """The vocabulary as a :class:`CheckedVocabulary` (a tuple of distinct str).

    Raises :class:`InputTypeError` for a single string, a set (no order) or non-str entries and
    :class:`InputError` naming the first repeated word and both of its ids (``positions(i, j)``
    words them; a file reader names lines instead). A vocabulary that is already a
    :class:`CheckedVocabulary` is returned as is.
    """
    if type(vocabulary) is CheckedVocabulary:
        return vocabulary
    if isinstance(vocabulary, (str, bytes)):
        raise InputTypeError(f"{where} must be a sequence of words, not a single string")
    if isinstance(vocabulary, (set, frozenset, Mapping)) or not isinstance(vocabulary, Iterable):
        raise InputTypeError(
            f"{where} must be an ordered sequence of words (word id i is entry i), got {type(vocabulary).__name__}"
        )
    vocab = tuple(vocabulary)
    for i, w in enumerate(vocab):
        if not isinstance(w, str):
            raise InputTypeError(f"{where} entries must be str, got {type(w).__name__} at id {i}: {shown(w)}")
    if len(set(vocab)) != len(vocab):
        seen: dict[str, int] = {}
        for i, w in enumerate(vocab):
            if w in seen:
                raise InputError(f"{where}: word {w!r} appears twice ({positions(seen[w], i)})")
            seen[w] = i
    return CheckedVocabulary(vocab)


#: the word rankings of :func:`select_words` (``rank_by``)
RANKINGS = ("df", "count", "tfidf")


def select_words(
    vocab, df, counts, num_docs, *, min_df=1, max_df=1.0, min_count=1, max_vocab=None, rank_by="df"
) -> tuple[np.ndarray, dict[str, int]]:
    """The words kept by :meth:`Corpus.filter_vocabulary <topiczoo.corpus.Corpus.filter_vocabulary>`.

    Returns ``(keep, dropped)``: bool ``[V]`` and the number of tokens dropped by each filter
    (``"min_df"``, ``"max_df"``, ``"min_count"``, ``"max_vocab"``; a word counts under the
    first filter it fails, in that order). Options are validated here; errors name them.
    """
    lo = _doc_count(min_df, num_docs, "min_df")
    hi = _doc_count(max_df, num_docs, "max_df")
    if lo > num_docs:
        raise InputError(f"min_df={min_df} asks for words in {lo} documents, but the corpus has "
                         f"{num_docs}: every word would be dropped")
    if hi < lo:
        raise InputError(f"max_df={max_df} corresponds to fewer documents ({hi}) than min_df={min_df} ({lo})")
    if not _is_int(min_count) and not (isinstance(min_count, (float, np.floating)) and float(min_count).is_integer()):
        raise InputError(f"min_count must be an integer >= 0, got {shown(min_count)}")
    if min_count < 0:
        raise InputError(f"min_count must be an integer >= 0, got {shown(min_count)}")
    if not is_choice(rank_by, RANKINGS):
        raise InputError(f"rank_by must be one of {', '.join(RANKINGS)}, got {rank_by!r}")
    if max_vocab is not None and (not _is_int(max_vocab) or max_vocab < 0):
        raise InputError(f"max_vocab must be an integer >= 0 or None, got {shown(max_vocab)}")
    fails_min_df = df < max(lo, 1)
    fails_max_df = ~fails_min_df & (df > hi)
    fails_count = ~fails_min_df & ~fails_max_df & (counts < int(min_count))
    keep = ~(fails_min_df | fails_max_df | fails_count)
    dropped = {
        "min_df": int(counts[fails_min_df].sum()),
        "max_df": int(counts[fails_max_df].sum()),
        "min_count": int(counts[fails_count].sum()),
        "max_vocab": 0,
    }
    if max_vocab is not None and keep.sum() > int(max_vocab):
        if rank_by == "df":
            score = df.astype(np.float64)
        elif rank_by == "count":
            score = counts.astype(np.float64)
        else:
            with np.errstate(divide="ignore"):
                score = counts * np.log(num_docs / np.maximum(df, 1))
        cand = sorted(np.flatnonzero(keep).tolist(), key=lambda i: (-score[i], vocab[i]))
        capped = np.zeros(len(vocab), dtype=bool)
        capped[cand[: int(max_vocab)]] = True
        dropped["max_vocab"] = int(counts[keep & ~capped].sum())
        keep = capped
    return keep, dropped


def _doc_count(value, num_docs: int, name: str) -> int:
    """A document-count option as a number of documents (a float is a fraction of ``num_docs``)."""
    if isinstance(value, (float, np.floating)):
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{name} as a float must be a fraction in [0, 1], got {value}")
        if name == "max_df":
            return int(np.floor(value * num_docs + 1e-9))
        return int(np.ceil(value * num_docs - 1e-9))
    if not _is_int(value):
        raise InputTypeError(f"{name} must be an int count or a float fraction, got {shown(value)}")
    if value < 0:
        raise InputError(f"{name} must be >= 0, got {value}")
    return int(value)
