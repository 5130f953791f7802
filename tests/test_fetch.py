"""Fetching the data sets on first use (topiczoo.fetch), with the download replaced.

The one function that opens a URL (``topiczoo.fetch._open_url``) is replaced by one that
serves small archives built here in the form of the real ones: a CRAN ``lda`` source tarball
whose ``lda/data/*.rda`` files are written by ``tests/rdata_writer.py`` (R's own format,
shared with nothing in the reader), Pang and Lee's ``scaledata/<critic>/<file>.<critic>``
tarball and a SMART stop list. The checksum tables are replaced by those of the samples; the
expected files are written here, independently of the converters. ``../shared/data`` is
hidden and the cache is a fresh folder in ``tmp_path``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import sys
import tarfile
import urllib.error
from pathlib import Path

import numpy as np
import pytest

import rdata_writer as rw
from topiczoo import datasets, fetch
from topiczoo.datasets import find_data_dir, load_dataset, load_folds
from topiczoo.fetch import CRITICS, DataUnavailableError

pytest.importorskip("rdata")

GROUPS = ["alt.atheism"] + [f"group{i:02d}.misc" for i in range(1, 19)] + ["talk.religion.misc"]
STOP = ["the", "and", "about", "would", "whereupon"]
NEWS_VOCAB = STOP + [f"news{i:02d}" for i in range(45)]
POLI_VOCAB = [f"poli{i:02d}" for i in range(30)]
MOVIE_WORDS = [f"plot{chr(97 + i)}" for i in range(25)]  # letters only: the tokenizer drops digits


def _documents(rng, num_docs, vocab_size):
    """lda-style documents: 2-row int matrices, word ids unsorted, one id repeated in doc 0."""
    docs = []
    for d in range(num_docs):
        n = int(rng.integers(3, 9))
        ids = rng.choice(vocab_size, size=n, replace=False)
        counts = rng.integers(1, 6, size=n)
        m = np.stack([ids, counts])
        if d == 0:  # a repeated word id: its counts are summed
            m = np.concatenate([m, [[ids[0]], [2]]], axis=1)
        docs.append(m)
    return docs


def _lines(labels, docs, drop=()):
    """The expected ``LABEL WORD_ID:COUNT`` lines, written here independently."""
    out = []
    for y, m in zip(labels, docs):
        counts = {}
        for w, c in zip(m[0].tolist(), m[1].tolist()):
            counts[w] = counts.get(w, 0) + c
        out.append(" ".join([str(y)] + [f"{w}:{counts[w]}" for w in sorted(counts) if w not in drop]) + "\n")
    return "".join(out).encode()


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@dataclasses.dataclass
class Samples:
    """The sample archives (file name -> path) and the files they must give."""

    archives: dict
    expected: dict  # relative path in the data folder -> bytes
    lda_members: dict
    scale_members: dict
    folder: Path

    def tampered_lda(self) -> Path:
        """The lda tarball with poliblog's ratings changed (its checksum no longer matches)."""
        members = dict(self.lda_members)
        members["lda/data/poliblog.ratings.rda"] = rw.rda("poliblog.ratings", rw.real_vector([100.0] * 30))
        return _tar(self.folder / "tampered" / "lda_1.5.2.tar.gz", members)

    def tampered_scale(self) -> Path:
        members = dict(self.scale_members)
        key = f"scaledata/{CRITICS[0]}/rating.{CRITICS[0]}"
        members[key] = members[key].replace(b"0.5", b"0.6")
        return _tar(self.folder / "tampered" / "scale_data.tar.gz", members)


