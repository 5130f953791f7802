"""Property-based fuzzing of every reader and of Corpus construction (hypothesis).

The property, for every input: the call returns a valid, non-empty corpus (or value), or it
raises one of our exceptions (``InputError`` / ``InputTypeError``) with a message; the only
warnings are ours (``DataLossWarning``, and the metrics' constant-response warning); and the
call is quick (no hang). Any other exception -- a raw ``UnicodeDecodeError``, numpy's
"inhomogeneous shape", ``OverflowError``, an ``IndexError`` -- fails the test. A corpus that
lost documents or letters on the way in must have warned.

The example budgets are fixed and derandomized (``derandomize=True``), so CI runs the same
2,200 examples every time (``EXAMPLES``); the whole file needs about 20 s of CPU.

Bugs found so far (each fixed, with a unit test in test_corpus.py):

* a str vocabulary that is not a file gave a bare ``FileNotFoundError`` / ``IsADirectoryError``
  (``Corpus.from_labeled_counts(path, "0")``);
* class id ``2**62`` made a corpus whose ``one_vs_all_labels()`` tried to allocate ``[D, 2**62]``
  (unnamed class ids may now imply at most 10,000 classes);
* a float ``doc_offsets`` entry ``9.2e18`` overflowed in the int64 cast with a ``RuntimeWarning``.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from topiczoo.corpus import ASCII_TOKENIZER, Corpus, check_labels  # noqa: E402
from topiczoo.errors import DataLossWarning, InputError, InputTypeError  # noqa: E402
from topiczoo.metrics import accuracy, evaluate, mean_squared_error, precision_recall_f1, predictive_r2  # noqa: E402
from topiczoo.readers import read_labeled_counts, read_vocabulary  # noqa: E402
from topiczoo.splits import kfold_indices, split_indices  # noqa: E402
from topiczoo.text import DEFAULT_TOKEN_PATTERN, tokenize  # noqa: E402

OURS = (InputError, InputTypeError)
SLOW = 5.0  # seconds: no single example may take longer (tiny inputs; a hang would show here)

#: examples per property (fixed budget; the sum is the number of inputs tried per run)
EXAMPLES = {
    "texts": 300,
    "document_term": 250,
    "labeled_counts": 300,
    "vocabulary_file": 150,
    "arrays": 250,
    "labels": 300,
    "metrics": 200,
    "splits": 150,
}


#: a longer, randomized local search (not for CI):
#: TOPICZOO_FUZZ_SCALE=20 pytest tests/test_fuzz_input.py --hypothesis-seed=1
SCALE = float(os.environ.get("TOPICZOO_FUZZ_SCALE", "1"))


def fuzz(name: str):
    return settings(
        max_examples=max(1, int(EXAMPLES[name] * SCALE)),
        derandomize=SCALE == 1,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def run(fn, allowed=(DataLossWarning,)):
    """``(result or None if one of our errors, list of warnings)``; anything else fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            result = fn()
            event("returned a value")
        except OURS as err:
            message = str(err)
            assert message.strip(), f"{type(err).__name__} without a message"
            assert "Traceback" not in message
            event(f"raised {type(err).__name__}")
            result = None
        elapsed = time.perf_counter() - start
    if caught:
        event("warned")
    assert elapsed < SLOW, f"took {elapsed:.1f} s"
    for w in caught:
        assert issubclass(w.category, allowed), f"unexpected {w.category.__name__}: {w.message}"
        assert str(w.message).strip()
    return result, caught


def check_corpus(corpus: Corpus, caught) -> None:
    """A returned corpus is valid, not empty, and warned about what it lost."""
    assert isinstance(corpus, Corpus)
    assert corpus.num_docs > 0 and corpus.num_tokens > 0, "silent empty result"
    assert corpus.doc_offsets[0] == 0 and corpus.doc_offsets[-1] == corpus.num_tokens
    assert np.all(np.diff(corpus.doc_offsets) >= 0)
    assert corpus.words.min() >= 0 and corpus.words.max() < corpus.vocab_size
    assert not corpus.words.flags.writeable
    if corpus.labels is not None:
        assert corpus.labels.shape[0] == corpus.num_docs and corpus.labels.dtype in (np.int64, np.float64)
        assert not corpus.labels.flags.writeable
    report = corpus.report()
    assert report.startswith(repr(corpus))
    step = corpus.losses[0]
    lossy = step.documents_emptied or step.skipped_characters or step.removed_documents
    assert bool(lossy) == any(issubclass(w.category, DataLossWarning) for w in caught)


