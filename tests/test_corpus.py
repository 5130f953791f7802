"""Tests of topiczoo.corpus: construction, validation, preprocessing, re-encoding, splits."""

import warnings

import numpy as np
import pytest

from topiczoo.corpus import (
    ASCII_TOKENIZER,
    Corpus,
    DataLossWarning,
    InputError,
    InputTypeError,
    Tokenizer,
    check_labels,
    kfold_indices,
    read_vocabulary,
    split_indices,
    tokenize,
)

VOCAB = ("apple", "banana", "cherry", "date")


def small():
    # doc 0: apple banana apple | doc 1: (empty) | doc 2: date cherry
    return Corpus(
        words=np.array([0, 1, 0, 3, 2]),
        doc_offsets=np.array([0, 3, 3, 5]),
        vocabulary=VOCAB,
        labels=np.array([0, 1, 0]),
        label_names=("no", "yes"),
    )


# ------------------------------------------------------------------ construction and validation


def test_basic_properties_and_dtypes():
    c = small()
    assert (c.num_docs, c.num_tokens, c.vocab_size) == (3, 5, 4)
    assert c.words.dtype == np.int32 and c.doc_offsets.dtype == np.int64
    assert c.labels.dtype == np.int64
    np.testing.assert_array_equal(c.doc_lengths, [3, 0, 2])
    assert c.doc_lengths.dtype == np.int64
    np.testing.assert_array_equal(c.doc_ids, [0, 0, 0, 2, 2])
    assert c.doc_ids.dtype == np.int32
    assert c.document_words(2) == ["date", "cherry"]
    assert c.label_kind == "binary" and c.num_classes == 2
    assert repr(c) == "Corpus(D=3, N=5, V=4, labels=binary)"
    assert isinstance(c.vocabulary, tuple)


def test_arrays_are_read_only_and_copied():
    words = np.array([0, 1, 2])
    c = Corpus(words, np.array([0, 3]), VOCAB[:3], labels=np.array([1.5]))
    for a in (c.words, c.doc_offsets, c.labels, c.doc_lengths, c.doc_ids):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[0] = 0
    words[0] = 2  # the caller's array is not aliased
    assert c.words[0] == 0
    with pytest.raises(AttributeError):
        c.words = np.zeros(3, dtype=np.int32)


@pytest.mark.parametrize(
    "offsets, match",
    [
        ([1, 3], "start at 0"),
        ([0, 2, 1, 3], "non-decreasing"),
        ([0, 2], "end at N=3"),
        ([0, 4], "end at N=3"),
    ],
)
def test_bad_offsets(offsets, match):
    with pytest.raises(ValueError, match=match):
        Corpus(np.array([0, 1, 2]), np.array(offsets), VOCAB)


def test_offsets_must_be_integers():
    assert Corpus(np.zeros(0), np.zeros(1), VOCAB).num_docs == 0  # np.zeros(1): an empty corpus
    # found by the fuzzer: a float offset overflowed in the cast with a RuntimeWarning
    for offsets in (np.array([9.22e18]), np.array([0.0, 1.5])):
        with pytest.raises(InputError, match="doc_offsets must be integers, got dtype float64"):
            Corpus(np.zeros(0, np.int64), offsets, VOCAB)


def test_word_id_out_of_range_names_document_and_id():
    with pytest.raises(ValueError, match=r"document 1: word id 7 .*\[0, 4\)"):
        Corpus(np.array([0, 1, 2, 7, 1]), np.array([0, 2, 5]), VOCAB)
    with pytest.raises(ValueError, match=r"document 0: word id -1"):
        Corpus(np.array([-1]), np.array([0, 1]), VOCAB)


def test_label_validation():
    w, o = np.array([0, 1]), np.array([0, 1, 2])
    with pytest.raises(ValueError, match="3 rows but the corpus has D=2"):
        Corpus(w, o, VOCAB, labels=np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="negative"):
        Corpus(w, o, VOCAB, labels=np.array([0, -1]))
    with pytest.raises(ValueError, match="no name"):
        Corpus(w, o, VOCAB, labels=np.array([0, 2]), label_names=("a", "b"))
    with pytest.raises(ValueError, match="0/1"):
        Corpus(w, o, VOCAB, labels=np.array([[0, 2], [1, 0]]))
    with pytest.raises(ValueError, match="twice"):
        Corpus(w, o, ("a", "b", "a"))
    multi = Corpus(w, o, VOCAB, labels=np.array([[0, 1, 1], [1, 0, 0]]))
    assert multi.label_kind == "multilabel" and multi.num_classes == 3
    ratings = Corpus(w, o, VOCAB, labels=np.array([0.5, -2.0]))
    assert ratings.label_kind == "regression" and ratings.labels.dtype == np.float64
    named = Corpus(w, o, VOCAB, labels=np.array(["spam", "ham"]))
    assert named.label_names == ("ham", "spam")
    np.testing.assert_array_equal(named.labels, [1, 0])


def test_empty_corpus_is_allowed():
    c = Corpus(np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64), VOCAB)
    assert (c.num_docs, c.num_tokens) == (0, 0)


# ------------------------------------------------------------------ empty documents


def test_empty_documents_drop_and_require():
    c = small()
    np.testing.assert_array_equal(c.empty_documents, [1])
    with pytest.raises(ValueError, match=r"training corpus has 1 empty.*indices 1\b.*drop_empty"):
        c.require_nonempty()
    with pytest.raises(ValueError, match="test corpus"):
        c.require_nonempty("test")
    d, kept = c.drop_empty()
    np.testing.assert_array_equal(kept, [0, 2])
    assert d.num_docs == 2 and d.require_nonempty() is d
    np.testing.assert_array_equal(d.labels, [0, 0])
    assert d.document_words(1) == ["date", "cherry"]


def test_require_nonempty_lists_at_most_ten():
    c = Corpus(np.zeros(0, np.int32), np.zeros(15, np.int64), VOCAB)
    with pytest.raises(ValueError) as err:
        c.require_nonempty()
    msg = str(err.value)
    assert "14 empty" in msg and "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..." in msg and "10, 11" not in msg


# ------------------------------------------------------------------ from_texts


def test_tokenize_rules():
    text = "The company's profits DON'T rise: café 2004 mp3 x-ray a I"
    # the default for user texts keeps numbers and codes (ids such as w123 are words)
    words = ["the", "company", "profits", "dont", "rise", "cafe", "2004", "mp3", "ray"]
    assert tokenize(text, stop_words=None) == words
    assert tokenize(text, stop_words=None, digits="drop-numbers") == [w for w in words if w != "2004"]
    # the named data sets' tokenizer drops every token with a digit (topiczoo 0.1 behaviour)
    old = ["the", "company", "profits", "dont", "rise", "cafe", "ray"]
    assert tokenize(text, ASCII_TOKENIZER, stop_words=None) == old
    assert tokenize(text, stop_words=None, digits="drop") == old
    assert tokenize("The company's profits", stop_words="english") == ["company", "profits"]
    assert tokenize("a b cd", stop_words=None, min_word_length=1) == ["a", "b", "cd"]
    assert tokenize("Fish and chips", stop_words=["FISH"]) == ["and", "chips"]