def build_samples(folder: Path) -> Samples:
    rng = np.random.default_rng(7)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tampered").mkdir()
    expected = {}
    stop_ids = {i for i, w in enumerate(NEWS_VOCAB) if w in STOP}
    lda = {"lda/DESCRIPTION": b"Package: lda\nVersion: 1.5.2\n"}
    # 20news: 20 groups, 3 training and 2 test documents each; label map as a data frame
    order = rng.permutation(20)  # the data frame's rows in another order than the labels
    lda["lda/data/newsgroup.label.map.rda"] = rw.rda("newsgroup.label.map", rw.data_frame(
        {"V1": rw.factor(order + 1, GROUPS), "V2": rw.int_vector(order + 1)}, 20))
    lda["lda/data/newsgroup.vocab.rda"] = rw.rda("newsgroup.vocab", rw.str_vector(NEWS_VOCAB))
    expected["20news/vocab.txt"] = "".join(w + "\n" for w in NEWS_VOCAB).encode()
    expected["20news/labels.txt"] = "".join(g + "\n" for g in GROUPS).encode()
    for part, per_group in (("train", 3), ("test", 2)):
        labels = rng.permutation(np.repeat(np.arange(1, 21), per_group))
        docs = _documents(rng, labels.size, len(NEWS_VOCAB))
        lda[f"lda/data/newsgroup.{part}.documents.rda"] = rw.rda(f"newsgroup.{part}.documents", rw.matrix_list(docs))
        lda[f"lda/data/newsgroup.{part}.labels.rda"] = rw.rda(f"newsgroup.{part}.labels", rw.int_vector(labels))
        expected[f"20news/{part}.txt"] = _lines(labels - 1, docs)
        keep = [(1 if y == 20 else 0, m) for y, m in zip(labels, docs) if y in (1, 20)]
        expected[f"20news/binary/{part}.txt"] = _lines([y for y, _ in keep], [m for _, m in keep], drop=stop_ids)
    # poliblog: 30 posts rated -100 or 100 (doubles, as in the package)
    ratings = rng.choice([-100.0, 100.0], size=30)
    docs = _documents(rng, 30, len(POLI_VOCAB))
    lda["lda/data/poliblog.documents.rda"] = rw.rda("poliblog.documents", rw.matrix_list(docs))
    lda["lda/data/poliblog.ratings.rda"] = rw.rda("poliblog.ratings", rw.real_vector(ratings))
    lda["lda/data/poliblog.vocab.rda"] = rw.rda("poliblog.vocab", rw.str_vector(POLI_VOCAB))
    expected["poliblog/docs.txt"] = _lines([int(r) for r in ratings], docs)
    expected["poliblog/vocab.txt"] = "".join(w + "\n" for w in POLI_VOCAB).encode()
    # the scale data: 12 reviews per critic
    scale = {}
    for c in CRITICS:
        texts = [" ".join(rng.choice(MOVIE_WORDS, size=6)) + " the film" for _ in range(12)]
        ratings = [f"{x:.1f}" for x in np.linspace(0, 1, 12)]
        files = {"subj": texts, "rating": ratings, "id": [str(1000 + i) for i in range(12)],
                 "label.3class": [str(i % 3) for i in range(12)], "label.4class": [str(i % 4) for i in range(12)]}
        for kind, lines in files.items():
            data = ("\n".join(lines) + "\n").encode()
            scale[f"scaledata/{c}/{kind}.{c}"] = data
            expected[f"movie_scale/{c}/{kind}.{c}"] = data
    stop_list = ("\n".join(STOP) + "\nwould\n").encode()  # the real list repeats "would"
    archives = {
        "lda_1.5.2.tar.gz": _tar(folder / "lda_1.5.2.tar.gz", lda),
        "scale_data.tar.gz": _tar(folder / "scale_data.tar.gz", scale),
        "english.stop": folder / "english.stop",
    }
    archives["english.stop"].write_bytes(stop_list)
    return Samples(archives, expected, lda, scale, folder)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Server:
    """Replaces ``fetch._open_url``: serves the files of ``routes`` (file name -> path, or an
    exception to raise) and records every URL asked for."""

    def __init__(self, routes):
        self.routes = dict(routes)
        self.calls = []

    def __call__(self, url, timeout):
        self.calls.append(url)
        target = self.routes[url.rsplit("/", 1)[1]]
        if isinstance(target, BaseException):
            raise target
        if callable(target):
            return target(url)
        return open(target, "rb")