# ------------------------------------------------------------------ strategies


def mostly(valid, invalid, odds: int = 6):
    """``valid`` about ``odds`` times in ``odds + 1``, else ``invalid``: each argument is
    usually fine, so most examples get past the first check and reach the deeper ones."""
    return st.integers(0, odds).flatmap(lambda i: invalid if i == odds else valid)


WORDISH = st.sampled_from([
    "the", "a", "I", "don't", "O'Neill", "café", "Résumé", "δέλτα", "Søren", "w123", "v12", "2004",
    "mp3", "北京", "x_y", "’s", "\u0301", "ﬁsh", "ＡＢＣ", "١٢٣", "²", "--", "e.g.", "İstanbul", "ß",
])
TOKEN = st.one_of(WORDISH, st.from_regex(r"[a-zA-Z]{1,6}[0-9]{0,3}", fullmatch=True), st.text(max_size=8))
TEXT = st.one_of(st.lists(TOKEN, max_size=8).map(" ".join), st.text(max_size=30))
TEXTS = mostly(
    st.one_of(st.lists(TEXT, min_size=1, max_size=6), st.lists(TEXT, min_size=1, max_size=3).map(tuple)),
    st.one_of(
        st.lists(TEXT, max_size=0),
        st.text(max_size=10),  # a single string
        st.binary(max_size=5),
        st.sets(st.text(max_size=3), max_size=3),
        st.lists(st.one_of(TEXT, st.none(), st.integers(), st.binary(max_size=3)), min_size=1, max_size=3),
        st.integers(),
        st.none(),
    ),
)

SCALAR_LABEL = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.integers(2**62, 2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.binary(max_size=2),
    st.complex_numbers(max_magnitude=3, allow_nan=False),
    st.lists(st.integers(0, 2), max_size=3),
)
LABEL_DTYPES = st.sampled_from(["int64", "int8", "uint64", "float64", "float32", "bool", "<U3", "S2", "complex128", "O"])


def _object_array(values, shape) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):  # element by element: numpy would unpack list entries
        out[i] = v
    return out.reshape(shape)


@st.composite
def valid_labels(draw, n: int):
    """Legal labels of every type for ``n`` documents (None allowed: a missing label)."""
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return None
    if kind == 1:
        return draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    if kind == 2:
        return draw(st.lists(st.sampled_from(["spam", "ham", "eggs"]), min_size=n, max_size=n))
    if kind == 3:
        return draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n))
    if kind == 4:
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if kind == 5:  # [D, L] indicators
        width = draw(st.integers(1, 3))
        return draw(hnp.arrays(st.sampled_from([np.int64, np.float64, np.bool_]), (n, width), elements=st.integers(0, 1)))
    if kind == 6:  # numpy arrays of the usual dtypes
        if draw(st.booleans()):
            return np.array(draw(st.lists(st.sampled_from(["spam", "ham"]), min_size=n, max_size=n)), dtype="<U3")
        return draw(hnp.arrays(st.sampled_from([np.int64, np.uint8, np.float32]), (n,), elements=st.integers(0, 2)))
    # missing entries among class ids or ratings (legal with missing_labels="drop")
    return draw(st.lists(st.one_of(st.integers(0, 2), st.none(), st.just(float("nan"))), min_size=n, max_size=n))


@st.composite
def invalid_labels(draw, n: int):
    """Labels of the wrong length, mixed types, bytes, complex, ragged rows, scalars ..."""
    length = draw(st.one_of(st.just(n), st.integers(0, n + 2)))
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return draw(st.lists(SCALAR_LABEL, min_size=length, max_size=length))
    if kind == 1:
        dtype = draw(LABEL_DTYPES)
        shape = draw(st.sampled_from([(length,), (length, 2), (length, 1, 1), ()]))
        if dtype == "O":
            size = int(np.prod(shape))
            return _object_array(draw(st.lists(SCALAR_LABEL, min_size=size, max_size=size)), shape)
        return draw(hnp.arrays(np.dtype(dtype), shape))
    if kind == 2:  # [D, L] rows, sometimes ragged or not 0/1
        return draw(st.lists(st.lists(st.integers(-1, 2), min_size=1, max_size=3), min_size=length, max_size=length))
    if kind == 3:
        return draw(st.lists(st.integers(-2, 3), min_size=length, max_size=length))
    return draw(st.one_of(st.text(max_size=4), st.integers(), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                          st.sets(st.integers(0, 3), max_size=3)))