def test_tokenize_unicode_and_options():
    # accents are stripped, other letters kept; the ASCII tokenizer splits or skips them
    assert tokenize("Résumé Ελλάδα Søren naïve", stop_words=None) == ["resume", "ελλαδα", "søren", "naive"]
    assert tokenize("Résumé Ελλάδα Søren", ASCII_TOKENIZER, stop_words=None) == ["re", "sume", "ren"]
    assert tokenize("Résumé", stop_words=None, strip_accents=False, unicode_form="NFC") == ["résumé"]
    assert tokenize("Big Data", stop_words=None, lowercase=False) == ["Big", "Data"]
    assert tokenize("The Data", lowercase=False) == ["Data"]  # stop words match case-blind
    assert tokenize("snake_case w-1 x", token_pattern=r"\S+", min_word_length=1, stop_words=None) == [
        "snake_case", "w-1", "x"]
    assert tokenize("a1 b22 c333", token_pattern=r"([a-z])\d+", stop_words=None) == ["a1", "b22", "c333"]
    assert Tokenizer(stop_words=["b", "a", "a"]) == Tokenizer(stop_words=("a", "b"))  # hashable, order-free


@pytest.mark.parametrize(
    "options, error, match",
    [
        (dict(token_pattern="[a-z"), ValueError, r"token_pattern '\[a-z' is not a valid regular expression"),
        (dict(token_pattern=3), TypeError, "token_pattern must be a regular expression"),
        (dict(digits="no"), ValueError, "digits must be one of 'keep', 'drop-numbers', 'drop'"),
        (dict(min_word_length=-1), ValueError, "min_word_length must be an integer >= 0"),
        (dict(min_word_length=2.5), ValueError, "min_word_length"),
        (dict(lowercase="yes"), TypeError, "lowercase must be True or False"),
        (dict(unicode_form="NFX"), ValueError, "unicode_form must be one of"),
        (dict(stop_words="french"), ValueError, "stop_words must be 'english'"),
        (dict(stop_words=[1, 2]), TypeError, "stop_words must hold str"),
        (dict(stopwords=None), TypeError, "unknown tokenizer option.*stopwords.*the options are token_pattern"),
    ],
)
def test_tokenizer_options_are_checked(options, error, match):
    with pytest.raises(error, match=match):
        Corpus.from_texts(["some text here"], **options)


def test_from_texts_stop_words_and_order():
    c = Corpus.from_texts(["The zebra and the apple", "apple of my eye, zebra"], labels=[1, 0])
    assert c.vocabulary == ("apple", "eye", "zebra")  # alphabetical, stop words gone
    assert c.document_words(0) == ["zebra", "apple"]  # text order kept
    assert c.document_words(1) == ["apple", "eye", "zebra"]
    np.testing.assert_array_equal(c.labels, [1, 0])
    c2 = Corpus.from_texts(["The zebra and the apple"], stop_words=None)
    assert c2.vocabulary == ("and", "apple", "the", "zebra")
    assert c2.document_words(0) == ["the", "zebra", "and", "the", "apple"]


TEXTS = [
    "alpha beta gamma delta",
    "alpha beta gamma",
    "alpha beta epsilon",
    "alpha zeta zeta zeta",
]  # df: alpha 4, beta 3, gamma 2, delta 1, epsilon 1, zeta 1


def test_from_texts_document_frequency_filters():
    assert Corpus.from_texts(TEXTS, min_df=2).vocabulary == ("alpha", "beta", "gamma")
    assert Corpus.from_texts(TEXTS, max_df=0.5).vocabulary == ("delta", "epsilon", "gamma", "zeta")
    assert Corpus.from_texts(TEXTS, max_df=3).vocabulary == ("beta", "delta", "epsilon", "gamma", "zeta")
    with pytest.warns(DataLossWarning, match="1 of 4 documents have no token left"):  # the last one
        assert Corpus.from_texts(TEXTS, min_df=2, max_df=3).vocabulary == ("beta", "gamma")
    with pytest.raises(ValueError, match="max_df"):
        Corpus.from_texts(TEXTS, min_df=3, max_df=2)


def test_from_texts_max_vocab_is_deterministic():
    # top 4 by df: alpha(4), beta(3), gamma(2), then the df=1 tie broken alphabetically: delta
    c = Corpus.from_texts(TEXTS, max_vocab=4)
    assert c.vocabulary == ("alpha", "beta", "delta", "gamma")
    assert Corpus.from_texts(list(reversed(TEXTS)), max_vocab=4).vocabulary == c.vocabulary
    assert c.document_words(3) == ["alpha"]  # zeta dropped
    with pytest.raises(ValueError, match="all 14 tokens of the 4 texts were dropped: 14 beyond max_vocab=0"):
        Corpus.from_texts(TEXTS, max_vocab=0)  # an empty corpus is an error, not a result


def test_from_texts_with_given_vocabulary():
    c = Corpus.from_texts(["zeta alpha unknown alpha"], vocabulary=("zeta", "alpha"))
    assert c.vocabulary == ("zeta", "alpha")
    np.testing.assert_array_equal(c.words, [0, 1, 1])


# ------------------------------------------------------------------ from_document_term


def test_from_document_term_round_trip_dense_and_sparse():
    sparse = pytest.importorskip("scipy.sparse")
    m = np.array([[2, 0, 1, 0], [0, 0, 0, 0], [0, 3, 0, 1]])
    c = Corpus.from_document_term(m, VOCAB, labels=[0, 1, 1])
    np.testing.assert_array_equal(c.words, [0, 0, 2, 1, 1, 1, 3])
    np.testing.assert_array_equal(c.doc_lengths, [3, 0, 4])
    np.testing.assert_array_equal(c.document_term_matrix(), m)
    s = Corpus.from_document_term(sparse.csr_matrix(m), VOCAB)
    np.testing.assert_array_equal(s.words, c.words)
    np.testing.assert_array_equal(s.doc_offsets, c.doc_offsets)
    f = Corpus.from_document_term(m.astype(float), VOCAB)
    np.testing.assert_array_equal(f.words, c.words)
    with warnings.catch_warnings():  # float16 counts: no overflow warning (compared as float64)
        warnings.simplefilter("error")
        h = Corpus.from_document_term(m.astype(np.float16), VOCAB)
    np.testing.assert_array_equal(h.words, c.words)
    # round trip from an arbitrary corpus (token order becomes word-id order)
    x = small()
    np.testing.assert_array_equal(
        Corpus.from_document_term(x.document_term_matrix(), VOCAB).document_term_matrix(),
        x.document_term_matrix(),
    )


def test_from_document_term_errors():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match=r"nonnegative: entry \[1, 2\] is -1"):
        Corpus.from_document_term(np.array([[1, 0, 0, 0], [0, 0, -1, 0]]), VOCAB)
    with pytest.raises(ValueError, match=r"nonnegative"):
        Corpus.from_document_term(sparse.csr_matrix(np.array([[0, -2, 0, 0]])), VOCAB)
    with pytest.raises(ValueError, match=r"whole numbers: entry \[0, 1\] is 0.5"):
        Corpus.from_document_term(np.array([[1.0, 0.5, 0, 0]]), VOCAB)
    with pytest.raises(ValueError, match="4 words"):
        Corpus.from_document_term(np.ones((2, 3), dtype=int), VOCAB)


