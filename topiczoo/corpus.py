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

Input is checked once, when the corpus is built (``Corpus.__post_init__``; the file readers
check only what the file can tell and name its lines). Errors are
:class:`~topiczoo.errors.InputError` (a ``ValueError``) or
:class:`~topiczoo.errors.InputTypeError` (a ``TypeError``) naming the document, option, or
file and line. The constructors never return an empty corpus without saying why: no
documents or no tokens at all is an error; documents emptied by tokenizing, letters outside
every token and documents removed for a missing label give a
:class:`~topiczoo.errors.DataLossWarning` with the counts, and :meth:`Corpus.report` lists
every token dropped and by which rule.

The module is split by concern: tokenizing and vocabulary filters in :mod:`topiczoo.text`,
label checks in :mod:`topiczoo.labels`, file readers in :mod:`topiczoo.readers`, index splits
in :mod:`topiczoo.splits`, exceptions in :mod:`topiczoo.errors`; their public names
(:func:`tokenize`, :func:`english_stop_words`, :func:`check_labels`, :func:`read_vocabulary`,
:func:`split_indices`, :func:`kfold_indices`, ...) stay importable from here.

Only numpy is needed; scikit-learn provides the English stop list and scipy is used only when
a sparse document-term matrix is passed to :meth:`Corpus.from_document_term`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import DataLossWarning, InputError, InputTypeError
from .labels import (
    LABEL_KINDS,
    ClassIdNames,
    check_classes,
    check_kind,
    check_label_names,
    check_labels,
    class_values,
    missing_label_positions,
    normalize_labels,
    readonly,
    shown,
    take_labels,
)
from .readers import MAX_TOKENS, naming_lines, read_labeled_counts, read_vocabulary
from .splits import kfold_indices, split_indices
from .text import (
    ASCII_TOKENIZER,
    CheckedVocabulary,
    Tokenizer,
    check_vocabulary,
    english_stop_words,
    is_choice,
    make_tokenizer,
    select_words,
    tokenize,
)

__all__ = [
    "ASCII_TOKENIZER",
    "Corpus",
    "DataLossWarning",
    "InputError",
    "InputTypeError",
    "LABEL_KINDS",
    "Losses",
    "Tokenizer",
    "check_labels",
    "english_stop_words",
    "kfold_indices",
    "missing_label_positions",
    "read_vocabulary",
    "split_indices",
    "tokenize",
]

#: values of the ``missing_labels`` option of :meth:`Corpus.from_texts` and
#: :meth:`Corpus.from_document_term`
MISSING_LABELS = ("error", "drop")