def labels_for(num_docs: int):
    return mostly(valid_labels(num_docs), invalid_labels(num_docs), odds=3)


LABEL_NAMES = mostly(
    st.one_of(st.none(), st.just(("ham", "spam")), st.just(("a", "b", "c", "d"))),
    st.one_of(st.lists(st.one_of(st.text(max_size=3), st.integers(-2, 3)), max_size=4), st.text(max_size=3),
              st.lists(st.none(), min_size=1, max_size=2)),
)


def option(valid, invalid):
    return mostly(valid, invalid, odds=12)


TOKENIZER_OPTIONS = st.fixed_dictionaries({}, optional={
    "digits": option(st.sampled_from(["keep", "drop", "drop-numbers"]), st.just("bogus")),
    "min_word_length": option(st.integers(0, 4), st.sampled_from([-1, 2.5, True])),
    "stop_words": option(st.one_of(st.none(), st.just("english"), st.lists(st.text(max_size=4), max_size=3)),
                         st.one_of(st.just("french"), st.lists(st.integers(), min_size=1, max_size=2))),
    "token_pattern": option(st.sampled_from([DEFAULT_TOKEN_PATTERN, r"\S+", r"[a-z]+", r"(\w)\w*", r"\w*", r"x?", r"\d+"]),
                            st.sampled_from(["[", "(?P<", 3])),
    "lowercase": option(st.booleans(), st.just("yes")),
    "strip_accents": st.booleans(),
    "unicode_form": option(st.sampled_from([None, "NFC", "NFKD", "NFKC", "NFD"]), st.just("bad")),
})
FILTERS = st.fixed_dictionaries({}, optional={
    "min_df": option(st.one_of(st.integers(0, 3), st.floats(0, 1)), st.sampled_from([-1, 1.5, True, "2"])),
    "max_df": option(st.one_of(st.integers(2, 5), st.floats(0.5, 1)), st.sampled_from([float("nan"), -2, None, 0, 0.1])),
    "min_count": option(st.integers(0, 3), st.sampled_from([-1, 1.5, float("inf")])),
    "max_vocab": option(st.one_of(st.none(), st.integers(0, 6)), st.sampled_from([-1, 2.0, "5"])),
    "rank_by": option(st.sampled_from(["df", "count", "tfidf"]), st.just("bm25")),
})


# ------------------------------------------------------------------ from_texts


@fuzz("texts")
@given(texts=TEXTS, data=st.data(), options=TOKENIZER_OPTIONS, filters=FILTERS,
       ascii_tokenizer=st.booleans(), missing=option(st.sampled_from(["error", "drop"]), st.just("skip")),
       vocabulary=mostly(st.none(), st.one_of(st.lists(st.sampled_from(["the", "w123", "cafe", "x", "x"]), max_size=4), st.text(max_size=3)), odds=3))
def test_fuzz_from_texts(texts, data, options, filters, ascii_tokenizer, missing, vocabulary):
    num_docs = len(texts) if isinstance(texts, (list, tuple)) else 3
    labels = data.draw(labels_for(num_docs))
    names = data.draw(LABEL_NAMES)
    kwargs = dict(options, labels=labels, label_names=names, missing_labels=missing, vocabulary=vocabulary)
    if vocabulary is None:
        kwargs.update(filters)
    if ascii_tokenizer:
        kwargs["tokenizer"] = ASCII_TOKENIZER
    corpus, caught = run(lambda: Corpus.from_texts(texts, **kwargs))
    if corpus is not None:
        check_corpus(corpus, caught)
        assert corpus.num_docs + len(corpus.losses[0].removed_documents) == len(texts)


@fuzz("texts")
@given(text=st.one_of(TEXT, st.text(max_size=200)), options=TOKENIZER_OPTIONS)
def test_fuzz_tokenize(text, options):
    tokens, _ = run(lambda: tokenize(text, **options))
    if tokens is not None:
        assert isinstance(tokens, list) and all(isinstance(t, str) and t for t in tokens)