# ------------------------------------------------------------------ from_labeled_counts


def test_from_labeled_counts(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("apple\nbanana\ncherry\n")
    docs = tmp_path / "docs.txt"
    docs.write_text("1 0:2 2:1\n0\n0 1:3\n")
    c = Corpus.from_labeled_counts(docs, vocab)
    assert c.vocabulary == ("apple", "banana", "cherry")
    np.testing.assert_array_equal(c.words, [0, 0, 2, 1, 1, 1])
    np.testing.assert_array_equal(c.doc_lengths, [3, 0, 3])
    np.testing.assert_array_equal(c.labels, [1, 0, 0])
    assert read_vocabulary(vocab) == c.vocabulary

    rated = tmp_path / "rated.txt"
    rated.write_text("-100 0:1\n100 1:1 2:2\n")
    m = Corpus.from_labeled_counts(rated, ("a", "b", "c"), label_map={"-100": 0, "100": 1})
    np.testing.assert_array_equal(m.labels, [0, 1])
    assert m.label_names == ("-100", "100")
    r = Corpus.from_labeled_counts(rated, ("a", "b", "c"), label_type="rating")
    np.testing.assert_array_equal(r.labels, [-100.0, 100.0])
    with pytest.raises(ValueError, match=r"rated.txt: line 1: class id -100 is negative"):
        Corpus.from_labeled_counts(rated, ("a", "b", "c"))


@pytest.mark.parametrize(
    "content, line, what",
    [
        ("0 0:1\n1 1:x\n", 2, "count 'x'"),
        ("0 0:1\n1 1:2\n0 2\n", 3, "'2' is not WORD_ID:COUNT"),
        ("0 0:1\n\n1 1:1\n", 2, "blank line"),
        ("0 0:1 1:-3\n", 1, "count '-3'"),
        ("0 0:1\nspam 1:1\n", 2, "label 'spam' is not an integer"),
        ("0 0:1\n1 9:1\n", 2, r"word id 9 is outside the vocabulary \[0, 3\)"),
    ],
)
def test_from_labeled_counts_malformed_lines(tmp_path, content, line, what):
    p = tmp_path / "bad.txt"
    p.write_text(content)
    with pytest.raises(ValueError, match=rf"bad\.txt: line {line}: .*{what}"):
        Corpus.from_labeled_counts(p, ("a", "b", "c"))


def test_from_labeled_counts_unknown_label_in_map(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("a 0:1\nb 0:1\nc 1:1\n")
    with pytest.raises(ValueError, match=r"line 3: label 'c' is not in label_map"):
        Corpus.from_labeled_counts(p, ("x", "y"), label_map={"a": 0, "b": 1})


# ------------------------------------------------------------------ re-encoding and subsets


def test_restrict_vocabulary_counts_dropped_tokens_exactly():
    c = small()  # tokens: apple banana apple | | date cherry
    r, dropped = c.restrict_vocabulary(("cherry", "apple", "kiwi"))
    assert dropped == 2  # banana, date
    assert r.vocabulary == ("cherry", "apple", "kiwi")
    np.testing.assert_array_equal(r.words, [1, 1, 0])
    np.testing.assert_array_equal(r.doc_lengths, [2, 0, 1])
    np.testing.assert_array_equal(r.labels, c.labels)
    assert r.label_names == c.label_names
    same, zero = c.restrict_vocabulary(c.vocabulary)
    assert zero == 0
    np.testing.assert_array_equal(same.words, c.words)


def test_remove_words_and_compact():
    c = small()
    r = c.remove_words({"banana", "date", "not-a-word"})
    assert r.vocabulary == ("apple", "cherry")
    assert r.document_words(0) == ["apple", "apple"] and r.document_words(2) == ["cherry"]
    x = Corpus(np.array([3, 1, 3]), np.array([0, 1, 3]), VOCAB).compact()
    assert x.vocabulary == ("banana", "date")
    np.testing.assert_array_equal(x.words, [1, 0, 1])


def test_subset():
    c = small()
    s = c.subset([2, 0])
    assert s.num_docs == 2 and s.vocabulary == c.vocabulary
    assert s.document_words(0) == ["date", "cherry"]
    assert s.document_words(1) == ["apple", "banana", "apple"]
    np.testing.assert_array_equal(s.labels, [0, 0])
    m = c.subset(np.array([False, True, True]))
    np.testing.assert_array_equal(m.doc_lengths, [0, 2])
    assert c.subset([]).num_docs == 0
    with pytest.raises(IndexError):
        c.subset([3])


# ------------------------------------------------------------------ splits


def labelled_corpus(n=200, seed=1):
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1, 2], [100, 60, 40])[:n]
    lengths = rng.integers(1, 20, size=n)
    words = rng.integers(0, 50, size=lengths.sum())
    vocab = tuple(f"w{i:02d}" for i in range(50))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return Corpus(words, offsets, vocab, labels)


def test_split_indices_partition_and_determinism():
    y = np.repeat([0, 1, 2], [100, 60, 40])
    tr, te = split_indices(y, 0.25, seed=3)
    assert len(te) == 50 and len(tr) == 150
    assert np.all(np.diff(tr) > 0) and np.all(np.diff(te) > 0)
    np.testing.assert_array_equal(np.sort(np.concatenate([tr, te])), np.arange(200))
    np.testing.assert_array_equal(np.bincount(y[te]), [25, 15, 10])  # exact proportions
    tr2, te2 = split_indices(y, 0.25, seed=3)
    np.testing.assert_array_equal(te, te2)
    _, te3 = split_indices(y, 0.25, seed=4)
    assert not np.array_equal(te, te3)
    _, te4 = split_indices(7, 0.3, seed=0)  # unlabelled: a document count
    assert len(te4) == 2
    with pytest.raises(ValueError):
        split_indices(y, 1.0)
    with pytest.raises(ValueError):
        split_indices(3, 0.1)


def test_train_test_split():
    c = labelled_corpus()
    train, test, dropped = c.train_test_split(test_fraction=0.3, seed=5)
    assert train.num_docs + test.num_docs == c.num_docs == 200
    assert test.num_docs == 60
    # stratified: each class within one document of its share
    for k, n_k in enumerate([100, 60, 40]):
        assert abs(int((test.labels == k).sum()) - 0.3 * n_k) <= 1
    # shared compact vocabulary: every training word occurs in training
    assert train.vocabulary == test.vocabulary
    assert np.all(train.word_counts() > 0)
    assert dropped >= 0
    assert train.num_tokens + test.num_tokens + dropped == c.num_tokens
    # deterministic
    again = c.train_test_split(test_fraction=0.3, seed=5)
    np.testing.assert_array_equal(again[1].words, test.words)
    np.testing.assert_array_equal(again[1].doc_offsets, test.doc_offsets)
    other = c.train_test_split(test_fraction=0.3, seed=6)
    assert not np.array_equal(other[1].doc_lengths, test.doc_lengths)