def _offsets_from_lengths(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _some(indices, limit: int = 10) -> str:
    """``"4, 17, 99"`` or ``"0, 1, ..., 9, ... (15 in all)"``."""
    idx = [int(i) for i in indices]
    shown = ", ".join(map(str, idx[:limit]))
    return shown + (f", ... ({len(idx)} in all)" if len(idx) > limit else "")


# --------------------------------------------------------------------------------------------
# what was dropped
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Losses:
    """What one construction or transformation step dropped (see :meth:`Corpus.report`).

    ``dropped`` pairs a reason (``"stop words"``, ``"in fewer than min_df=5 documents"``,
    ...) with the number of tokens it removed, in the order the rules apply (a token counts
    under the first rule that removes it). ``documents_emptied`` counts documents that had
    text (or tokens) before the step and none after it. ``labels_missing`` is the number of
    documents removed because their label was missing (None when the step has no labels to
    check) and ``removed_documents`` their positions in the input.
    """

    step: str
    tokens_in: int
    dropped: tuple[tuple[str, int], ...] = ()
    skipped_characters: int = 0
    documents_emptied: int = 0
    labels_missing: int | None = None
    removed_documents: tuple[int, ...] = ()

    @property
    def tokens_dropped(self) -> int:
        """Tokens dropped by this step, all reasons together."""
        return sum(n for _, n in self.dropped)

    def lines(self) -> list[str]:
        """The step's report as lines: tokens in and kept, then each reason for a drop."""
        kept = self.tokens_in - self.tokens_dropped
        out = [f"{self.step}: {self.tokens_in:,} tokens in, {kept:,} kept"]
        drops = [f"{n:,} {what}" for what, n in self.dropped if n]
        out.append("  dropped: " + (", ".join(drops) if drops else "nothing"))
        if self.skipped_characters:
            out.append(f"  letters/digits outside every token: {self.skipped_characters:,}")
        out.append(f"  documents emptied: {self.documents_emptied:,}")
        if self.labels_missing is not None:
            removed = f" (removed: input positions {_some(self.removed_documents)})" if self.removed_documents else ""
            out.append(f"  labels missing: {self.labels_missing:,}{removed}")
        return out


def _warn_losses(step: Losses, num_docs: int, where: str) -> None:
    """A :class:`DataLossWarning` with the counts, if the step lost more than its rules promise."""
    parts = []
    if step.documents_emptied:
        parts.append(f"{step.documents_emptied:,} of {num_docs:,} documents have no token left")
    if step.skipped_characters:
        parts.append(f"{step.skipped_characters:,} letters/digits are outside every token")
    removed = len(step.removed_documents)
    if removed:
        parts.append(
            f"{removed:,} document{'s' if removed > 1 else ''} with a missing label removed "
            f"(input position{'s' if removed > 1 else ''} {_some(step.removed_documents)})"
        )
    if parts:
        warnings.warn(f"{where}: " + "; ".join(parts) + " (corpus.report() lists every drop)", DataLossWarning, stacklevel=3)


def nested_lengths(x) -> list[int] | None:
    """The lengths of ``x``'s items when ``x`` is a list, tuple or 1-D object array whose
    items are all sequences (lists, tuples, arrays; not str), such as token-id lists, one per
    document; None otherwise."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind != "O" or x.ndim != 1:
            return None
    elif not isinstance(x, (list, tuple)):
        return None
    if not len(x) or not all(isinstance(item, (list, tuple, np.ndarray)) for item in x):
        return None
    return [len(item) for item in x]


def describe_lengths(lengths: list[int]) -> str:
    shown = ", ".join(map(str, lengths[:5]))
    return shown + (f", ... ({len(lengths)} in all)" if len(lengths) > 5 else "")


#: the corpus of per-document token-id lists ``docs`` (word ids into ``vocabulary``)
TOKEN_ID_RECIPE = "Corpus(np.concatenate(docs), np.cumsum([0, *map(len, docs)]), vocabulary)"


def text_columns(frame) -> list[str]:
    """The columns of a pandas DataFrame that hold text (str values)."""
    out = []
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "OUS" and any(isinstance(v, str) for v in column.head(100)):
            out.append(str(name))
    return out


def _check_texts(texts) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise InputTypeError(
            "Corpus.from_texts takes a sequence of texts, one str per document, not a single "
            f"{'string' if isinstance(texts, str) else 'bytes object'}; for one document pass [text]"
        )
    if hasattr(texts, "columns") and hasattr(texts, "iloc"):  # a DataFrame iterates its names
        columns = text_columns(texts) or [str(c) for c in texts.columns]
        raise InputTypeError(
            f"texts is a pandas DataFrame ({texts.shape[0]} rows, columns "
            f"{', '.join(map(repr, map(str, texts.columns)))}); pass its column of texts, "
            f"e.g. frame[{columns[0]!r}] (a Series of str, one per document)"
        )
    if isinstance(texts, (set, frozenset, Mapping)) or not isinstance(texts, Iterable):
        raise InputTypeError(
            f"texts must be an ordered sequence of str (document d is texts[d]), got {type(texts).__name__}"
        )
    if isinstance(texts, np.ndarray) and texts.ndim != 1:
        raise InputTypeError(f"texts must be a 1-D sequence of D str, got an array of shape {texts.shape}")
    texts = list(texts)
    for i, t in enumerate(texts):
        if isinstance(t, str):
            continue
        if isinstance(t, (list, tuple, np.ndarray)):
            raise InputTypeError(
                f"texts[{i}] is a {type(t).__name__} of {len(t)} items, not a str: from_texts takes "
                "one text per document. For documents split into tokens already, join each "
                "into one str (' '.join(tokens)); the corpus of token-id lists docs is "
                + TOKEN_ID_RECIPE
            )
        if t is None or type(t).__name__ == "NAType" or (isinstance(t, float) and t != t):
            raise InputTypeError(
                f"texts[{i}] is missing ({shown(t)}); every document needs a str (use '' for a "
                "document without text)"
            )
        raise InputTypeError(f"texts[{i}] is {type(t).__name__}, expected str")
    return texts


def _check_flag(name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise InputTypeError(f"{name} must be True or False, got {shown(value)}")


def _check_missing_option(missing_labels) -> None:
    if not is_choice(missing_labels, MISSING_LABELS):
        raise InputError(f"missing_labels must be 'error' or 'drop', got {shown(missing_labels)}")


def _filter_reasons(min_df, max_df, min_count, max_vocab, rank_by) -> dict[str, str]:
    return {
        "min_df": f"in fewer than min_df={min_df} documents",
        "max_df": f"in more than max_df={max_df} documents",
        "min_count": f"rarer than min_count={min_count}",
        "max_vocab": f"beyond max_vocab={max_vocab} (by {rank_by})",
    }


# --------------------------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------------------------


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
        Given as any array-like: integers (or bools) are class ids, floats are ratings (finite),
        2-D 0/1 rows are multi-label indicators, and str are class names, encoded as class ids
        via ``label_names`` when given, else in sorted order (``label_names`` is then filled
        in). Missing labels (None, NaN, pandas NA), bytes, str mixed with numbers and other
        objects are errors naming the document.
    label_names : ``tuple[str, ...]`` or None
        Names of the ``L`` classes (class-id and multi-label corpora only).
    losses : ``tuple[Losses, ...]``
        What the constructors and transformations that made this corpus dropped, step by
        step (empty for a corpus built from arrays); :meth:`report` prints it.

    Empty documents are allowed (test documents may lose all their words when restricted to a
    training vocabulary); see :attr:`empty_documents`, :meth:`drop_empty` and
    :meth:`require_nonempty`.
    """

    words: np.ndarray
    doc_offsets: np.ndarray
    vocabulary: tuple[str, ...]
    labels: np.ndarray | None = None
    label_names: tuple[str, ...] | None = None
    losses: tuple[Losses, ...] = field(default=(), compare=False, repr=False)

    # ---------------------------------------------------------------- validation
    def __post_init__(self) -> None:
        set_ = object.__setattr__

        vocab = check_vocabulary(self.vocabulary)
        set_(self, "vocabulary", vocab)
        V = len(vocab)

        words = _as_index_array(self.words, "words", "[N]")
        if words.size and not np.issubdtype(words.dtype, np.integer):
            raise InputError(f"words must hold integer word ids, got dtype {words.dtype}")
        offsets = _as_index_array(self.doc_offsets, "doc_offsets", "[D+1]")
        if offsets.size < 1:
            raise InputError(f"doc_offsets must be 1-D [D+1] with D >= 0, got shape {offsets.shape}")
        # an empty corpus may come as np.zeros(1) (a float 0): any other offset must be an integer
        if not np.issubdtype(offsets.dtype, np.integer) and not (offsets.size == 1 and offsets[0] == 0):
            raise InputError(f"doc_offsets must be integers, got dtype {offsets.dtype}")
        if offsets.dtype.kind == "u" and offsets.max() > np.iinfo(np.int64).max:
            raise InputError(f"doc_offsets must end at N={words.shape[0]} (the number of tokens), got {offsets.max()}")
        offsets = offsets.astype(np.int64)
        N = words.shape[0]
        if offsets[0] != 0:
            raise InputError(f"doc_offsets must start at 0, got {offsets[0]}")
        steps = np.diff(offsets)
        if np.any(steps < 0):
            d = int(np.flatnonzero(steps < 0)[0])
            raise InputError(
                f"doc_offsets must be non-decreasing: doc_offsets[{d}]={offsets[d]} > "
                f"doc_offsets[{d + 1}]={offsets[d + 1]} (document {d} has negative length)"
            )
        if offsets[-1] != N:
            raise InputError(f"doc_offsets must end at N={N} (the number of tokens), got {offsets[-1]}")
        if N:
            bad = (words < 0) | (words >= V)
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                d = int(np.searchsorted(offsets, i, side="right") - 1)
                raise InputError.about_document(
                    d, f"word id {int(words[i])} is outside the vocabulary [0, {V}) (token {i - offsets[d]} of the document)"
                )
        set_(self, "words", readonly(np.array(words, dtype=np.int32, copy=True)))
        set_(self, "doc_offsets", readonly(np.array(offsets, dtype=np.int64, copy=True)))

        names = check_label_names(self.label_names)
        labels = self.labels
        if labels is not None:
            labels, names = normalize_labels(labels, names, offsets.size - 1)
            labels = readonly(np.array(labels, copy=True))
        set_(self, "labels", labels)
        set_(self, "label_names", names)

        losses = self.losses
        if not isinstance(losses, tuple) or not all(isinstance(x, Losses) for x in losses):
            raise InputTypeError("losses must be a tuple of topiczoo.corpus.Losses (leave it out)")

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
        return readonly(np.diff(self.doc_offsets))

    @cached_property
    def doc_ids(self) -> np.ndarray:
        """int32 ``[N]``: document index of each token (read-only)."""
        return readonly(np.repeat(np.arange(self.num_docs, dtype=np.int32), self.doc_lengths))

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

    @property
    def classes(self) -> np.ndarray | None:
        """What the class ids ``0..L-1`` stand for (``None`` for ratings or no labels): the
        class names, str ``[L]``, when the classes are named (labels given as class names,
        encoded in sorted order unless ``label_names`` gives the order, or ids with
        ``label_names``); the ids, int64 ``[L]``, for unnamed class ids. For multi-label
        corpora, what the ``L`` columns stand for. ``corpus.classes[corpus.labels]`` gives
        the labels as they were given; predictions give them back the same way
        (:meth:`Prediction.labels <topiczoo.predict.Prediction.labels>`)."""
        if self.num_classes is None:
            return None
        return class_values(self.label_names, self.num_classes)

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
        Ratings and unlabelled corpora raise :class:`InputError`. The result is read-only.
        """
        kind = self.label_kind
        if kind is None:
            raise InputError("the corpus has no labels to view as one-vs-all indicators")
        if kind == "regression":
            raise InputError("real-valued ratings cannot be viewed as one-vs-all class indicators")
        if kind == "multilabel":
            return self.labels
        out = np.zeros((self.num_docs, self.num_classes), dtype=np.int64)
        out[np.arange(self.num_docs), self.labels] = 1
        return readonly(out)

    def as_multilabel(self) -> "Corpus":
        """The same documents with :meth:`one_vs_all_labels` as ``[D, L]`` labels
        (``label_kind == "multilabel"``, same ``label_names``)."""
        if self.label_kind == "multilabel":
            return self
        return Corpus(self.words, self.doc_offsets, self.vocabulary, self.one_vs_all_labels(), self.label_names, self.losses)

    def require_labels(
        self, kind: str, *, num_classes: int | None = None, at_least_one: bool = False
    ) -> np.ndarray:
        """Check that the corpus has labels a model of ``kind`` can use; return them.

        ``kind`` is ``"binary"`` (class ids 0/1), ``"multiclass"`` (class ids; a binary
        corpus qualifies), ``"regression"`` (float ratings) or ``"multilabel"`` (``[D, L]``
        0/1; class-id corpora must be converted with :meth:`as_multilabel` first). The labels
        were checked when the corpus was built; this adds what the model needs: the class
        range for ``num_classes`` (default: the corpus's :attr:`num_classes`), the column
        count and, with ``at_least_one``, a positive label in every row. Raises
        :class:`InputError` with a clear message (``"class label 7 out of range for 5 classes
        at document 12"``, ``"document 4 has no positive label"``, ...). Returns the
        read-only label array.
        """
        kind, num_classes = check_kind(kind, num_classes)
        have = self.label_kind
        if have is None:
            raise InputError(f"a model for {kind} labels needs a corpus with labels; this one has none")
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
            raise InputError(f"a model for {kind} labels cannot use a corpus with {have} labels{hint}")
        if num_classes is None and kind in ("multiclass", "multilabel"):
            num_classes = self.num_classes
        return check_classes(self.labels, kind, num_classes, at_least_one)

    # ---------------------------------------------------------------- what was dropped
    def report(self) -> str:
        """A short text: the corpus, what each step that made it dropped, its empty documents.

        Each construction or transformation step gives the tokens it found and kept, the tokens
        dropped by each rule (stop words, length, digits, vocabulary filters, unknown words),
        letters/digits outside every token, documents emptied and labels missing; the last
        line lists the documents that are empty now (:attr:`empty_documents`). Example::

            Corpus(D=3, N=4, V=3, labels=binary)
            from_texts (3 texts, default tokenizer): 9 tokens in, 4 kept
              dropped: 4 stop words, 1 shorter than 2 characters
              documents emptied: 1
              labels missing: 0
            empty documents: 1 (index 2)
        """
        lines = [repr(self)]
        if not self.losses:
            lines.append("built from arrays: no drops recorded")
        for step in self.losses:
            lines.extend(step.lines())
        empty = self.empty_documents
        which = "index" if empty.size == 1 else "indices"
        lines.append(f"empty documents: {empty.size:,}" + (f" ({which} {_some(empty)})" if empty.size else ""))
        return "\n".join(lines)

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        labels=None,
        *,
        label_names: Sequence[str] | None = None,
        tokenizer: Tokenizer | None = None,
        vocabulary: Sequence[str] | None = None,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        min_count: int = 1,
        max_vocab: int | None = None,
        rank_by: str = "df",
        missing_labels: str = "error",
        allow_empty: bool = False,
        **tokenizer_options,
    ) -> "Corpus":
        """Build a corpus from raw texts: ``texts`` is a sequence of ``D`` str (one per
        document, not one string), ``labels`` ``[D]`` or ``[D, L]`` (see the class docstring).

        **Tokenizing** is done by ``tokenizer`` (default ``Tokenizer()``) with any of its
        options overridden by keyword: ``token_pattern``, ``lowercase`` (default True),
        ``stop_words`` (default ``"english"``), ``min_word_length`` (default 2), ``digits``
        (default ``"keep"``: ids such as ``w123`` and numbers stay; ``"drop-numbers"``,
        ``"drop"``), ``unicode_form`` (default ``"NFKD"``), ``strip_accents`` (default True);
        see :mod:`topiczoo.text`. The named data sets use
        :data:`~topiczoo.text.ASCII_TOKENIZER` (ASCII words, tokens with digits dropped).
        Token order inside a document is the text order.

        **Vocabulary**: without ``vocabulary`` it is the alphabetically sorted set of words
        whose document frequency ``df`` satisfies ``min_df <= df <= max_df`` (an int is a count
        of documents, a float in ``[0, 1]`` a fraction of ``D``; defaults keep every word) and
        whose total number of occurrences is ``>= min_count`` (default 1); if ``max_vocab`` is
        given only the ``max_vocab`` words ranked highest by ``rank_by`` (``"df"``,
        ``"count"`` or ``"tfidf"``, see :meth:`filter_vocabulary`; ties broken
        alphabetically) are kept. This is exactly ``Corpus.from_texts(texts,
        ...).filter_vocabulary(...)`` of the unfiltered corpus. With ``vocabulary`` (sequence
        of ``V`` distinct str) that vocabulary is used as is and unknown words are dropped;
        the frequency filters are then errors (they would be ignored).

        **Missing labels** (None, NaN, pandas NA) are an error naming the document with
        ``missing_labels="error"`` (default); ``"drop"`` removes those documents with a
        :class:`DataLossWarning` (their input positions are in the warning and the report).

        **What was dropped** is in :meth:`report`: tokens per rule, letters/digits outside
        every token, documents emptied, labels missing. Documents emptied, skipped letters
        and removed documents also give a :class:`DataLossWarning` with the counts. No texts,
        or no token left in any document, is an :class:`InputError` saying which rules
        removed what, unless ``allow_empty=True`` (documents to score, not to fit: a model
        gives a document without tokens the prior's prediction), which returns the corpus of
        ``D`` documents without tokens (``D = 0`` for no texts) instead.

        Returns a Corpus with ``D = len(texts)`` documents (fewer only with
        ``missing_labels="drop"``), possibly with empty documents.
        """
        tok = make_tokenizer(tokenizer, **tokenizer_options)
        texts = _check_texts(texts)
        _check_missing_option(missing_labels)
        _check_flag("allow_empty", allow_empty)
        filters = dict(min_df=min_df, max_df=max_df, min_count=min_count, max_vocab=max_vocab, rank_by=rank_by)
        if vocabulary is not None:
            changed = [k for k, v in filters.items() if not _same(v, _FILTER_DEFAULTS[k])]
            if changed:
                raise InputError(
                    f"{', '.join(changed)} filter the vocabulary built from the texts; with "
                    "vocabulary= given they would be ignored (filter afterwards with filter_vocabulary)"
                )
            given = check_vocabulary(vocabulary, "vocabulary (the vocabulary= option)")
        num_in = len(texts)
        texts, labels, removed = _drop_missing(texts, labels, missing_labels, "texts")
        if not texts and not (allow_empty and not removed):
            raise InputError(
                "Corpus.from_texts: no texts (an empty sequence)" if not removed
                else f"Corpus.from_texts: all {num_in} documents have a missing label"
            )
        found = tok.tokenize_many(texts)
        vocab = given if vocabulary is not None else CheckedVocabulary(found.words)
        get = {w: i for i, w in enumerate(vocab)}.get
        encoded = [[i for i in map(get, toks) if i is not None] for toks in found.documents]
        lengths = np.array([len(e) for e in encoded], dtype=np.int64)
        words = np.fromiter((i for e in encoded for i in e), dtype=np.int32, count=int(lengths.sum()))
        dropped = [(tok.rule_name(rule), n) for rule, n in found.dropped.items()]
        if vocabulary is not None:
            dropped.append(("not in the given vocabulary", sum(map(len, found.documents)) - int(lengths.sum())))
        corpus = cls(words, _offsets_from_lengths(lengths), vocab, labels, label_names)
        if vocabulary is None and corpus.num_docs:
            keep, by_filter = select_words(
                vocab, corpus.document_frequencies(), corpus.word_counts(), corpus.num_docs, **filters
            )
            reasons = _filter_reasons(**filters)
            dropped += [(reasons[k], n) for k, n in by_filter.items()]
            if not keep.all():
                corpus = corpus._reencode(CheckedVocabulary(vocab[i] for i in np.flatnonzero(keep)))[0]
        had_text = (found.raw_per_doc > 0) | (found.skipped_per_doc > 0)
        step = Losses(
            f"from_texts ({num_in:,} texts, {tok.describe()})",
            int(found.raw_per_doc.sum()),
            tuple(dropped),
            int(found.skipped_per_doc.sum()),
            int((had_text & (corpus.doc_lengths == 0)).sum()),
            None if labels is None else len(removed),
            removed,
        )
        if corpus.num_tokens == 0 and not allow_empty:
            if step.tokens_in == 0:
                skipped = f" ({step.skipped_characters:,} letters/digits outside every token)" if step.skipped_characters else ""
                why = f"none of the {corpus.num_docs:,} texts contains a token of token_pattern {tok.token_pattern!r}{skipped}"
            else:
                drops = ", ".join(f"{n:,} {what}" for what, n in step.dropped if n)
                why = f"all {step.tokens_in:,} tokens of the {corpus.num_docs:,} texts were dropped: {drops}"
            raise InputError(f"Corpus.from_texts: {why}; the corpus would be empty")
        _warn_losses(step, corpus.num_docs, "Corpus.from_texts")
        return corpus._logged(step)

    @classmethod
    def from_document_term(
        cls,
        matrix,
        vocabulary: Sequence[str],
        labels=None,
        label_names: Sequence[str] | None = None,
        *,
        missing_labels: str = "error",
        allow_empty: bool = False,
    ) -> "Corpus":
        """Build a corpus from a ``[D, V]`` matrix of nonnegative integer counts.

        ``matrix`` is a dense array-like or a scipy.sparse matrix; float entries are accepted
        only if they are whole numbers, bool entries count 0/1. Document ``d`` gets word ``v``
        repeated ``matrix[d, v]`` times, in increasing word-id order. ``vocabulary`` has ``V``
        distinct words. ``missing_labels`` as for :meth:`from_texts`. A matrix without rows,
        or with only zeros, is an :class:`InputError` (the corpus would be empty), unless
        ``allow_empty=True`` (documents to score, as for :meth:`from_texts`): then it is the
        corpus of its ``D`` rows without tokens (``D = 0`` for no rows).
        """
        vocab = check_vocabulary(vocabulary)
        _check_missing_option(missing_labels)
        _check_flag("allow_empty", allow_empty)
        if isinstance(matrix, (str, bytes)):
            raise InputTypeError("the document-term matrix must be a 2-D [D, V] array, not a string")
        if hasattr(matrix, "tocsr"):  # scipy.sparse
            mat = matrix.tocsr(copy=True)
        else:
            lengths = nested_lengths(matrix)
            if lengths is not None and len(set(lengths)) > 1:
                raise InputError(
                    f"the document-term matrix must be a 2-D [D, V] array of counts, each row "
                    f"V = {len(vocab)} counts; got {len(lengths)} rows of lengths "
                    f"{describe_lengths(lengths)} (token-id lists docs? their corpus is {TOKEN_ID_RECIPE})"
                )
            try:
                mat = np.asarray(matrix)
            except (ValueError, TypeError) as err:
                raise InputError(f"the document-term matrix must be a 2-D [D, V] array of counts ({err})") from None
        if len(mat.shape) != 2:
            raise InputError(f"document-term matrix must be 2-D [D, V], got shape {mat.shape}")
        if mat.shape[1] != len(vocab):
            raise InputError(
                f"document-term matrix has {mat.shape[1]} columns but the vocabulary has {len(vocab)} words"
            )
        num_in = mat.shape[0]
        if num_in == 0 and not allow_empty:
            raise InputError("the document-term matrix has no rows (documents); the corpus would be empty")
        _, labels, removed = _drop_missing(range(num_in), labels, missing_labels, "matrix rows")
        if removed:
            if len(removed) == num_in:
                raise InputError(f"all {num_in} documents have a missing label")
            mat = mat[np.setdiff1d(np.arange(num_in), removed)]
        if hasattr(mat, "tocsr"):
            mat.sum_duplicates()
            mat.sort_indices()
            data, cols, indptr = np.asarray(mat.data), np.asarray(mat.indices), np.asarray(mat.indptr)
        else:
            if mat.dtype.kind not in "biuf":
                raise InputError(f"document-term counts must be numbers, got dtype {mat.dtype}")
            rows, cols = np.nonzero(mat)
            data = mat[rows, cols]
            indptr = _offsets_from_lengths(np.bincount(rows, minlength=mat.shape[0]))
        counts = _as_counts(data, lambda k: int(np.searchsorted(indptr, k, side="right") - 1), cols)
        total = int(counts.sum())
        if total > MAX_TOKENS:
            raise InputError(f"the document-term matrix holds {total:,} tokens, more than {MAX_TOKENS:,}")
        if total == 0 and not allow_empty:
            raise InputError("every entry of the document-term matrix is zero; the corpus would be empty")
        words = np.repeat(np.asarray(cols, dtype=np.int32), counts)
        token_cum = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        offsets = token_cum[np.asarray(indptr, dtype=np.int64)]
        step = Losses(
            f"from_document_term ({num_in:,} x {len(vocab):,} matrix)",
            total,
            labels_missing=None if labels is None else len(removed),
            removed_documents=removed,
        )
        corpus = cls(words, offsets, vocab, labels, label_names, (step,))
        _warn_losses(step, corpus.num_docs, "Corpus.from_document_term")
        return corpus

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
        in file order. The file must be UTF-8 with ASCII digits (see :mod:`topiczoo.readers`);
        every problem, in the file or in the corpus it makes (a word id outside the
        vocabulary, a negative class id, an infinite rating), raises :class:`InputError`
        naming the file and line. An empty file, or one whose documents are all empty, is an
        error too.

        Returns a Corpus with one document per line (trailing blank lines ignored).
        """
        if isinstance(vocabulary, str) and not os.path.isfile(vocabulary):
            raise InputError(
                f"vocabulary {vocabulary!r} is not a file: a str vocabulary is the path of a "
                "vocabulary file (pass a sequence of words otherwise)"
            )
        if isinstance(vocabulary, (str, os.PathLike)):
            vocab = read_vocabulary(vocabulary)
        else:
            vocab = check_vocabulary(vocabulary)
        parsed = read_labeled_counts(path, label_map=label_map, label_names=label_names, label_type=label_type)
        step = Losses(f"from_labeled_counts ({os.fspath(path)})", int(parsed.words.size))
        with naming_lines(path):
            corpus = cls(parsed.words, parsed.doc_offsets, vocab, parsed.labels, parsed.label_names, (step,))
        if corpus.num_tokens == 0:
            raise InputError(
                f"{path}: all {corpus.num_docs:,} documents are empty (no WORD_ID:COUNT pair with a "
                "count above 0); the corpus would be empty"
            )
        return corpus

    # ---------------------------------------------------------------- transformations
    def _reencode(self, vocab: CheckedVocabulary) -> tuple["Corpus", int, int]:
        """``(corpus in vocab, tokens dropped, documents emptied)``; token order kept."""
        index = {w: i for i, w in enumerate(vocab)}
        mapping = np.array([index.get(w, -1) for w in self.vocabulary], dtype=np.int64)
        new = mapping[self.words] if self.num_tokens else np.zeros(0, dtype=np.int64)
        keep = new >= 0
        lengths = np.bincount(self.doc_ids[keep], minlength=self.num_docs).astype(np.int64)
        emptied = int(((self.doc_lengths > 0) & (lengths == 0)).sum())
        corpus = Corpus(new[keep], _offsets_from_lengths(lengths), vocab, self.labels, self.label_names, self.losses)
        return corpus, int(self.num_tokens - keep.sum()), emptied

    def _logged(self, step: Losses) -> "Corpus":
        """This corpus (just built here, not yet handed out) with ``step`` appended to its losses."""
        object.__setattr__(self, "losses", self.losses + (step,))
        return self

    def subset(self, indices) -> "Corpus":
        """The documents ``indices`` (int ``[K]``, in that order, or a boolean mask ``[D]``).

        Returns a Corpus with ``K`` documents and the same vocabulary.
        """
        try:
            idx = np.asarray(indices)
        except (ValueError, TypeError) as err:
            raise InputError(f"indices must be a 1-D integer array or a boolean mask ({err})") from None
        if idx.dtype == bool:
            if idx.shape != (self.num_docs,):
                raise InputError(f"boolean mask must have shape ({self.num_docs},), got {idx.shape}")
            idx = np.flatnonzero(idx)
        if idx.size == 0:
            idx = idx.astype(np.int64)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise InputError("indices must be a 1-D integer array or a boolean mask")
        if idx.size and (idx.min() < -self.num_docs or idx.max() >= self.num_docs):
            raise IndexError(f"document index out of range for D={self.num_docs}")
        idx = np.where(idx < 0, idx + self.num_docs, idx).astype(np.int64)
        lengths = self.doc_lengths[idx]
        offsets = _offsets_from_lengths(lengths)
        starts = self.doc_offsets[:-1][idx]
        positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
        labels = None if self.labels is None else self.labels[idx]
        step = Losses(
            f"subset ({idx.size:,} of {self.num_docs:,} documents)",
            self.num_tokens,
            (("in the documents left out", self.num_tokens - int(offsets[-1])),),
        )
        names = self.label_names
        if names is None and labels is not None and labels.ndim == 1 and self.num_classes:
            # class ids without names: name them, so the subset keeps the corpus's classes
            # (its own largest id could be lower: a test part without the last class)
            names = ClassIdNames(str(c) for c in range(self.num_classes))
        return Corpus(self.words[positions], offsets, self.vocabulary, labels, names, self.losses + (step,))

    def restrict_vocabulary(self, vocabulary: Sequence[str]) -> tuple["Corpus", int]:
        """Re-encode the documents in another vocabulary (``V'`` words), dropping unknown words.

        Token order is kept; documents may become empty (no warning here: they are in
        :attr:`empty_documents` and :meth:`report`). Returns ``(corpus, n_dropped)`` where
        ``n_dropped`` is the number of tokens whose word is not in ``vocabulary``.
        """
        vocab = check_vocabulary(vocabulary, "the new vocabulary")
        corpus, dropped, emptied = self._reencode(vocab)
        step = Losses(
            f"restrict_vocabulary (V={len(vocab):,})",
            self.num_tokens,
            (("not in the new vocabulary", dropped),),
            documents_emptied=emptied,
        )
        return corpus._logged(step), dropped

    def remove_words(self, words: Iterable[str]) -> "Corpus":
        """Drop the given words (e.g. stop words) from the vocabulary and from every document.

        Words not in the vocabulary are ignored. The remaining words keep their relative
        order and are re-indexed ``0..V'-1``.
        """
        if isinstance(words, (str, bytes)):
            raise InputTypeError("remove_words takes a collection of words, not a single string")
        drop = set(words)
        corpus, dropped, emptied = self._reencode(CheckedVocabulary(w for w in self.vocabulary if w not in drop))
        return corpus._logged(Losses("remove_words", self.num_tokens, (("removed words", dropped),), documents_emptied=emptied))

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
        if every word is kept); its :meth:`report` counts the tokens each filter dropped.
        """
        filters = dict(min_df=min_df, max_df=max_df, min_count=min_count, max_vocab=max_vocab, rank_by=rank_by)
        keep, by_filter = select_words(
            self.vocabulary, self.document_frequencies(), self.word_counts(), self.num_docs, **filters
        )
        if keep.all():
            return self
        corpus, _, emptied = self._reencode(CheckedVocabulary(self.vocabulary[i] for i in np.flatnonzero(keep)))
        reasons = _filter_reasons(**filters)
        step = Losses(
            "filter_vocabulary",
            self.num_tokens,
            tuple((reasons[k], n) for k, n in by_filter.items()),
            documents_emptied=emptied,
        )
        return corpus._logged(step)

    def compact(self) -> "Corpus":
        """Keep only the words that occur in the corpus (relative order kept, ids re-indexed)."""
        used = self.word_counts() > 0
        if used.all():
            return self
        return self._reencode(CheckedVocabulary(w for w, u in zip(self.vocabulary, used) if u))[0]

    def drop_empty(self) -> tuple["Corpus", np.ndarray]:
        """Remove the empty documents. Returns ``(corpus, kept_indices)`` (int64 ``[D']``)."""
        kept = np.flatnonzero(self.doc_lengths > 0).astype(np.int64)
        if kept.size == self.num_docs:
            return self, kept
        return self.subset(kept), kept

    def require_nonempty(self, what: str = "training") -> "Corpus":
        """Raise :class:`InputError` if the corpus has no documents or any document is empty
        (listing up to 10 indices); else return self."""
        if self.num_docs == 0:
            raise InputError(f"the {what} corpus has no documents")
        empty = self.empty_documents
        if empty.size:
            raise InputError(
                f"the {what} corpus has {empty.size} empty document(s) (indices {_some(empty)}); "
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


# --------------------------------------------------------------------------------------------
# private helpers of the constructors
# --------------------------------------------------------------------------------------------

_FILTER_DEFAULTS = dict(min_df=1, max_df=1.0, min_count=1, max_vocab=None, rank_by="df")


def _same(value, default) -> bool:
    """``value`` is the default itself (``min_df=1.0``, a fraction, is not ``min_df=1``)."""
    return type(value) is type(default) and value == default


def _as_index_array(x, name: str, shape: str) -> np.ndarray:
    if isinstance(x, (str, bytes)):
        raise InputTypeError(f"{name} must be a 1-D {shape} integer array, not a string")
    lengths = nested_lengths(x)
    if lengths is not None and name == "words":
        raise InputError(
            f"words must be one flat [N] array of word ids, the documents one after another "
            f"(doc_offsets [D+1] says where each starts); got {len(lengths)} sequences of "
            f"lengths {describe_lengths(lengths)}: the corpus of token-id lists docs, one per "
            "document, is " + TOKEN_ID_RECIPE
        )
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as err:
        raise InputError(f"{name} must be a 1-D {shape} integer array ({err})") from None
    if a.ndim != 1:
        raise InputError(f"{name} must be 1-D {shape}, got shape {a.shape}")
    return a


def _drop_missing(items, labels, missing_labels: str, what: str):
    """``(items, labels, removed positions)``: with ``missing_labels="drop"`` the documents
    whose label is missing are removed; otherwise everything is returned unchanged."""
    if missing_labels != "drop" or labels is None or isinstance(labels, (str, bytes, set, frozenset, Mapping)):
        return items, labels, ()
    if not isinstance(labels, np.ndarray):
        if not isinstance(labels, Iterable):
            return items, labels, ()
        labels = list(labels)
    elif labels.ndim == 0:
        return items, labels, ()
    missing = missing_label_positions(labels)
    if not missing.size:
        return items, labels, ()
    if len(labels) != len(items):
        raise InputError(f"labels have {len(labels)} rows but there are {len(items)} {what}")
    keep = np.setdiff1d(np.arange(len(items)), missing)
    return [items[i] for i in keep], take_labels(labels, keep), tuple(int(i) for i in missing)


def _as_counts(data, row_of, cols) -> np.ndarray:
    """int64 counts of the nonzero entries ``data``; errors name the entry ``[row, column]``."""
    data = np.asarray(data)
    if data.size == 0:
        return np.zeros(0, dtype=np.int64)
    if data.dtype == bool:
        return data.astype(np.int64)
    if data.dtype.kind not in "iuf":
        raise InputError(f"document-term counts must be numbers, got dtype {data.dtype}")
    if data.dtype.kind == "f":
        bad = ~np.isfinite(data) | (data != np.round(data))
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"document-term counts must be whole numbers: entry [{row_of(k)}, {int(cols[k])}] is {data[k]}"
            )
        data = data.astype(np.float64)  # exact; float16 would overflow comparing to MAX_TOKENS
    neg = data < 0
    if np.any(neg):
        k = int(np.flatnonzero(neg)[0])
        raise InputError(
            f"document-term counts must be nonnegative: entry [{row_of(k)}, {int(cols[k])}] is {data[k]}"
        )
    big = data > MAX_TOKENS
    if np.any(big):
        k = int(np.flatnonzero(big)[0])
        raise InputError(
            f"document-term count at entry [{row_of(k)}, {int(cols[k])}] is {data[k]}, more than {MAX_TOKENS:,} tokens"
        )
    return data.astype(np.int64)