@pytest.fixture
def samples(tmp_path_factory):
    return build_samples(tmp_path_factory.mktemp("samples"))


@pytest.fixture
def env(samples, tmp_path, monkeypatch):
    """No ../shared, no TOPICZOO_DATA, the cache in tmp_path, the samples' checksums, and a
    server of the sample archives. Returns (server, cache folder)."""
    return serve_samples(samples, tmp_path, monkeypatch)


def serve_samples(samples: Samples, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """What the ``env`` fixture sets up (also used by ``tests/fresh_clone.py``)."""
    monkeypatch.delenv("TOPICZOO_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(datasets, "_shared_candidates", lambda: [tmp_path / "no-shared" / "data"])
    monkeypatch.setattr(fetch, "FILE_SHA256", {rel: _sha(b) for rel, b in samples.expected.items()})
    archives = dict(fetch.ARCHIVES)
    archives["lda"] = dataclasses.replace(
        archives["lda"], members={k: _sha(v) for k, v in samples.lda_members.items() if k.endswith(".rda")})
    archives["scale_data"] = dataclasses.replace(
        archives["scale_data"], members={k.split("/", 1)[1]: _sha(v) for k, v in samples.scale_members.items()})
    monkeypatch.setattr(fetch, "ARCHIVES", archives)
    server = Server(samples.archives)
    monkeypatch.setattr(fetch, "_open_url", server)
    cache = tmp_path / "xdg" / "topiczoo" / "data"
    assert fetch.default_cache_dir() == cache and find_data_dir() == cache
    return server, cache


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


ARCHIVES_OF = {"20news": ["lda_1.5.2.tar.gz"], "20news-binary": ["lda_1.5.2.tar.gz", "english.stop"],
               "poliblog": ["lda_1.5.2.tar.gz"], "movie-scale": ["scale_data.tar.gz"]}


# ------------------------------------------------------------------ fetch on first use


@pytest.mark.parametrize("name", list(fetch.REQUIRED_FILES))
def test_first_use_fills_the_cache_and_the_second_load_downloads_nothing(name, env, samples):
    server, cache = env
    assert _files(cache) == []
    ds = load_dataset(name)
    assert [u.rsplit("/", 1)[1] for u in server.calls] == ARCHIVES_OF[name]
    for rel in fetch.REQUIRED_FILES[name]:  # byte for byte the files written by hand above
        assert (cache / rel).read_bytes() == samples.expected[rel], rel
    assert not [f for f in _files(cache) if ".part" in f or ".incoming" in f]
    assert ds.source.startswith(str(cache))
    again = load_dataset(name)
    assert len(server.calls) == len(ARCHIVES_OF[name])  # nothing downloaded the second time
    np.testing.assert_array_equal(again.train.words, ds.train.words)
    assert again.train.vocabulary == ds.train.vocabulary


def test_each_name_loads_from_a_fresh_cache_with_one_download_per_archive(env, samples):
    server, cache = env
    news = load_dataset("20news")
    assert news.task == "multiclass" and news.label_names == tuple(GROUPS)
    assert (news.train.num_docs + news.train_docs_dropped, news.test.num_docs) == (60, 40)
    binary = load_dataset("20news-binary")
    assert binary.label_names == ("alt.atheism", "talk.religion.misc")
    assert (binary.train.num_docs + binary.train_docs_dropped, binary.test.num_docs) == (6, 4)
    assert not set(binary.train.vocabulary) & set(STOP)
    poli = load_dataset("poliblog")
    assert poli.label_names == ("-100", "100") and poli.train.num_docs + poli.test.num_docs == 30
    movie = load_folds("movie-scale", num_folds=3)
    assert sum(f.test.num_docs for f in movie) == 48
    # the lda tarball was downloaded once and kept; nothing else
    assert sorted(u.rsplit("/", 1)[1] for u in server.calls) == ["english.stop", "lda_1.5.2.tar.gz", "scale_data.tar.gz"]
    assert _files(cache / "downloads") == ["english.stop", "lda_1.5.2.tar.gz", "scale_data.tar.gz"]
    assert sorted(_files(cache)) == sorted(["downloads/english.stop", "downloads/lda_1.5.2.tar.gz",
                                            "downloads/scale_data.tar.gz", *samples.expected])


def test_the_archive_placed_by_hand_is_used_without_the_network(env, samples):
    server, cache = env
    server.routes["lda_1.5.2.tar.gz"] = urllib.error.URLError("no network")
    (cache / "downloads").mkdir(parents=True)
    (cache / "downloads" / "lda_1.5.2.tar.gz").write_bytes(samples.archives["lda_1.5.2.tar.gz"].read_bytes())
    assert load_dataset("poliblog").train.vocab_size > 0
    assert server.calls == []


def test_cran_archive_folder_is_tried_when_the_release_moved(env):
    server, cache = env
    served = server.routes["lda_1.5.2.tar.gz"]

    def moved(url):
        if "/Archive/" not in url:
            raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
        return open(served, "rb")

    server.routes["lda_1.5.2.tar.gz"] = moved
    load_dataset("poliblog")
    assert [("/Archive/" in u) for u in server.calls] == [False, True]


# ------------------------------------------------------------------ checksums and failures


@pytest.mark.parametrize("name", ["poliblog", "movie-scale"])
def test_a_checksum_mismatch_is_refused_and_leaves_no_cache(name, env, samples):
    server, cache = env
    if name == "poliblog":
        server.routes["lda_1.5.2.tar.gz"] = samples.tampered_lda()
        url = fetch.ARCHIVES["lda"].urls[0]
    else:
        server.routes["scale_data.tar.gz"] = samples.tampered_scale()
        url = fetch.ARCHIVES["scale_data"].urls[0]
    with pytest.raises(DataUnavailableError) as err:
        load_dataset(name)
    msg = str(err.value)
    assert "sha256" in msg and url in msg and str(cache) in msg and "by hand" in msg
    assert _files(cache) == []  # neither the archive nor any converted file is kept
    # the genuine archive is then accepted
    server.routes.update(samples.archives)
    assert load_dataset(name).train.num_docs > 0


def test_files_made_with_a_wrong_stop_list_are_refused(env, samples):
    server, cache = env
    wrong = samples.folder / "tampered" / "english.stop"
    wrong.write_bytes(b"the\nand\n")  # "about" and "would" missing: 20news-binary differs
    server.routes["english.stop"] = wrong
    with pytest.raises(DataUnavailableError, match=r"20news/binary/\w+\.txt made from .* has sha256"):
        load_dataset("20news-binary")
    assert not (cache / "20news" / "binary").exists() or _files(cache / "20news" / "binary") == []
    assert not (cache / "downloads" / "english.stop").exists()
    assert (cache / "20news" / "train.txt").is_file()  # 20news itself was right and is kept


class _Broken(io.RawIOBase):
    """A response that delivers some bytes, then fails (a connection cut mid-download)."""

    def __init__(self, data):
        self.data, self.sent = data, False

    def readinto(self, b):
        if self.sent:
            raise TimeoutError("the read timed out")
        self.sent = True
        n = min(len(b), len(self.data) // 2)
        b[:n] = self.data[:n]
        return n

    def readable(self):
        return True


@pytest.mark.parametrize(
    "failure, reason",
    [
        (urllib.error.URLError("[Errno -2] Name or service not known"), "cannot reach the server"),
        (urllib.error.HTTPError("u", 503, "Service Unavailable", {}, None), "HTTP error 503"),
        (TimeoutError("timed out"), "timeout"),
        ("cut", "timeout"),
    ],
    ids=["no-network", "http-error", "timeout", "cut-mid-download"],
)
def test_a_failed_download_names_the_url_the_cache_and_what_to_do(failure, reason, env, samples):
    server, cache = env
    if failure == "cut":
        data = samples.archives["scale_data.tar.gz"].read_bytes()
        failure = lambda url: io.BufferedReader(_Broken(data))  # noqa: E731
    server.routes["scale_data.tar.gz"] = failure
    with pytest.raises(DataUnavailableError) as err:
        load_dataset("movie-scale")
    msg = str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    url = fetch.ARCHIVES["scale_data"].urls[0]
    assert url in msg and reason in msg and str(cache) in msg
    assert str(cache / "downloads" / "scale_data.tar.gz") in msg and "TOPICZOO_DATA" in msg
    assert _files(cache) == []  # no partial download left behind


def test_the_missing_reader_is_named_before_downloading(env, monkeypatch):
    server, cache = env
    monkeypatch.setitem(sys.modules, "rdata", None)
    with pytest.raises(DataUnavailableError, match=r"pip install 'topiczoo\[data\]'"):
        load_dataset("20news")
    assert server.calls == [] and _files(cache) == []


# ------------------------------------------------------------------ where the data are looked for


def _place(root: Path, samples, name: str):
    for rel in fetch.REQUIRED_FILES[name]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(samples.expected[rel])


def test_the_override_order(env, samples, tmp_path, monkeypatch):
    server, cache = env
    shared = tmp_path / "no-shared" / "data"
    # 1. ../shared/data holding the data set is read, nothing downloaded
    _place(shared, samples, "poliblog")
    assert load_dataset("poliblog").source == str(shared / "poliblog")
    # 2. a ../shared/data without the data set is passed over for the cache
    assert load_dataset("movie-scale").source == str(cache / "movie_scale")
    assert [u.rsplit("/", 1)[1] for u in server.calls] == ["scale_data.tar.gz"]
    # 3. TOPICZOO_DATA comes before ../shared/data, and is downloaded into when empty
    env_dir = tmp_path / "env-data"
    monkeypatch.setenv("TOPICZOO_DATA", str(env_dir))
    assert find_data_dir() == env_dir
    assert load_dataset("poliblog").source == str(env_dir / "poliblog")
    assert server.calls[-1].endswith("lda_1.5.2.tar.gz") and (env_dir / "poliblog" / "docs.txt").is_file()
    # 4. data_dir comes before everything
    own = tmp_path / "own"
    _place(own, samples, "poliblog")
    calls = len(server.calls)
    assert load_dataset("poliblog", data_dir=own).source == str(own / "poliblog")
    assert len(server.calls) == calls


def test_without_download_the_missing_file_is_named(env, tmp_path):
    server, cache = env
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("poliblog", download=False)
    assert not isinstance(err.value, DataUnavailableError)
    assert str(cache / "poliblog" / "docs.txt") in str(err.value) and "download=True" in str(err.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_dataset("20news-binary", data_dir=tmp_path / "missing", download=False)
    assert server.calls == [] and not (tmp_path / "missing").exists()
    with pytest.raises(TypeError, match="download must be True or False"):
        load_dataset("poliblog", download="yes")


# ------------------------------------------------------------------ the real checksums


def test_the_checksums_are_those_of_the_reference_copy():
    """Where ../shared/data is present, the table of files checked after a download is that
    of the files the corpus fingerprints of tests/test_datasets.py were measured on."""
    root = datasets._shared_candidates()[0]
    if not root.is_dir():
        pytest.skip(f"the reference copy {root} is not here")
    assert set(fetch.FILE_SHA256) == (
        {r for name in fetch.REQUIRED_FILES for r in fetch.REQUIRED_FILES[name] if "movie_scale" not in r}
        | {f"movie_scale/{c}/{k}.{c}" for c in CRITICS for k in ("id", "label.3class", "label.4class", "rating", "subj")}
    )
    for rel, digest in fetch.FILE_SHA256.items():
        assert _sha((root / rel).read_bytes()) == digest, rel
    scale = fetch.ARCHIVES["scale_data"].members
    assert {k: scale[k] for k in scale} == {f"{c}/{k}.{c}": fetch.FILE_SHA256[f"movie_scale/{c}/{k}.{c}"]
                                            for c in CRITICS for k in ("id", "label.3class", "label.4class", "rating", "subj")}