def test_train_test_split_counts_dropped_test_tokens():
    # word "rare" (id 3) occurs only in the last document
    words = np.array([0, 1, 0, 1, 2, 0, 1, 2, 3, 3, 0])
    offsets = np.array([0, 2, 4, 6, 8, 11])
    c = Corpus(words, offsets, VOCAB[:3] + ("rare",))
    seen = set()
    for seed in range(40):
        train, test, dropped = c.train_test_split(test_fraction=0.2, seed=seed, stratify=False)
        assert test.num_docs == 1
        last_doc_in_test = test.num_tokens + dropped == 3  # only the last document has 3 tokens
        assert dropped == (2 if last_doc_in_test else 0)
        assert ("rare" in train.vocabulary) == (not last_doc_in_test)
        seen.add(last_doc_in_test)
    assert seen == {True, False}


# ------------------------------------------------------------------ vocabulary filters


def test_document_frequencies_and_counts():
    c = Corpus.from_texts(TEXTS)
    dense = c.document_term_matrix()
    np.testing.assert_array_equal(c.document_frequencies(), (dense > 0).sum(axis=0))
    np.testing.assert_array_equal(c.word_counts(), dense.sum(axis=0))
    empty = Corpus(np.zeros(0, np.int32), np.zeros(3, np.int64), VOCAB)
    np.testing.assert_array_equal(empty.document_frequencies(), [0, 0, 0, 0])


def test_filter_vocabulary_min_count_and_rankings():
    full = Corpus.from_texts(TEXTS)  # counts: alpha 4, beta 3, gamma 2, zeta 3, delta 1, epsilon 1
    assert full.filter_vocabulary(min_count=3).vocabulary == ("alpha", "beta", "zeta")
    assert Corpus.from_texts(TEXTS, min_count=3).vocabulary == ("alpha", "beta", "zeta")
    # "more than 25 % of the documents" (1 of 4) dropped: only df <= 1 words stay
    assert full.filter_vocabulary(max_df=0.25).vocabulary == ("delta", "epsilon", "zeta")
    # df ranking: alpha 4, beta 3, gamma 2 | count: alpha 4, then beta/zeta 3 (tie -> beta)
    assert full.filter_vocabulary(max_vocab=3).vocabulary == ("alpha", "beta", "gamma")
    assert full.filter_vocabulary(max_vocab=2, rank_by="count").vocabulary == ("alpha", "beta")
    assert full.filter_vocabulary(max_vocab=3, rank_by="count").vocabulary == ("alpha", "beta", "zeta")
    # total tf-idf = count * log(D / df): omega 3 log 4 > gamma 2 log 4 > beta = delta = log 4
    # (tie: beta first) > alpha 3 log(4/3)
    texts = ["alpha beta", "alpha gamma gamma", "alpha delta", "omega omega omega"]
    with pytest.warns(DataLossWarning, match="1 of 4 documents"):
        tfidf = Corpus.from_texts(texts, max_vocab=3, rank_by="tfidf")
    assert tfidf.vocabulary == ("beta", "gamma", "omega")
    assert Corpus.from_texts(texts).filter_vocabulary(max_vocab=3, rank_by="tfidf").vocabulary == tfidf.vocabulary
    with pytest.warns(DataLossWarning, match="1 of 4 documents"):
        assert Corpus.from_texts(texts, max_vocab=3).vocabulary == ("alpha", "beta", "delta")
    assert Corpus.from_texts(texts, max_vocab=3, rank_by="count").vocabulary == ("alpha", "gamma", "omega")
    assert full.filter_vocabulary() is full  # nothing to drop
    kept = full.filter_vocabulary(min_df=2)
    assert kept.document_words(3) == ["alpha"]  # re-encoded, token order kept


def test_filter_vocabulary_keeps_relative_order_and_drops_unused_words():
    c = Corpus(np.array([3, 0, 3, 1]), np.array([0, 2, 4]), ("date", "apple", "cherry", "banana"))
    f = c.filter_vocabulary()
    assert f.vocabulary == ("date", "apple", "banana")  # cherry never occurs
    assert f.document_words(0) == ["banana", "date"]
    assert c.filter_vocabulary(min_df=0).vocabulary == f.vocabulary


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rank_by="bm25", max_vocab=2), "rank_by"),
        (dict(min_count=-1), "min_count"),
        (dict(min_count=1.5), "min_count"),
        (dict(max_vocab=-1), "max_vocab"),
        (dict(max_df=1.5), "fraction"),
        (dict(min_df=3, max_df=2), "max_df"),
        (dict(min_df=5), "min_df=5 asks for words in 5 documents, but the corpus has 4"),
    ],
)
def test_filter_vocabulary_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Corpus.from_texts(TEXTS).filter_vocabulary(**kwargs)


def test_from_texts_equals_filtering_the_unfiltered_corpus():
    texts = [" ".join(f"w{chr(97 + (i * j) % 7)}x" for j in range(i % 5 + 3)) for i in range(30)]
    kw = dict(min_df=2, max_df=0.6, min_count=3, max_vocab=4, rank_by="tfidf")
    with pytest.warns(DataLossWarning, match="6 of 30 documents have no token left"):
        a = Corpus.from_texts(texts, **kw)
    b = Corpus.from_texts(texts).filter_vocabulary(**kw)
    assert a.vocabulary == b.vocabulary and len(a.vocabulary) == 4
    np.testing.assert_array_equal(a.words, b.words)
    np.testing.assert_array_equal(a.doc_offsets, b.doc_offsets)


# ------------------------------------------------------------------ K-fold cross-validation


def test_kfold_indices_partition_sizes_and_determinism():
    folds = kfold_indices(23, num_folds=5, seed=3)
    assert len(folds) == 5
    tests = [te for _, te in folds]
    np.testing.assert_array_equal(np.sort(np.concatenate(tests)), np.arange(23))
    assert sorted(t.size for t in tests) == [4, 4, 5, 5, 5]
    for tr, te in folds:
        assert tr.dtype == te.dtype == np.int64
        np.testing.assert_array_equal(np.sort(np.concatenate([tr, te])), np.arange(23))
        assert np.all(np.diff(tr) > 0) and np.all(np.diff(te) > 0)
    again = kfold_indices(23, num_folds=5, seed=3)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = kfold_indices(23, num_folds=5, seed=4)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


def test_kfold_indices_stratified():
    labels = np.array([0] * 10 + [1] * 7 + [2] * 3)
    for _, te in kfold_indices(labels, num_folds=3, seed=0):
        counts = np.bincount(labels[te], minlength=3)
        assert np.all(np.abs(counts - np.array([10, 7, 3]) / 3) < 1)
    # ratings and multi-label indicators are folded without stratification
    assert len(kfold_indices(np.linspace(0, 1, 10), 5)) == 5
    assert len(kfold_indices(np.eye(10, 3, dtype=np.int64), 5)) == 5


@pytest.mark.parametrize("num_docs, k, match", [(10, 1, ">= 2"), (10, 2.5, ">= 2"), (3, 4, "more than the 3")])
def test_kfold_indices_errors(num_docs, k, match):
    with pytest.raises(ValueError, match=match):
        kfold_indices(num_docs, num_folds=k)