# ------------------------------------------------------------------ from_document_term

@st.composite
def valid_matrices(draw):
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=5))
    dtype = draw(st.sampled_from([np.int64, np.int8, np.uint16, np.float64, np.float32, np.bool_]))
    matrix = draw(hnp.arrays(dtype, shape, elements=st.booleans() if dtype is np.bool_ else st.integers(0, 3)))
    if draw(st.integers(0, 3)) == 0:
        sparse = pytest.importorskip("scipy.sparse")
        return sparse.csr_matrix(matrix)
    return matrix


@st.composite
def invalid_matrices(draw):
    kind = draw(st.integers(0, 3))
    if kind == 0:  # nested lists, sometimes ragged or negative
        return draw(st.lists(st.lists(st.integers(-1, 3), max_size=4), max_size=4))
    if kind == 1:
        return draw(st.one_of(st.text(max_size=3), st.integers(), st.none()))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    dtype = draw(st.sampled_from(["int64", "float64", "float32", "complex64", "<U2", "O"]))
    if dtype == "O":
        size = int(np.prod(shape))
        return _object_array(draw(st.lists(st.one_of(st.integers(0, 3), st.none(), st.text(max_size=1)), min_size=size, max_size=size)), shape)
    elements = None
    if dtype.startswith("float"):
        width = int(dtype[5:])
        elements = st.one_of(st.integers(0, 3).map(float), st.floats(-(2.0**40), 2.0**40, width=width), st.just(np.nan))
    if dtype == "int64":
        elements = st.one_of(st.integers(-1, 4), st.just(2**40))
    return draw(hnp.arrays(np.dtype(dtype), shape, elements=elements))


def matrices():
    return mostly(valid_matrices(), invalid_matrices(), odds=2)


@st.composite
def vocabularies(draw, size: int):
    words = tuple(f"w{i}" for i in range(size))
    wrong = st.one_of(
        st.integers(0, size + 2).map(lambda n: tuple(f"w{i}" for i in range(n))),
        st.lists(st.one_of(st.sampled_from(["a", "b", "a"]), st.integers(), st.none()), min_size=size, max_size=size),
        st.text(max_size=3),
        st.sets(st.text(max_size=2), max_size=3),
        st.integers(),
    )
    return draw(mostly(st.just(words), wrong))


@fuzz("document_term")
@given(matrix=matrices(), data=st.data(), missing=option(st.sampled_from(["error", "drop"]), st.just("skip")))
def test_fuzz_from_document_term(matrix, data, missing):
    if hasattr(matrix, "shape"):
        shape = tuple(matrix.shape) + (3, 3)
    elif isinstance(matrix, list):
        shape = (len(matrix), len(matrix[0]) if matrix else 0)
    else:
        shape = (3, 3)
    num_docs, num_words = shape[:2]
    vocab = data.draw(vocabularies(num_words))
    labels = data.draw(labels_for(num_docs))
    corpus, caught = run(lambda: Corpus.from_document_term(matrix, vocab, labels, missing_labels=missing))
    if corpus is not None:
        check_corpus(corpus, caught)


# ------------------------------------------------------------------ labelled-counts files

GOOD_LABELS = {
    "class": st.integers(0, 2).map(str),
    "rating": st.sampled_from(["0.5", "-1.5e-2", "3", ".25", "+1."]),
    "map": st.sampled_from(["-100", "100"]),
}
BAD_LABEL = st.one_of(st.sampled_from(["-1", "1e999", "nan", "١", "1_0", "x", "99999999999999999999", "0.5", "100"]),
                      st.text(alphabet=st.characters(blacklist_categories=("Z", "C")), min_size=1, max_size=3))
GOOD_PAIR = st.tuples(st.integers(0, 6), st.integers(0, 3)).map(lambda p: f"{p[0]}:{p[1]}")
BAD_NUMBER = st.sampled_from(["", "x", "-1", "٣", "²", "1_0", "3000000000", "99999999999999999999", "7"])
BAD_PAIR = st.one_of(st.tuples(st.one_of(BAD_NUMBER, st.just("1")), st.one_of(BAD_NUMBER, st.just("1"))).map(":".join),
                     st.sampled_from(["5", "1:2:3", ":"]))
