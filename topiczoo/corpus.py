"""The immutable bag-of-words corpus shared by every sampler.

A :class:`Corpus` stores the tokens of all documents contiguously (CSR style):

* ``words``        int32 ``[N]``   word id of every token, document after document;
* ``doc_offsets``  int64 ``[D+1]`` tokens of document ``d`` are ``words[doc_offsets[d]:doc_offsets[d+1]]``;
* ``vocabulary``   ``tuple[str, ...]`` of length ``V``: word id ``i`` is ``vocabulary[i]``;
* ``labels``       optional: ``[D]`` int64 class ids ``0..L-1``, ``[D]`` float64 ratings, or
  ``[D, L]`` int64 0/1 multi-label indicators;
* ``label_names``  optional ``tuple[str, ...]`` naming the classes (length ``L``).

All arrays are read-only. Every transformation (:meth:`Corpus.subset`,
:meth:`Corpus.restrict_vocabulary`, :meth:`Corpus.filter_vocabulary`,
:meth:`Corpus.train_test_split`, :meth:`Corpus.kfold_splits`, :meth:`Corpus.as_multilabel`,
...) returns a new corpus. Models check the labels they need with
:meth:`Corpus.require_labels` (or :func:`check_labels` for a bare array).

The module is split by concern: tokenizing and vocabulary filters in :mod:`topiczoo.text`,
file readers in :mod:`topiczoo.readers`, index splits in :mod:`topiczoo.splits`; their public
names (:func:`tokenize`, :func:`english_stop_words`, :func:`read_vocabulary`,
:func:`split_indices`, :func:`kfold_indices`) stay importable from here.

Only numpy is needed; scikit-learn provides the English stop list and scipy is used only when
a sparse document-term matrix is passed to :meth:`Corpus.from_document_term`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from .readers import _LINE_RE, _diagnose, _split_head, read_vocabulary
from .splits import kfold_indices, split_indices
from .text import (
    _check_unique,
    _resolve_stop_words,
    _tokenize,
    english_stop_words,
    select_words,
    tokenize,
)

__all__ = [
    "Corpus",
    "LABEL_KINDS",
    "check_labels",
    "english_stop_words",
    "kfold_indices",
    "read_vocabulary",
    "split_indices",
    "tokenize",
]


# --------------------------------------------------------------------------------------------
# labels
# --------------------------------------------------------------------------------------------

#: the label kinds of :attr:`Corpus.label_kind` and :func:`check_labels`
LABEL_KINDS = ("binary", "multiclass", "regression", "multilabel")


def check_labels(
    labels, kind: str, *, num_classes: int | None = None, at_least_one: bool = False
) -> np.ndarray:
    """Validate a label array for a model of the given ``kind`` and return it normalised.

    * ``"binary"``: ``[D]`` integer class ids 0/1 (``num_classes`` must be 2 or None);
    * ``"multiclass"``: ``[D]`` integer class ids ``0..num_classes-1`` (only ``>= 0`` is
      checked when ``num_classes`` is None);
    * ``"regression"``: ``[D]`` finite real ratings;
    * ``"multilabel"``: ``[D, L]`` 0/1 indicators (``L == num_classes`` when given); with
      ``at_least_one=True`` every document needs at least one positive label.

    Errors name the first offending document, e.g. ``"class label 7 out of range for 5
    classes at document 12"``, ``"non-finite rating at document 3 (nan)"``, ``"document 4
    has no positive label"``. Returns a read-only int64 ``[D]`` / float64 ``[D]`` / int64
    ``[D, L]`` array (a copy when the dtype changes).
    """
    if kind not in LABEL_KINDS:
        raise ValueError(f"label kind must be one of {', '.join(LABEL_KINDS)}, got {kind!r}")
    y = np.asarray(labels)
    if kind == "binary":
        if num_classes is not None and num_classes != 2:
            raise ValueError(f"binary labels have 2 classes, not num_classes={num_classes}")
        num_classes = 2
    if num_classes is not None and (
        isinstance(num_classes, (bool, np.bool_)) or int(num_classes) != num_classes or num_classes < 1
    ):
        raise ValueError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    want_ndim = 2 if kind == "multilabel" else 1
    if y.ndim != want_ndim:
        shape = "[D, L] 0/1 indicators" if want_ndim == 2 else "[D]"
        raise ValueError(f"{kind} labels must be {shape}, got shape {y.shape}")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"{kind} labels must be numeric, got dtype {y.dtype}")

    if kind == "regression":
        y = y.astype(np.float64)
        bad = ~np.isfinite(y)
        if bad.any():
            d = int(np.flatnonzero(bad)[0])
            raise ValueError(f"non-finite rating at document {d} ({y[d]})")
        return _readonly(np.array(y, copy=True))

    if y.dtype.kind == "f":
        whole = np.isfinite(y) & (y == np.round(y))
        if not whole.all():
            pos = np.argwhere(~whole)[0]
            where = f"document {pos[0]}" + (f", label {pos[1]}" if y.ndim == 2 else "")
            what = "multi-label entry" if kind == "multilabel" else "class label"
            raise ValueError(f"{what} {y[tuple(pos)]} at {where} is not a whole number")
    y = y.astype(np.int64)

    if kind == "multilabel":
        L = y.shape[1]
        if num_classes is not None and L != num_classes:
            raise ValueError(f"multi-label labels have {L} columns but num_classes={num_classes}")
        bad = (y != 0) & (y != 1)
        if bad.any():
            d, l = (int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"multi-label entry {y[d, l]} at document {d}, label {l} is not 0 or 1")
        if at_least_one:
            none = y.sum(axis=1) == 0
            if none.any():
                d = int(np.flatnonzero(none)[0])
                raise ValueError(
                    f"document {d} has no positive label ({int(none.sum())} such document(s))"
                )
        return _readonly(np.array(y, copy=True))

    bad = y < 0 if num_classes is None else (y < 0) | (y >= num_classes)
    if bad.any():
        d = int(np.flatnonzero(bad)[0])
        if num_classes is None:
            raise ValueError(f"class label {y[d]} is negative at document {d}")
        raise ValueError(f"class label {y[d]} out of range for {num_classes} classes at document {d}")
    return _readonly(np.array(y, copy=True))


# --------------------------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------------------------


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _offsets_from_lengths(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


@dataclass(frozen=True, eq=False)
class Corpus:
    """An immutable bag-of-words corpus (tokens of all documents stored contiguously).

    Attributes
    ----------
    words : int32 ``[N]``
        Word id of each token; documents are stored one after the other, token order kept.
    doc_offsets : int64 ``[D+1]``
        Tokens of document ``d`` are ``words[doc_offsets[d]:doc_offsets[d+1]]``.
    vocabulary : ``tuple[str, ...]`` of length ``V``
        Word id ``i`` is ``vocabulary[i]``; words are unique.
    labels : ``[D]`` int64 class ids ``0..L-1``, ``[D]`` float64 ratings, ``[D, L]`` int64 0/1, or None
        String labels (``[D]``) are accepted and encoded as class ids: via ``label_names`` when
        given, else in sorted order (``label_names`` is then filled in).
    label_names : ``tuple[str, ...]`` or None
        Names of the ``L`` classes (class-id and multi-label corpora only).

    Empty documents are allowed (test documents may lose all their words when restricted to a
    training vocabulary); see :attr:`empty_documents`, :meth:`drop_empty` and
    :meth:`require_nonempty`.
    """

    words: np.ndarray
    doc_offsets: np.ndarray
    vocabulary: tuple[str, ...]
    labels: np.ndarray | None = None
    label_names: tuple[str, ...] | None = None

    # ---------------------------------------------------------------- validation
    def __post_init__(self) -> None:
        set_ = object.__setattr__

        vocab = self.vocabulary
        if isinstance(vocab, (str, bytes)):
            raise TypeError("vocabulary must be a sequence of words, not a single string")
        vocab = tuple(vocab)
        for w in vocab:
            if not isinstance(w, str):
                raise TypeError(f"vocabulary entries must be str, got {type(w).__name__}: {w!r}")
        _check_unique(vocab)
        set_(self, "vocabulary", vocab)
        V = len(vocab)

        words = np.asarray(self.words)
        if words.ndim != 1:
            raise ValueError(f"words must be 1-D [N], got shape {words.shape}")
        if words.size and not np.issubdtype(words.dtype, np.integer):
            raise ValueError(f"words must hold integer word ids, got dtype {words.dtype}")
        offsets = np.asarray(self.doc_offsets)
        if offsets.ndim != 1 or offsets.size < 1:
            raise ValueError(f"doc_offsets must be 1-D [D+1] with D >= 0, got shape {offsets.shape}")
        if offsets.size > 1 and not np.issubdtype(offsets.dtype, np.integer):
            raise ValueError(f"doc_offsets must be integers, got dtype {offsets.dtype}")
        offsets = offsets.astype(np.int64)
        N = words.shape[0]
        if offsets[0] != 0:
            raise ValueError(f"doc_offsets must start at 0, got {offsets[0]}")
        steps = np.diff(offsets)
        if np.any(steps < 0):
            d = int(np.flatnonzero(steps < 0)[0])
            raise ValueError(
                f"doc_offsets must be non-decreasing: doc_offsets[{d}]={offsets[d]} > "
                f"doc_offsets[{d + 1}]={offsets[d + 1]} (document {d} has negative length)"
            )
        if offsets[-1] != N:
            raise ValueError(f"doc_offsets must end at N={N} (the number of tokens), got {offsets[-1]}")
        if N:
            bad = (words < 0) | (words >= V)
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                d = int(np.searchsorted(offsets, i, side="right") - 1)
                raise ValueError(
                    f"document {d}: word id {int(words[i])} (token {i - offsets[d]} of the document) "
                    f"is outside the vocabulary [0, {V})"
                )
        words = np.array(words, dtype=np.int32, copy=True)
        set_(self, "words", _readonly(words))
        set_(self, "doc_offsets", _readonly(np.array(offsets, dtype=np.int64, copy=True)))
        D = offsets.size - 1

        names = self.label_names
        if names is not None:
            if isinstance(names, (str, bytes)):
                raise TypeError("label_names must be a sequence of str, not a single string")
            names = tuple(str(n) for n in names)
            if len(set(names)) != len(names):
                raise ValueError(f"label_names must be unique, got {names}")
        labels = self.labels
        if labels is not None:
            labels = np.asarray(labels)
            if labels.ndim not in (1, 2):
                raise ValueError(f"labels must be [D] or [D, L], got shape {labels.shape}")
            if labels.shape[0] != D:
                raise ValueError(f"labels have {labels.shape[0]} rows but the corpus has D={D} documents")
            kind = labels.dtype.kind
            if kind in "USO" and labels.ndim == 1:
                raw = [str(x) for x in labels]
                if names is None:
                    names = tuple(sorted(set(raw)))
                index = {n: i for i, n in enumerate(names)}
                unknown = [x for x in raw if x not in index]
                if unknown:
                    raise ValueError(f"label {unknown[0]!r} is not in label_names {names}")
                labels = np.array([index[x] for x in raw], dtype=np.int64)
            elif kind == "b":
                labels = labels.astype(np.int64)
            elif kind in "iu":
                labels = labels.astype(np.int64)
            elif kind == "f":
                if labels.ndim == 2:
                    if labels.size and not np.all((labels == 0) | (labels == 1)):
                        raise ValueError("multi-label [D, L] labels must be 0/1")
                    labels = labels.astype(np.int64)
                else:
                    labels = labels.astype(np.float64)
                    bad = ~np.isfinite(labels)
                    if np.any(bad):
                        d = int(np.flatnonzero(bad)[0])
                        raise ValueError(
                            f"non-finite rating at document {d} ({labels[d]}); real-valued labels "
                            "must be finite"
                        )
            else:
                raise ValueError(f"unsupported label dtype {labels.dtype}")
            if labels.dtype == np.int64:
                if labels.ndim == 2:
                    if labels.size and not np.all((labels == 0) | (labels == 1)):
                        raise ValueError("multi-label [D, L] labels must be 0/1")
                    if names is not None and len(names) != labels.shape[1]:
                        raise ValueError(
                            f"{len(names)} label_names for multi-label labels with L={labels.shape[1]} columns"
                        )
                elif labels.size:
                    if labels.min() < 0:
                        d = int(np.flatnonzero(labels < 0)[0])
                        raise ValueError(
                            f"document {d}: class id {labels[d]} is negative; class ids must be 0..L-1 "
                            "(use float labels for ratings)"
                        )
                    if names is not None and labels.max() >= len(names):
                        d = int(np.flatnonzero(labels >= len(names))[0])
                        raise ValueError(
                            f"document {d}: class id {labels[d]} has no name ({len(names)} label_names)"
                        )
            labels = _readonly(np.array(labels, copy=True))
        set_(self, "labels", labels)
        set_(self, "label_names", names)

    # ---------------------------------------------------------------- basic properties
    @property
    def num_docs(self) -> int:
        """Number of documents ``D``."""
        return self.doc_offsets.shape[0] - 1

    @property
    def num_tokens(self) -> int:
        """Number of tokens ``N``."""
        return self.words.shape[0]

    @property
    def vocab_size(self) -> int:
        """Vocabulary size ``V``."""
        return len(self.vocabulary)

    @cached_property
    def doc_lengths(self) -> np.ndarray:
        """int64 ``[D]``: number of tokens of each document (read-only)."""
        return _readonly(np.diff(self.doc_offsets))

    @cached_property
    def doc_ids(self) -> np.ndarray:
        """int32 ``[N]``: document index of each token (read-only)."""
        return _readonly(np.repeat(np.arange(self.num_docs, dtype=np.int32), self.doc_lengths))

    @property
    def empty_documents(self) -> np.ndarray:
        """int64 ``[E]``: indices of the documents with no tokens."""
        return np.flatnonzero(self.doc_lengths == 0).astype(np.int64)

    @property
    def label_kind(self) -> str | None:
        """``None``, ``"binary"``, ``"multiclass"``, ``"regression"`` or ``"multilabel"``."""
        if self.labels is None:
            return None
        if self.labels.ndim == 2:
            return "multilabel"
        if self.labels.dtype == np.float64:
            return "regression"
        if self.label_names is not None:
            return "binary" if len(self.label_names) == 2 else "multiclass"
        if self.labels.size == 0 or self.labels.max() <= 1:
            return "binary"
        return "multiclass"

    @property
    def num_classes(self) -> int | None:
        """Number of classes ``L`` (``None`` for ratings or unlabelled corpora)."""
        if self.labels is None or self.labels.dtype == np.float64:
            return None
        if self.labels.ndim == 2:
            return self.labels.shape[1]
        if self.label_names is not None:
            return len(self.label_names)
        return int(self.labels.max()) + 1 if self.labels.size else 0

    def word_counts(self) -> np.ndarray:
        """int64 ``[V]``: number of tokens of each word in the corpus."""
        return np.bincount(self.words, minlength=self.vocab_size).astype(np.int64)

    def document_frequencies(self) -> np.ndarray:
        """int64 ``[V]``: number of documents in which each word occurs."""
        V = self.vocab_size
        if self.num_tokens == 0:
            return np.zeros(V, dtype=np.int64)
        keys = np.sort(self.doc_ids.astype(np.int64) * V + self.words)
        first = np.ones(keys.size, dtype=bool)
        np.not_equal(keys[1:], keys[:-1], out=first[1:])  # first occurrence of each (doc, word)
        return np.bincount(keys[first] % V, minlength=V).astype(np.int64)

    def document(self, d: int) -> np.ndarray:
        """int32 ``[N_d]``: word ids of document ``d`` (a read-only view)."""
        return self.words[self.doc_offsets[d] : self.doc_offsets[d + 1]]

    def document_words(self, d: int) -> list[str]:
        """The tokens of document ``d`` as words (``list[str]`` of length ``N_d``)."""
        return [self.vocabulary[i] for i in self.document(d)]

    def document_term_matrix(self) -> np.ndarray:
        """Dense int64 ``[D, V]`` count matrix (inverse of :meth:`from_document_term`)."""
        counts = np.zeros((self.num_docs, self.vocab_size), dtype=np.int64)
        np.add.at(counts, (self.doc_ids, self.words), 1)
        return counts

    def __repr__(self) -> str:
        kind = self.label_kind or "none"
        if kind in ("multiclass", "multilabel"):
            kind = f"{kind}[{self.num_classes}]"
        return f"Corpus(D={self.num_docs}, N={self.num_tokens}, V={self.vocab_size}, labels={kind})"

    # ---------------------------------------------------------------- label views and checks
    def one_vs_all_labels(self) -> np.ndarray:
        """int64 ``[D, L]`` 0/1 indicators: column ``c`` is 1 for the documents of class ``c``.

        Class-id labels (binary or multiclass, ``L = num_classes``; a binary corpus gives two
        columns) become one-hot rows; multi-label corpora return their labels unchanged.
        Ratings and unlabelled corpora raise ``ValueError``. The result is read-only.
        """
        kind = self.label_kind
        if kind is None:
            raise ValueError("the corpus has no labels to view as one-vs-all indicators")
        if kind == "regression":
            raise ValueError("real-valued ratings cannot be viewed as one-vs-all class indicators")
        if kind == "multilabel":
            return self.labels
        out = np.zeros((self.num_docs, self.num_classes), dtype=np.int64)
        out[np.arange(self.num_docs), self.labels] = 1
        return _readonly(out)

    def as_multilabel(self) -> "Corpus":
        """The same documents with :meth:`one_vs_all_labels` as ``[D, L]`` labels
        (``label_kind == "multilabel"``, same ``label_names``)."""
        if self.label_kind == "multilabel":
            return self
        return Corpus(self.words, self.doc_offsets, self.vocabulary, self.one_vs_all_labels(), self.label_names)

    def require_labels(
        self, kind: str, *, num_classes: int | None = None, at_least_one: bool = False
    ) -> np.ndarray:
        """Check that the corpus has labels a model of ``kind`` can use; return them.

        ``kind`` is ``"binary"`` (class ids 0/1), ``"multiclass"`` (class ids; a binary
        corpus qualifies), ``"regression"`` (float ratings) or ``"multilabel"`` (``[D, L]``
        0/1; class-id corpora must be converted with :meth:`as_multilabel` first). The labels
        are then checked by :func:`check_labels` with ``num_classes`` (default: the corpus's
        :attr:`num_classes`) and ``at_least_one``. Raises ``ValueError`` with a clear message
        (``"class label 7 out of range for 5 classes at document 12"``, ``"document 4 has no
        positive label"``, ...). Returns the read-only label array.
        """
        if kind not in LABEL_KINDS:
            raise ValueError(f"label kind must be one of {', '.join(LABEL_KINDS)}, got {kind!r}")
        have = self.label_kind
        if have is None:
            raise ValueError(f"a model for {kind} labels needs a corpus with labels; this one has none")
        compatible = {
            "binary": ("binary",),
            "multiclass": ("binary", "multiclass"),
            "regression": ("regression",),
            "multilabel": ("multilabel",),
        }[kind]
        if have not in compatible:
            hint = {
                "multilabel": " (view class ids as indicators with corpus.as_multilabel())",
                "regression": " (class ids are not ratings: load the data with float labels)",
            }.get(kind, "")
            if kind == "binary" and have == "multiclass":
                hint = f" ({self.num_classes} classes; a binary model needs 2)"
            raise ValueError(f"a model for {kind} labels cannot use a corpus with {have} labels{hint}")
        if num_classes is None and kind in ("multiclass", "multilabel"):
            num_classes = self.num_classes
        return check_labels(self.labels, kind, num_classes=num_classes, at_least_one=at_least_one)

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        labels=None,
        *,
        label_names: Sequence[str] | None = None,
        stop_words="english",
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        max_vocab: int | None = None,
        min_word_length: int = 2,
        vocabulary: Sequence[str] | None = None,
        min_count: int = 1,
        rank_by: str = "df",
    ) -> "Corpus":
        """Build a corpus from raw texts (``D`` strings; ``labels`` ``[D]`` or ``[D, L]``).

        Each text is tokenised by :func:`tokenize` (lower-case, ASCII words, numbers dropped,
        apostrophes stripped, words shorter than ``min_word_length`` and ``stop_words``
        removed); token order inside a document is the text order.

        Without ``vocabulary`` the vocabulary is the alphabetically sorted set of words whose
        document frequency ``df`` satisfies ``min_df <= df <= max_df`` (an int is a count of
        documents, a float in ``[0, 1]`` a fraction of ``D``) and whose total number of
        occurrences is ``>= min_count``; if ``max_vocab`` is given only the ``max_vocab``
        words ranked highest by ``rank_by`` (``"df"``, ``"count"`` or ``"tfidf"``, see
        :meth:`filter_vocabulary`; ties broken alphabetically) are kept. This is exactly
        ``Corpus.from_texts(texts, ...).filter_vocabulary(...)`` of the unfiltered corpus.
        With ``vocabulary`` (sequence of ``V`` str) that vocabulary is used as is (order kept,
        no frequency filtering) and unknown words are dropped.

        Returns a Corpus with ``D = len(texts)`` documents (possibly empty ones).
        """
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
        stop = _resolve_stop_words(stop_words)
        cache: dict[str, str] = {}
        docs = [_tokenize(t, stop, int(min_word_length), cache) for t in texts]
        if vocabulary is None:
            vocab = tuple(sorted({w for w in cache.values() if w}))  # every word that occurs
        else:
            if isinstance(vocabulary, (str, bytes)):
                raise TypeError("vocabulary must be a sequence of words, not a single string")
            vocab = tuple(vocabulary)
            _check_unique(vocab)
        index = {w: i for i, w in enumerate(vocab)}
        get = index.get
        encoded = [[i for i in map(get, toks) if i is not None] for toks in docs]
        lengths = np.array([len(e) for e in encoded], dtype=np.int64)
        words = np.fromiter((i for e in encoded for i in e), dtype=np.int32, count=int(lengths.sum()))
        corpus = cls(words, _offsets_from_lengths(lengths), vocab, labels, label_names)
        if vocabulary is None:
            corpus = corpus.filter_vocabulary(
                min_df=min_df, max_df=max_df, min_count=min_count, max_vocab=max_vocab, rank_by=rank_by
            )
        return corpus

    @classmethod
    def from_document_term(
        cls,
        matrix,
        vocabulary: Sequence[str],
        labels=None,
        label_names: Sequence[str] | None = None,
    ) -> "Corpus":
        """Build a corpus from a ``[D, V]`` matrix of nonnegative integer counts.

        ``matrix`` is a dense array-like or a scipy.sparse matrix; float entries are accepted
        only if they are whole numbers. Document ``d`` gets word ``v`` repeated
        ``matrix[d, v]`` times, in increasing word-id order. ``vocabulary`` has ``V`` words.
        """
        vocab = tuple(vocabulary)
        if hasattr(matrix, "tocsr"):  # scipy.sparse
            csr = matrix.tocsr(copy=True)
            csr.sum_duplicates()
            csr.sort_indices()
            shape = csr.shape
            data, cols, indptr = np.asarray(csr.data), np.asarray(csr.indices), np.asarray(csr.indptr)
        else:
            dense = np.asarray(matrix)
            if dense.ndim != 2:
                raise ValueError(f"document-term matrix must be 2-D [D, V], got shape {dense.shape}")
            shape = dense.shape
            rows, cols = np.nonzero(dense)
            data = dense[rows, cols]
            indptr = _offsets_from_lengths(np.bincount(rows, minlength=shape[0]))
        if shape[1] != len(vocab):
            raise ValueError(
                f"document-term matrix has {shape[1]} columns but the vocabulary has {len(vocab)} words"
            )
        counts = _as_counts(data, lambda k: int(np.searchsorted(indptr, k, side="right") - 1), cols)
        words = np.repeat(np.asarray(cols, dtype=np.int32), counts)
        token_cum = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        offsets = token_cum[np.asarray(indptr, dtype=np.int64)]
        return cls(words, offsets, vocab, labels, label_names)

    @classmethod
    def from_labeled_counts(
        cls,
        path: str | os.PathLike,
        vocabulary: Sequence[str] | str | os.PathLike,
        label_map: Mapping[str, int] | None = None,
        *,
        label_names: Sequence[str] | None = None,
        label_type: str = "class",
    ) -> "Corpus":
        """Read the ``LABEL WORD_ID:COUNT WORD_ID:COUNT ...`` format (one document per line).

        ``vocabulary`` is a sequence of ``V`` words or the path of a vocabulary file (line
        ``i`` is word ``i``). Word ids are 0-based. Labels are parsed as int class ids, or
        mapped through ``label_map`` (raw label string -> class id; ``label_names`` then
        defaults to the raw strings ordered by class id), or parsed as float ratings with
        ``label_type="rating"``. Tokens of a document are its words repeated ``COUNT`` times,
        in file order. Malformed lines raise ``ValueError`` naming the file and line number.

        Returns a Corpus with one document per non-blank line.
        """
        path = Path(path)
        if isinstance(vocabulary, (str, os.PathLike)):
            vocab = read_vocabulary(vocabulary)
        else:
            vocab = tuple(vocabulary)
        if label_type not in ("class", "rating"):
            raise ValueError(f"label_type must be 'class' or 'rating', got {label_type!r}")
        if label_map is not None and label_names is None:
            by_id = sorted(label_map.items(), key=lambda kv: kv[1])
            if [v for _, v in by_id] == list(range(len(by_id))):
                label_names = tuple(k for k, _ in by_id)
        V = len(vocab)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        raw_labels: list = []
        rests: list[str] = []
        pairs_per_doc = np.zeros(len(lines), dtype=np.int64)
        for i, line in enumerate(lines):
            lineno = i + 1
            if _LINE_RE.fullmatch(line) is None:
                raise ValueError(f"{path}: line {lineno}: {_diagnose(line)}")
            head, rest = _split_head(line)
            if label_map is not None:
                if head not in label_map:
                    raise ValueError(
                        f"{path}: line {lineno}: label {head!r} is not in label_map {sorted(label_map)}"
                    )
                raw_labels.append(int(label_map[head]))
            elif label_type == "rating":
                try:
                    raw_labels.append(float(head))
                except ValueError:
                    raise ValueError(f"{path}: line {lineno}: label {head!r} is not a number") from None
            else:
                try:
                    raw_labels.append(int(head))
                except ValueError:
                    raise ValueError(
                        f"{path}: line {lineno}: label {head!r} is not an integer class id "
                        "(pass label_map or label_type='rating')"
                    ) from None
            pairs_per_doc[i] = rest.count(":")
            rests.append(rest)
        flat = " ".join(rests).replace(":", " ")
        # every line matched _LINE_RE, so the text is a plain list of nonnegative integers
        nums = np.fromstring(flat, dtype=np.int64, sep=" ") if flat.strip() else np.zeros(0, np.int64)
        if nums.size != 2 * int(pairs_per_doc.sum()):  # pragma: no cover - defensive
            nums = np.array(flat.split(), dtype=np.int64)
        ids, counts = nums[0::2], nums[1::2]
        if ids.size and (ids.max() >= V):
            k = int(np.flatnonzero(ids >= V)[0])
            d = int(np.searchsorted(np.cumsum(pairs_per_doc), k, side="right"))
            raise ValueError(
                f"{path}: line {d + 1}: word id {ids[k]} is outside the vocabulary [0, {V})"
            )
        words = np.repeat(ids.astype(np.int32), counts)
        pair_offsets = _offsets_from_lengths(pairs_per_doc)
        token_cum = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        offsets = token_cum[pair_offsets]
        if label_type == "rating":
            labels = np.array(raw_labels, dtype=np.float64)
        else:
            labels = np.array(raw_labels, dtype=np.int64)
            if labels.size and labels.min() < 0:
                d = int(np.flatnonzero(labels < 0)[0])
                raise ValueError(
                    f"{path}: line {d + 1}: class id {labels[d]} is negative "
                    "(pass label_map to map raw labels to 0..L-1, or label_type='rating')"
                )
        return cls(words, offsets, vocab, labels, label_names)

    # ---------------------------------------------------------------- transformations
    def subset(self, indices) -> "Corpus":
        """The documents ``indices`` (int ``[K]``, in that order, or a boolean mask ``[D]``).

        Returns a Corpus with ``K`` documents and the same vocabulary.
        """
        idx = np.asarray(indices)
        if idx.dtype == bool:
            if idx.shape != (self.num_docs,):
                raise ValueError(f"boolean mask must have shape ({self.num_docs},), got {idx.shape}")
            idx = np.flatnonzero(idx)
        if idx.size == 0:
            idx = idx.astype(np.int64)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("indices must be a 1-D integer array or a boolean mask")
        if idx.size and (idx.min() < -self.num_docs or idx.max() >= self.num_docs):
            raise IndexError(f"document index out of range for D={self.num_docs}")
        idx = np.where(idx < 0, idx + self.num_docs, idx).astype(np.int64)
        lengths = self.doc_lengths[idx]
        offsets = _offsets_from_lengths(lengths)
        starts = self.doc_offsets[:-1][idx]
        positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
        labels = None if self.labels is None else self.labels[idx]
        return Corpus(self.words[positions], offsets, self.vocabulary, labels, self.label_names)

    def restrict_vocabulary(self, vocabulary: Sequence[str]) -> tuple["Corpus", int]:
        """Re-encode the documents in another vocabulary (``V'`` words), dropping unknown words.

        Token order is kept; documents may become empty. Returns ``(corpus, n_dropped)`` where
        ``n_dropped`` is the number of tokens whose word is not in ``vocabulary``.
        """
        vocab = tuple(vocabulary)
        _check_unique(vocab)
        index = {w: i for i, w in enumerate(vocab)}
        mapping = np.array([index.get(w, -1) for w in self.vocabulary], dtype=np.int64)
        new = mapping[self.words] if self.num_tokens else np.zeros(0, dtype=np.int64)
        keep = new >= 0
        lengths = np.bincount(self.doc_ids[keep], minlength=self.num_docs).astype(np.int64)
        dropped = int(self.num_tokens - keep.sum())
        corpus = Corpus(new[keep], _offsets_from_lengths(lengths), vocab, self.labels, self.label_names)
        return corpus, dropped

    def remove_words(self, words: Iterable[str]) -> "Corpus":
        """Drop the given words (e.g. stop words) from the vocabulary and from every document.

        Words not in the vocabulary are ignored. The remaining words keep their relative
        order and are re-indexed ``0..V'-1``.
        """
        drop = set(words)
        return self.restrict_vocabulary([w for w in self.vocabulary if w not in drop])[0]

    def filter_vocabulary(
        self,
        *,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        min_count: int = 1,
        max_vocab: int | None = None,
        rank_by: str = "df",
    ) -> "Corpus":
        """Keep the words that pass frequency filters computed on this corpus.

        A word is kept if its document frequency ``df`` satisfies ``min_df <= df <= max_df``
        (an int is a number of documents, a float in ``[0, 1]`` a fraction of ``D``: for
        example ``max_df=0.25`` drops words in more than 25 % of the documents) and it occurs
        at least ``min_count`` times in all; words that do not occur are always dropped. If
        ``max_vocab`` is given, only the ``max_vocab`` remaining words with the highest score
        are kept, the score being ``rank_by``:

        * ``"df"``    -- document frequency;
        * ``"count"`` -- total number of occurrences;
        * ``"tfidf"`` -- total TF-IDF over the documents, ``sum_d tf(w, d) * log(D / df(w))``
          with raw counts as ``tf`` (the ranking of the supervised-HDP paper), i.e.
          ``count(w) * log(D / df(w))``.

        Ties are broken alphabetically. Kept words keep their relative order and are
        re-indexed ``0..V'-1``; documents may become empty. Returns a new Corpus (or ``self``
        if every word is kept).
        """
        keep = select_words(
            self.vocabulary,
            self.document_frequencies(),
            self.word_counts(),
            self.num_docs,
            min_df=min_df,
            max_df=max_df,
            min_count=min_count,
            max_vocab=max_vocab,
            rank_by=rank_by,
        )
        if keep.all():
            return self
        return self.restrict_vocabulary([self.vocabulary[i] for i in np.flatnonzero(keep)])[0]

    def compact(self) -> "Corpus":
        """Keep only the words that occur in the corpus (relative order kept, ids re-indexed)."""
        used = self.word_counts() > 0
        if used.all():
            return self
        return self.restrict_vocabulary([w for w, u in zip(self.vocabulary, used) if u])[0]

    def drop_empty(self) -> tuple["Corpus", np.ndarray]:
        """Remove the empty documents. Returns ``(corpus, kept_indices)`` (int64 ``[D']``)."""
        kept = np.flatnonzero(self.doc_lengths > 0).astype(np.int64)
        if kept.size == self.num_docs:
            return self, kept
        return self.subset(kept), kept

    def require_nonempty(self, what: str = "training") -> "Corpus":
        """Raise ``ValueError`` if any document is empty (listing up to 10 indices); else return self."""
        empty = self.empty_documents
        if empty.size:
            shown = ", ".join(str(int(i)) for i in empty[:10])
            more = f", ... ({empty.size} in all)" if empty.size > 10 else ""
            raise ValueError(
                f"the {what} corpus has {empty.size} empty document(s) (indices {shown}{more}); "
                "remove them with `corpus, kept = corpus.drop_empty()`"
            )
        return self

    def kfold_splits(
        self, num_folds: int = 5, seed: int = 0, stratify: bool = True
    ) -> list[tuple["Corpus", "Corpus", int]]:
        """K-fold cross-validation splits, each re-encoded like :meth:`train_test_split`.

        Folds come from :func:`kfold_indices` (stratified by class when ``stratify`` and the
        labels are ``[D]`` class ids). Returns ``num_folds`` triples
        ``(train, test, n_test_tokens_dropped)``; fold ``k``'s test documents are the ``k``-th
        test part, in original order, and its vocabulary the words occurring in its training part.
        """
        target = self.labels if self.labels is not None else self.num_docs
        out = []
        for train_idx, test_idx in kfold_indices(target, num_folds, seed, stratify):
            train = self.subset(train_idx).compact()
            test, dropped = self.subset(test_idx).restrict_vocabulary(train.vocabulary)
            out.append((train, test, dropped))
        return out

    def train_test_split(
        self, test_fraction: float = 0.25, seed: int = 0, stratify: bool = True
    ) -> tuple["Corpus", "Corpus", int]:
        """Random train/test split, re-encoded to the vocabulary of the training part.

        Documents are split by :func:`split_indices` (``numpy.random.default_rng(seed)``,
        stratified by class when ``stratify`` and the labels are ``[D]`` class ids; both parts
        keep the original document order). The training corpus is then restricted to the words
        that occur in it (``V'`` words, relative order kept) and the test corpus is re-encoded
        to that vocabulary, dropping the other words.

        Returns ``(train, test, n_test_tokens_dropped)``.
        """
        target = self.labels if self.labels is not None else self.num_docs
        train_idx, test_idx = split_indices(target, test_fraction, seed, stratify)
        train = self.subset(train_idx).compact()
        test, dropped = self.subset(test_idx).restrict_vocabulary(train.vocabulary)
        return train, test, dropped


def _as_counts(data, row_of, cols) -> np.ndarray:
    data = np.asarray(data)
    if data.size == 0:
        return np.zeros(0, dtype=np.int64)
    if data.dtype == bool:
        return data.astype(np.int64)
    if not np.issubdtype(data.dtype, np.number) or np.iscomplexobj(data):
        raise ValueError(f"document-term counts must be numbers, got dtype {data.dtype}")
    if np.issubdtype(data.dtype, np.floating):
        bad = ~np.isfinite(data) | (data != np.round(data))
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"document-term counts must be whole numbers: entry [{row_of(k)}, {int(cols[k])}] is {data[k]}"
            )
    neg = data < 0
    if np.any(neg):
        k = int(np.flatnonzero(neg)[0])
        raise ValueError(
            f"document-term counts must be nonnegative: entry [{row_of(k)}, {int(cols[k])}] is {data[k]}"
        )
    return data.astype(np.int64)