def test_kfold_splits_vocabulary_from_training_part():
    words = np.array([0, 1, 0, 1, 2, 0, 1, 2, 3, 3, 0])  # "rare" (3) only in the last document
    c = Corpus(words, np.array([0, 2, 4, 6, 8, 11]), VOCAB[:3] + ("rare",), labels=np.array([0, 1, 0, 1, 0]))
    splits = c.kfold_splits(num_folds=5, seed=0)
    assert [te.num_docs for _, te, _ in splits] == [1] * 5
    for train, test, dropped in splits:
        assert train.vocabulary == test.vocabulary
        assert np.all(train.word_counts() > 0)
        has_rare_doc = test.num_tokens + dropped == 3
        assert dropped == (2 if has_rare_doc else 0)
        assert ("rare" in train.vocabulary) == (not has_rare_doc)


# ------------------------------------------------------------------ label kinds, views and checks


def test_multilabel_labels_and_one_vs_all_view():
    w, o = np.array([0, 1, 2]), np.array([0, 1, 2, 3])
    c = Corpus(w, o, VOCAB, labels=np.array([2, 0, 2]), label_names=("a", "b", "c"))
    ova = c.one_vs_all_labels()
    np.testing.assert_array_equal(ova, [[0, 0, 1], [1, 0, 0], [0, 0, 1]])
    assert ova.dtype == np.int64 and not ova.flags.writeable
    m = c.as_multilabel()
    assert m.label_kind == "multilabel" and m.num_classes == 3 and m.label_names == ("a", "b", "c")
    np.testing.assert_array_equal(m.labels, ova)
    assert m.as_multilabel() is m and m.one_vs_all_labels() is m.labels
    np.testing.assert_array_equal(m.subset([2, 0]).labels, [[0, 0, 1], [0, 0, 1]])
    binary = Corpus(w, o, VOCAB, labels=np.array([1, 0, 1]))
    np.testing.assert_array_equal(binary.one_vs_all_labels(), [[0, 1], [1, 0], [0, 1]])
    # real multi-label data: int, bool or whole-number float 0/1
    for raw in ([[1, 0], [1, 1], [0, 0]], np.array([[1, 0], [1, 1], [0, 0]], bool), [[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]):
        ml = Corpus(w, o, VOCAB, labels=np.asarray(raw), label_names=("x", "y"))
        assert ml.labels.dtype == np.int64 and ml.label_kind == "multilabel"
    with pytest.raises(ValueError, match="0/1"):
        Corpus(w, o, VOCAB, labels=np.array([[0.5, 0], [1, 1], [0, 0]]))
    with pytest.raises(ValueError, match="3 label_names for multi-label labels with L=2"):
        Corpus(w, o, VOCAB, labels=np.array([[1, 0], [1, 1], [0, 0]]), label_names=("x", "y", "z"))
    ratings = Corpus(w, o, VOCAB, labels=np.array([0.1, 0.5, 0.9]))
    with pytest.raises(ValueError, match="ratings cannot"):
        ratings.one_vs_all_labels()
    with pytest.raises(ValueError, match="no labels"):
        Corpus(w, o, VOCAB).as_multilabel()


def test_non_finite_rating_is_named_at_construction():
    with pytest.raises(ValueError, match=r"non-finite rating at document 1 \(nan\)"):
        Corpus(np.array([0, 1]), np.array([0, 1, 2]), VOCAB, labels=np.array([0.5, np.nan]))


def test_require_labels_messages():
    w, o = np.zeros(13, np.int64), np.arange(14)
    classes = Corpus(w, o, VOCAB, labels=np.arange(13) % 5)
    np.testing.assert_array_equal(classes.require_labels("multiclass"), np.arange(13) % 5)
    assert classes.require_labels("multiclass", num_classes=5).dtype == np.int64
    y = np.arange(13) % 5
    y[12] = 7
    bigger = Corpus(w, o, VOCAB, labels=y)
    with pytest.raises(ValueError, match="^class label 7 out of range for 5 classes at document 12$"):
        bigger.require_labels("multiclass", num_classes=5)
    with pytest.raises(ValueError, match="binary labels cannot use a corpus with multiclass labels"):
        classes.require_labels("binary")
    with pytest.raises(ValueError, match=r"as_multilabel\(\)"):
        classes.require_labels("multilabel")
    with pytest.raises(ValueError, match="regression labels cannot use a corpus with multiclass"):
        classes.require_labels("regression")
    with pytest.raises(ValueError, match="without labels|has none"):
        Corpus(w, o, VOCAB).require_labels("regression")
    with pytest.raises(ValueError, match="label kind"):
        classes.require_labels("ordinal")
    binary = Corpus(w, o, VOCAB, labels=np.arange(13) % 2)
    assert binary.require_labels("binary").shape == (13,)
    assert binary.require_labels("multiclass").shape == (13,)  # two classes are a multiclass task
    ratings = Corpus(w, o, VOCAB, labels=np.linspace(0, 1, 13))
    assert ratings.require_labels("regression").dtype == np.float64
    indicators = np.zeros((13, 3), np.int64)
    indicators[np.arange(13), np.arange(13) % 3] = 1
    indicators[4] = 0
    ml = Corpus(w, o, VOCAB, labels=indicators)
    assert ml.require_labels("multilabel").shape == (13, 3)  # empty rows allowed by default
    with pytest.raises(ValueError, match="^document 4 has no positive label"):
        ml.require_labels("multilabel", at_least_one=True)
    with pytest.raises(ValueError, match="3 columns but num_classes=4"):
        ml.require_labels("multilabel", num_classes=4)


def test_check_labels_on_bare_arrays():
    with pytest.raises(ValueError, match="^non-finite rating at document 3"):
        check_labels([0.1, 0.2, 0.3, np.inf], "regression")
    out = check_labels([1, 2, 3], "regression")
    assert out.dtype == np.float64 and not out.flags.writeable
    with pytest.raises(ValueError, match="class label 2 out of range for 2 classes at document 1"):
        check_labels([0, 2], "binary")
    with pytest.raises(ValueError, match="class label -1 is negative at document 0"):
        check_labels([-1, 0], "multiclass")
    with pytest.raises(ValueError, match="class label 0.5 at document 1 is not a whole number"):
        check_labels([1.0, 0.5], "multiclass", num_classes=3)
    np.testing.assert_array_equal(check_labels([1.0, 2.0], "multiclass", num_classes=3), [1, 2])
    with pytest.raises(ValueError, match="multi-label entry 2 at document 1, label 0 is not 0 or 1"):
        check_labels([[0, 1], [2, 0]], "multilabel")
    with pytest.raises(ValueError, match=r"must be \[D\]"):
        check_labels([[0, 1]], "multiclass")
    with pytest.raises(ValueError, match=r"must be \[D, L\]"):
        check_labels([0, 1], "multilabel")
    with pytest.raises(TypeError, match="numeric"):
        check_labels(["a", "b"], "binary")
    with pytest.raises(ValueError, match="2 classes"):
        check_labels([0, 1], "binary", num_classes=3)


# ------------------------------------------------------------------ input cases, drops, report


def test_ids_with_digits_are_words_by_default():
    # texts of ids used to become Corpus(D=200, N=0, V=0) without a word
    texts = [f"w{i} v{i % 7} w{i + 1}" for i in range(200)]
    c = Corpus.from_texts(texts)
    assert (c.num_docs, c.num_tokens) == (200, 600) and {"w123", "v6"} <= set(c.vocabulary)
    with pytest.raises(InputError, match=(
        r"^Corpus.from_texts: all 600 tokens of the 200 texts were dropped: 600 containing a digit; "
        "the corpus would be empty$"
    )):
        Corpus.from_texts(texts, digits="drop")
    with pytest.raises(InputError, match=r"none of the 3 texts contains a token of token_pattern '\[a-z\]\+' \(6 letters"):
        Corpus.from_texts(["12", "34", "56"], token_pattern="[a-z]+")
    with pytest.raises(InputError, match="no texts"):
        Corpus.from_texts([])


@pytest.mark.parametrize(
    "texts, match",
    [
        ("one string", r"not a single string; for one document pass \[text\]"),
        (b"bytes", "not a single bytes object"),
        ({"a text", "another"}, "ordered sequence"),
        ({"d0": "a text"}, "ordered sequence"),
        (["fine", None], r"texts\[1\] is missing \(None\); every document needs a str"),
        (42, "ordered sequence"),
    ],
)
def test_texts_must_be_a_sequence_of_str(texts, match):
    # from_texts("one string") used to make one document per character
    with pytest.raises(InputTypeError, match=match):
        Corpus.from_texts(texts)


def test_token_lists_and_data_frames_are_named_with_what_to_do():
    """A user's report: ragged token-id lists and a DataFrame of texts gave raw numpy errors
    (or, from_texts(frame), one document per column name)."""
    import pandas as pd

    frame = pd.DataFrame({"id": [1, 2], "body": ["apple pie", "cherry tart"]})
    with pytest.raises(InputTypeError, match=r"texts is a pandas DataFrame \(2 rows, columns "
                                             r"'id', 'body'\); pass its column of texts, e.g. "
                                             r"frame\['body'\]"):
        Corpus.from_texts(frame)
    assert Corpus.from_texts(frame["body"]).num_docs == 2
    with pytest.raises(InputTypeError, match=r"texts\[0\] is a list of 2 items, not a str: .*"
                                             r"' '.join\(tokens\)"):
        Corpus.from_texts([["apple", "pie"], ["cherry"]])
    with pytest.raises(InputTypeError, match=r"texts\[1\] is missing \(None\)"):
        Corpus.from_texts(["apple pie", None])
    docs = [[0, 1, 0], [3, 2]]
    with pytest.raises(InputError, match=r"words must be one flat \[N\] array of word ids.*got 2 "
                                         r"sequences of lengths 3, 2: the corpus of token-id lists"):
        Corpus(docs, [0, 3, 5], VOCAB)
    corpus = Corpus(np.concatenate(docs), np.cumsum([0, *map(len, docs)]), VOCAB)  # the recipe
    assert corpus.document_words(1) == ["date", "cherry"]
    with pytest.raises(InputError, match=r"each row V = 4 counts; got 2 rows of lengths 3, 2 "
                                         r"\(token-id lists docs\?"):
        Corpus.from_document_term(docs, VOCAB)


def test_missing_labels_are_named_or_dropped_with_a_warning():
    texts = ["apple pie", "banana split", "cherry tart", "date cake"]
    # [0, None, 1, 0] used to make a class named 'None'
    with pytest.raises(InputError, match=r"^document 1: the label is missing \(None\).*missing_labels='drop'"):
        Corpus.from_texts(texts, labels=[0, None, 1, 0])
    with pytest.raises(InputError, match=r"document 2: the label is missing \(nan\)"):
        Corpus.from_texts(texts, labels=["a", "b", float("nan"), "a"])
    with pytest.raises(InputError, match=r"document 3: the label is missing \(nan\)"):
        Corpus.from_texts(texts, labels=[0.5, 0.1, 0.2, np.nan])
    with pytest.raises(InputError, match=r"non-finite rating at document 3 \(nan\).*missing_labels='drop'"):
        Corpus.from_texts(texts, labels=np.array([0.5, 0.1, 0.2, np.nan]))
    with pytest.warns(DataLossWarning, match=r"2 documents with a missing label removed \(input positions 1, 3\)"):
        c = Corpus.from_texts(texts, labels=[0, None, 1, np.nan], missing_labels="drop")
    assert c.num_docs == 2 and c.document_words(1) == ["cherry", "tart"]
    np.testing.assert_array_equal(c.labels, [0, 1])
    assert "labels missing: 2 (removed: input positions 1, 3)" in c.report()
    with pytest.warns(DataLossWarning):
        r = Corpus.from_texts(texts, labels=np.array([0.5, np.nan, 0.1, 0.2]), missing_labels="drop")
    np.testing.assert_array_equal(r.labels, [0.5, 0.1, 0.2])
    with pytest.raises(InputError, match="missing_labels must be 'error' or 'drop'"):
        Corpus.from_texts(texts, labels=[0, 1, 0, 1], missing_labels="skip")
    with pytest.raises(InputError, match="labels have 3 rows but there are 4 texts"):
        Corpus.from_texts(texts, labels=[0, None, 1], missing_labels="drop")
    m = np.array([[1, 0], [0, 1], [1, 1]])
    with pytest.warns(DataLossWarning, match="input position 0"):
        d = Corpus.from_document_term(m, ("x", "y"), labels=[None, 1, 0], missing_labels="drop")
    np.testing.assert_array_equal(d.doc_lengths, [1, 2])


@pytest.mark.parametrize(
    "labels, error, match",
    [
        ([0, "a", 1], TypeError, r"labels mix str and numbers \(document 1 has a str, document 0 a number\)"),
        ([b"x", b"y", b"x"], TypeError, r"document 0: the label b'x' is bytes; decode the labels to str"),
        (np.array([b"x", b"y", b"x"]), TypeError, "labels are bytes; decode them to str"),
        ("abc", TypeError, "not a single string"),
        ({0, 1, 2}, TypeError, "ordered sequence"),
        ([[0, 1], [1], [0, 1]], ValueError, r"\[D, L\] array of equal-length rows \(the rows differ"),
        ([0, [1], 0], TypeError, "document 1: the label \\[1\\] is a list"),
        ([1 + 2j, 0, 0], TypeError, r"document 0: the label \(1\+2j\) is a complex; labels must be numbers or str"),
        (np.array([1 + 2j, 0, 0]), TypeError, "unsupported label dtype complex128"),
        ([0, 2**70, 1], ValueError, "document 1: class id 1180591620717411303424 does not fit in int64"),
        # found by the fuzzer: one_vs_all_labels() then tried to allocate [D, 2**62] indicators
        ([0, 2**62, 1], ValueError, "document 1: class id 4611686018427387904 would make 4,611,686,018,427,387,905 classes"),
        ([19999, 20000, 19999], ValueError, "document 0: class id 19999 would make 20,000 classes"),
        (np.array([0, 2**63, 1], dtype=np.uint64), ValueError, "does not fit in int64"),
        ([[0, 1], [1, 2], [0, 0]], ValueError, "document 1: multi-label .* entry 1 is 2"),
        (np.array(["a", "b", "c"]).reshape(3, 1), ValueError, r"class names \(str labels\) must be \[D\]"),
        (np.zeros((3, 1, 1)), ValueError, r"must be \[D\] or \[D, L\]"),
        (iter([0, 1, 0]), ValueError, r"must be \[D\] or \[D, L\]"),
    ],
)
def test_labels_of_every_type_fail_clearly(labels, error, match):
    with pytest.raises(error, match=match):
        Corpus.from_texts(["aa bb", "cc dd", "ee ff"], labels=labels)


def test_labels_of_every_legal_type():
    w, o = np.array([0, 1, 2]), np.array([0, 1, 2, 3])
    for raw, kind in [
        ([True, False, True], "binary"),
        ([0, 1, 2], "multiclass"),
        (np.array([0, 1, 1], dtype=np.uint8), "binary"),
        ([0.5, 1.0, -2.0], "regression"),
        (np.array([0.5, 1.0, -2.0], dtype=np.float32), "regression"),
        (["b", "a", "b"], "binary"),
        (np.array(["b", "a", "b"], dtype=object), "binary"),
        ([[1, 0], [0, 1], [True, True]], "multilabel"),
        (np.array([0, 1, 2], dtype=object), "multiclass"),
    ]:
        c = Corpus(w, o, VOCAB, labels=raw)
        assert c.label_kind == kind, raw
        assert not c.labels.flags.writeable
    assert Corpus(w, o, VOCAB, labels=["b", "a", "b"]).label_names == ("a", "b")
    assert Corpus(w, o, VOCAB, labels=[1, 0, 1], label_names=(-100, 100)).label_names == ("-100", "100")
    with pytest.raises(InputTypeError, match=r"label_names\[0\] must be str, got NoneType"):
        Corpus(w, o, VOCAB, labels=[1, 0, 1], label_names=(None, "a"))


def test_report_counts_every_drop():
    texts = ["The cat sat on the mat", "a I", "", "Dog 42 dogs"]
    with pytest.warns(DataLossWarning, match=r"^Corpus.from_texts: 1 of 4 documents have no token left"):
        c = Corpus.from_texts(texts, labels=[0, 1, 0, 1], digits="drop")
    assert c.report() == "\n".join([
        "Corpus(D=4, N=5, V=5, labels=binary)",
        "from_texts (4 texts, tokenizer digits='drop'): 11 tokens in, 5 kept",
        "  dropped: 1 containing a digit, 2 shorter than 2 characters, 3 stop words",
        "  documents emptied: 1",
        "  labels missing: 0",
        "empty documents: 2 (indices 1, 2)",
    ])
    # the vocabulary filters and restriction to another vocabulary are counted too
    f = Corpus.from_texts(TEXTS, min_df=2)  # delta, epsilon, zeta x3
    assert "dropped: 5 in fewer than min_df=2 documents" in f.report()
    r, dropped = f.restrict_vocabulary(("alpha",))
    assert dropped == 5 and "restrict_vocabulary (V=1): 9 tokens in, 4 kept" in r.report()
    assert "dropped: 5 not in the new vocabulary" in r.report()
    e, _ = f.restrict_vocabulary(("gamma",))
    assert "documents emptied: 2" in e.report() and e.report().endswith("empty documents: 2 (indices 2, 3)")
    # letters that no token covers (a custom pattern, or the ASCII tokenizer on other scripts)
    with pytest.warns(DataLossWarning, match="1 of 2 documents have no token left; 6 letters/digits are outside every token"):
        g = Corpus.from_texts(["αβγ δεζ", "plain text words"], tokenizer=ASCII_TOKENIZER)
    assert "letters/digits outside every token: 6" in g.report()
    assert small().report().splitlines()[1:] == ["built from arrays: no drops recorded", "empty documents: 1 (index 1)"]


def test_from_texts_with_vocabulary_rejects_ignored_filters():
    with pytest.raises(InputError, match="min_df, max_vocab filter the vocabulary built from the texts"):
        Corpus.from_texts(["alpha beta"], vocabulary=("alpha",), min_df=2, max_vocab=5)
    with pytest.raises(InputError, match="vocabulary= option.*'alpha' appears twice"):
        Corpus.from_texts(["alpha beta"], vocabulary=("alpha", "alpha"))
    c = Corpus.from_texts(["alpha beta gamma", "beta"], vocabulary=("alpha", "beta"))
    assert "dropped: 1 not in the given vocabulary" in c.report()


def test_from_document_term_empty_input_is_an_error():
    with pytest.raises(InputError, match="no rows"):
        Corpus.from_document_term(np.zeros((0, 4)), VOCAB)
    with pytest.raises(InputError, match="every entry of the document-term matrix is zero"):
        Corpus.from_document_term(np.zeros((2, 4)), VOCAB)
    with pytest.raises(InputError, match=r"entry \[0, 1\] is 1000000000000.0, more than 2,147,483,647 tokens"):
        Corpus.from_document_term(np.array([[0, 1e12, 0, 0]]), VOCAB)
    with pytest.raises(InputError, match="must be numbers, got dtype <U1"):
        Corpus.from_document_term(np.array([["a", "b", "c", "d"]]), VOCAB)
    with pytest.raises(InputError, match=r"2-D \[D, V\] array of counts"):
        Corpus.from_document_term([[1, 2, 3, 4], [1]], VOCAB)


def test_documents_to_score_may_all_be_empty_when_asked():
    """allow_empty=True (documents to score, not to fit): no rows, a matrix of zeros, no texts
    or texts without a token give the corpus of their documents without tokens instead of an
    error; the default stays an error."""
    for matrix, D in ((np.zeros((0, 4)), 0), (np.zeros((2, 4), int), 2)):
        corpus = Corpus.from_document_term(matrix, VOCAB, allow_empty=True)
        assert (corpus.num_docs, corpus.num_tokens, corpus.vocabulary) == (D, 0, VOCAB)
    import scipy.sparse as sp

    assert Corpus.from_document_term(sp.csr_matrix((3, 4)), VOCAB, allow_empty=True).num_docs == 3
    assert Corpus.from_texts([], allow_empty=True).num_docs == 0
    assert Corpus.from_texts([], vocabulary=VOCAB, allow_empty=True).vocabulary == VOCAB
    with pytest.warns(DataLossWarning, match="2 of 3 documents have no token left"):
        corpus = Corpus.from_texts(["the and", "", "of"], allow_empty=True)
    assert (corpus.num_docs, corpus.num_tokens) == (3, 0)
    with pytest.raises(InputError, match="the corpus would be empty"):
        Corpus.from_texts(["the and"])
    with pytest.raises(InputTypeError, match="allow_empty must be True or False, got 'yes'"):
        Corpus.from_document_term(np.ones((1, 4)), VOCAB, allow_empty="yes")


@pytest.mark.parametrize(
    "content, line, what",
    [
        # a non-UTF-8 byte once raised a bare UnicodeDecodeError without the file
        (b"0 0:1\n1 1:\xff2\n", 2, r"the byte 0xff \(byte 5 of the line\) is not UTF-8"),
        # a Unicode digit once failed without a line, or be read as a number
        ("0 0:1\n1 1:\u0663\n".encode(), 2, r"count '\u0663' contains the non-ASCII digit U\+0663 \(ARABIC-INDIC DIGIT THREE\)"),
        ("0 0:1\n\u0661 1:1\n".encode(), 2, r"label '\u0661' contains the non-ASCII digit U\+0661"),
        ("0 0:1\n1 \u00b2:1\n".encode(), 2, r"word id '\u00b2' contains the non-ASCII digit U\+00B2 \(SUPERSCRIPT TWO\)"),
        ("0 0:1\n1\u00a01:1\n".encode(), 2, r"U\+00A0 \(NO-BREAK SPACE\) at column 2 separates fields"),
        (b"0 0:1\n1_0 1:1\n", 2, r"label '1_0' is not an integer class id"),
        (b"0 0:1\n1 1:99999999999999999999\n", 2, "the number 99999999999999999999 is too large"),
        (b"0 0:1\n1 1:3000000000\n", 2, "count 3000000000 is more than 2,147,483,647 tokens"),
        (b"0 0:1\n0 1:1\n-2 0:1\n", 3, "class id -2 is negative"),
        (b"0 0:1\n1 0:1 5:2\n", 2, r"word id 5 is outside the vocabulary \[0, 3\)"),
        (b"0 0:1\n1 0:1 1:\n", 2, r"token '1:': the count is missing"),
    ],
)
def test_labeled_counts_errors_name_file_and_line(tmp_path, content, line, what):
    p = tmp_path / "docs.txt"
    p.write_bytes(content)
    with pytest.raises(InputError, match=rf"^{p}: line {line}: .*{what}"):
        Corpus.from_labeled_counts(p, ("a", "b", "c"))


def test_labeled_counts_ratings_and_whole_file_problems(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_bytes(b"\xef\xbb\xbf0.5 0:1\r\n1e999 1:1\r\n")  # a BOM and CRLF line ends are fine
    with pytest.raises(InputError, match=rf"^{p}: line 2: non-finite rating \(inf\)"):
        Corpus.from_labeled_counts(p, ("a", "b"), label_type="rating")
    p.write_text("0.5 0:1\nnan 1:1\n")
    with pytest.raises(InputError, match="line 2: label 'nan' is not a decimal number"):
        Corpus.from_labeled_counts(p, ("a", "b"), label_type="rating")
    p.write_text("0.5 0:1\n-1.5e-1 1:2\n\n")
    r = Corpus.from_labeled_counts(p, ("a", "b"), label_type="rating")
    np.testing.assert_array_equal(r.labels, [0.5, -0.15])
    assert r.report().splitlines()[1] == f"from_labeled_counts ({p}): 3 tokens in, 3 kept"
    p.write_text("")
    with pytest.raises(InputError, match=rf"^{p}: the file has no documents"):
        Corpus.from_labeled_counts(p, ("a", "b"))
    p.write_text("0\n1 0:0\n")
    with pytest.raises(InputError, match=rf"^{p}: all 2 documents are empty"):
        Corpus.from_labeled_counts(p, ("a", "b"))
    p.write_text("x 0:1\n")
    with pytest.raises(TypeError, match=r"label_map\['x'\] must be an int class id"):
        Corpus.from_labeled_counts(p, ("a", "b"), label_map={"x": "zero"})
    with pytest.raises(ValueError, match="label_type must be 'class' or 'rating'"):
        Corpus.from_labeled_counts(p, ("a", "b"), label_type="ordinal")
    with pytest.raises(TypeError, match="path must be a file path"):
        Corpus.from_labeled_counts(3, ("a", "b"))


@pytest.mark.parametrize(
    "content, match",
    [
        (b"apple\n\xe9t\xe9\n", r"line 2: the byte 0xe9"),
        (b"apple\n\nbanana\n", "line 2: blank vocabulary entry"),
        (b"apple\nbanana \n", "line 2: the word 'banana ' has leading or trailing whitespace"),
        (b"apple\nbanana\napple\n", r"vocab.txt: word 'apple' appears twice \(lines 1 and 3\)"),
        (b"", "the vocabulary file is empty"),
    ],
)
def test_vocabulary_file_errors_name_the_line(tmp_path, content, match):
    v = tmp_path / "vocab.txt"
    v.write_bytes(content)
    with pytest.raises(InputError, match=match):
        read_vocabulary(v)
    (tmp_path / "docs.txt").write_text("0 0:1\n")
    with pytest.raises(InputError, match=match):
        Corpus.from_labeled_counts(tmp_path / "docs.txt", v)


def test_vocabulary_file_with_a_count_column_or_trailing_blank_lines(tmp_path):
    """``WORD COUNT`` lines (a frequency column) give the words; blank lines at the end shift no
    id. Before, "apple 3" was read as the word 'apple 3' and a trailing blank line was an
    error."""
    v = tmp_path / "vocab.txt"
    v.write_text("apple 3\nbanana\t12\ncherry 1\n")
    assert read_vocabulary(v) == ("apple", "banana", "cherry")
    v.write_text("apple\nbanana\n\n\n")
    assert read_vocabulary(v) == ("apple", "banana")
    # only when every line has the count: otherwise the lines are the words
    v.write_text("new york\nbanana 12\n")
    assert read_vocabulary(v) == ("new york", "banana 12")
    v.write_text("apple 3\napple 4\n")
    with pytest.raises(InputError, match=r"word 'apple' appears twice \(lines 1 and 2\)"):
        read_vocabulary(v)


def test_vocabulary_checks():
    w, o = np.array([0]), np.array([0, 1])
    with pytest.raises(InputTypeError, match="not a single string"):
        Corpus(w, o, "abc")
    with pytest.raises(InputTypeError, match="ordered sequence of words"):
        Corpus(w, o, {"a", "b"})
    with pytest.raises(InputTypeError, match="entries must be str, got int at id 1"):
        Corpus(w, o, ("a", 2))
    with pytest.raises(InputTypeError, match="not a single string"):
        small().restrict_vocabulary("apple")
    with pytest.raises(InputTypeError, match="not a single string"):
        small().remove_words("apple")


def test_unreadable_files_are_input_errors(tmp_path):
    # found by the fuzzer: a str vocabulary that is not a file raised a bare FileNotFoundError
    # or IsADirectoryError
    docs = tmp_path / "docs.txt"
    docs.write_text("0 0:1\n")
    for vocab in ("apple", "."):
        with pytest.raises(InputError, match=rf"vocabulary '{vocab}' is not a file: a str vocabulary is the path"):
            Corpus.from_labeled_counts(docs, vocab)
    with pytest.raises(InputError, match=r"missing.txt: cannot read the file \(No such file or directory\)"):
        Corpus.from_labeled_counts(tmp_path / "missing.txt", ("a",))
    with pytest.raises(InputError, match=r"cannot read the file \(Is a directory\)"):
        read_vocabulary(tmp_path)


def test_a_subset_keeps_the_classes_of_its_corpus():
    """Class ids without names: a part without the last class (or with one class) is still a
    corpus of all the classes, so its train and test parts agree (as_multilabel's columns)."""
    corpus = Corpus.from_texts(["cat dog", "dog bird", "fish cat", "bird fish", "lion cat",
                                "lion dog"], [0, 0, 1, 1, 2, 2])
    part = corpus.subset([0, 1])
    assert (part.label_kind, part.num_classes) == ("multiclass", 3)
    assert part.as_multilabel().labels.shape == (2, 3)
    binary = Corpus.from_texts(["cat dog", "dog bird"], [0, 1]).subset([0])
    assert (binary.label_kind, binary.num_classes) == ("binary", 2)
    ratings = Corpus.from_texts(["cat dog", "dog bird"], [0.5, 1.5]).subset([0])
    assert ratings.label_names is None and ratings.label_kind == "regression"