SEPARATOR = mostly(st.sampled_from([" ", "\t", "  "]), st.sampled_from(["\u00a0", "\x0c", "\u2028", "\x85"]), odds=12)


@st.composite
def counts_files(draw, mode: str):
    """Bytes of a labelled-counts file with labels of ``mode``: mostly well-formed lines with
    a few defects (bad labels, bad pairs, odd separators, blank lines, latin-1, random bytes)."""
    if draw(st.integers(0, 15)) == 15:
        return draw(st.binary(max_size=40))
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        parts = [draw(mostly(GOOD_LABELS[mode], BAD_LABEL, odds=15))] + draw(st.lists(mostly(GOOD_PAIR, BAD_PAIR, odds=12), max_size=4))
        lines.append(draw(SEPARATOR).join(parts) if draw(st.integers(0, 20)) < 20 else "")
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    encoding = draw(mostly(st.sampled_from(["utf-8", "utf-8-sig"]), st.just("latin-1"), odds=10))
    return text.encode(encoding, errors="replace")


OPTIONS_OF_MODE = {
    "class": dict(label_type="class"),
    "rating": dict(label_type="rating"),
    "map": dict(label_map={"-100": 0, "100": 1}),
}
BAD_OPTIONS = st.sampled_from([
    dict(label_type="bogus"), dict(label_map={"0": "zero"}), dict(label_map={"-100": -1, "100": 0}), dict(label_map={0: 0}),
    dict(label_map=["0"]), dict(label_map={"0": 0}, label_type="rating"), dict(label_names="ab"), dict(label_names=("a",)),
])


@fuzz("labeled_counts")
@given(mode=st.sampled_from(["class", "rating", "map"]), data=st.data())
def test_fuzz_from_labeled_counts(tmp_path_factory, mode, data):
    folder = tmp_path_factory.getbasetemp() / "fuzz_counts"
    folder.mkdir(exist_ok=True)
    path = folder / "docs.txt"
    path.write_bytes(data.draw(counts_files(mode)))
    options = data.draw(mostly(st.just(OPTIONS_OF_MODE[mode]), BAD_OPTIONS, odds=10))
    vocab = data.draw(st.one_of(vocabularies(7), st.just("FILE")))
    if vocab == "FILE":
        vocab = folder / "vocab.txt"
        vocab.write_bytes(data.draw(mostly(st.just(b"a\nb\nc\nd\ne\nf\ng\n"), st.binary(max_size=20), odds=3)))
    corpus, caught = run(lambda: Corpus.from_labeled_counts(path, vocab, **options))
    if corpus is not None:
        check_corpus(corpus, caught)
    parsed, _ = run(lambda: read_labeled_counts(path, **options))
    if parsed is not None:
        assert parsed.doc_offsets[-1] == parsed.words.size


@fuzz("vocabulary_file")
@given(content=st.one_of(st.binary(max_size=40), st.lists(st.text(max_size=5), max_size=6).map(lambda w: "\n".join(w).encode())))
def test_fuzz_read_vocabulary(tmp_path_factory, content):
    path = tmp_path_factory.getbasetemp() / "fuzz_vocab.txt"
    path.write_bytes(content)
    vocab, _ = run(lambda: read_vocabulary(path))
    if vocab is not None:
        assert len(vocab) > 0 and len(set(vocab)) == len(vocab)
        assert all(w and w == w.strip() for w in vocab)


# ------------------------------------------------------------------ Corpus(...) from arrays, labels


@st.composite
def valid_arrays(draw):
    lengths = draw(st.lists(st.integers(0, 3), min_size=0, max_size=4))
    words = draw(hnp.arrays(st.sampled_from([np.int64, np.int32, np.uint8]), sum(lengths), elements=st.integers(0, 4)))
    return words, np.concatenate([[0], np.cumsum(lengths)]).astype(draw(st.sampled_from([np.int64, np.int32])))


INVALID_WORDS = st.one_of(st.lists(st.integers(-2, 6), max_size=8), hnp.arrays(st.sampled_from([np.float64, np.bool_]), st.integers(0, 6)),
                          st.text(max_size=3), st.lists(st.lists(st.integers(0, 3), max_size=2), max_size=2))
INVALID_OFFSETS = st.one_of(st.lists(st.integers(-1, 9), max_size=5), hnp.arrays(st.sampled_from([np.int64, np.uint64, np.float64]), st.integers(0, 4)),
                            st.integers(), st.lists(st.lists(st.integers(0, 2))))


@fuzz("arrays")
@given(arrays=valid_arrays(), bad_words=mostly(st.none(), INVALID_WORDS, odds=3),
       bad_offsets=mostly(st.none(), INVALID_OFFSETS, odds=3), vocab=vocabularies(5), data=st.data())
def test_fuzz_corpus_from_arrays(arrays, bad_words, bad_offsets, vocab, data):
    words, offsets = arrays
    words = words if bad_words is None else bad_words
    offsets = offsets if bad_offsets is None else bad_offsets
    labels = data.draw(labels_for(max(len(offsets) - 1, 0) if isinstance(offsets, (list, np.ndarray)) else 2))
    corpus, _ = run(lambda: Corpus(words, offsets, vocab, labels, data.draw(LABEL_NAMES)))
    if corpus is not None:  # the low-level constructor allows empty corpora (subsets of nothing)
        assert corpus.doc_offsets[-1] == corpus.num_tokens
        assert corpus.report().startswith(repr(corpus))


@fuzz("labels")
@given(data=st.data(), num_docs=st.integers(1, 4), kind=st.sampled_from(["binary", "multiclass", "regression", "multilabel", "ordinal"]),
       num_classes=st.one_of(st.none(), st.integers(-1, 4), st.just(2.5)), at_least_one=st.booleans())
def test_fuzz_labels_of_every_type(data, num_docs, kind, num_classes, at_least_one):
    labels = data.draw(labels_for(num_docs))
    names = data.draw(LABEL_NAMES)
    words, offsets = np.arange(num_docs) % 2, np.arange(num_docs + 1)
    corpus, _ = run(lambda: Corpus(words, offsets, ("x", "y"), labels, names))
    if corpus is not None and corpus.labels is not None:
        assert corpus.labels.shape[0] == num_docs
        run(lambda: corpus.require_labels(kind, num_classes=num_classes, at_least_one=at_least_one))
        run(lambda: corpus.one_vs_all_labels())
    run(lambda: check_labels(labels, kind, num_classes=num_classes, at_least_one=at_least_one))


# ------------------------------------------------------------------ metrics and splits

METRIC_ARRAYS = st.one_of(
    hnp.arrays(st.sampled_from([np.int64, np.float64, np.bool_, np.dtype("<U2")]), hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)),
    st.lists(st.one_of(st.integers(0, 2), st.floats(), st.none(), st.text(max_size=1)), max_size=3),
    st.lists(st.lists(st.integers(0, 1), max_size=2), max_size=2),
    st.text(max_size=3),
)


@fuzz("metrics")
@given(y_true=METRIC_ARRAYS, y_pred=METRIC_ARRAYS, kind=st.sampled_from(["binary", "multiclass", "regression", "multilabel", "x"]))
def test_fuzz_metrics(y_true, y_pred, kind):
    for metric in (accuracy, mean_squared_error, predictive_r2, precision_recall_f1):
        value, _ = run(lambda: metric(y_true, y_pred), allowed=(RuntimeWarning,))
        if value is not None and not isinstance(value, dict):
            assert isinstance(value, float)
    run(lambda: evaluate(kind, y_true, y_pred), allowed=(RuntimeWarning,))


@fuzz("splits")
@given(target=st.one_of(st.integers(-1, 12), st.lists(st.integers(0, 2), max_size=12), st.text(max_size=2), st.booleans(),
                        st.floats(), hnp.arrays(np.float64, st.integers(0, 8)), st.none()),
       fraction=st.one_of(st.floats(), st.integers(-1, 2), st.text(max_size=1), st.complex_numbers(max_magnitude=1)),
       folds=st.one_of(st.integers(-1, 13), st.floats(), st.text(max_size=1)), stratify=st.booleans())
def test_fuzz_splits(target, fraction, folds, stratify):
    out, _ = run(lambda: split_indices(target, fraction, seed=0, stratify=stratify))
    if out is not None:
        train, test = out
        assert train.size and test.size and not np.intersect1d(train, test).size
    out, _ = run(lambda: kfold_indices(target, folds, seed=0, stratify=stratify))
    if out is not None:
        assert np.sort(np.concatenate([te for _, te in out])).tolist() == list(range(sum(te.size for _, te in out)))
