"""Fetch the public data sets on first use: download, check, convert, cache.

:func:`~topiczoo.datasets.load_dataset` calls :func:`ensure` for ``20news``,
``20news-binary``, ``poliblog`` and ``movie-scale`` when their files are not in the data
folder. Each data set comes from a public archive (:data:`ARCHIVES`):

================  ==================================================================
archive           what it is and what is taken from it
================  ==================================================================
``lda``           the CRAN R package ``lda`` 1.5.2 (Jonathan Chang, LGPL): its
                  ``data/*.rda`` files ``newsgroup.*`` (20 Newsgroups, bydate split)
                  and ``poliblog.*`` (773 political blog posts), converted to text
``scale_data``    Pang and Lee's "scale dataset v1.0" (movie reviews by four critics
                  with their normalised ratings), the extracted files as they are
``smart_stop``    the SMART stop list (571 lines) as published with RCV1 (Lewis et
                  al. 2004, JMLR 5, appendix 11): the words removed from 20news to
                  give ``20news-binary``
================  ==================================================================

Files written (the layout of a data folder, the same as ``../shared/data``)::

    20news/train.txt, test.txt   LABEL WORD_ID:COUNT ... (labels 0..19, ids 0-based, sorted)
    20news/vocab.txt             line i is word i (61,188 words)
    20news/labels.txt            line i names label i (20 newsgroups)
    20news/binary/train.txt, test.txt
                                 alt.atheism (0) vs talk.religion.misc (1): the 20news
                                 documents of those two groups, SMART stop words removed
    poliblog/docs.txt            LABEL WORD_ID:COUNT ... (label -100 or 100)
    poliblog/vocab.txt           1,290 words
    movie_scale/<critic>/{subj,rating,id,label.3class,label.4class}.<critic>

Checks: every file written has a known sha256 (:data:`FILE_SHA256`, the files of the
project's reference copy; reading them gives the corpora the tests fingerprint), and every
archive member read has a known sha256 where the member itself is known (:data:`ARCHIVES`).
The archives' own checksums are not known here (they could not be downloaded where this was
written), so the members and the files made from them are checked instead.

Safety: a download goes to a temporary file beside its destination and is renamed into
place only when complete; converted files are written to a temporary folder, checked and
only then renamed into the data folder. A failure (no network, an HTTP error, a timeout, a
checksum mismatch) raises :class:`DataUnavailableError` naming the URL, the data folder
and how to place the files by hand, and leaves no partial file in the cache.

By hand: download the archive with any tool and put it in ``<data folder>/downloads/``
under its file name (:attr:`Archive.filename`); the next load checks and converts it
without the network.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = [
    "ARCHIVES",
    "DataUnavailableError",
    "FILE_SHA256",
    "REQUIRED_FILES",
    "default_cache_dir",
    "ensure",
    "missing_files",
]

#: seconds to wait for a server to answer (and between two reads) before giving up
TIMEOUT_SECONDS = 60.0

#: the four critics of the scale data, in the order their reviews are concatenated
CRITICS = ("Dennis+Schwartz", "James+Berardinelli", "Scott+Renshaw", "Steve+Rhodes")
_CRITIC_FILES = ("id", "label.3class", "label.4class", "rating", "subj")


class DataUnavailableError(FileNotFoundError):
    """A data set's files are not in the data folder and could not be fetched: the download
    failed, a checksum did not match, or the converter's optional dependency is missing. The
    message names the URL, the data folder and how to place the files by hand."""


@dataclass(frozen=True)
class Archive:
    """A public archive: where to download it and what to check in it.

    ``urls`` are tried in order. ``sha256`` is the archive's own checksum where known
    (None: unknown, the members are checked instead). ``members`` maps a member's path
    inside the archive, or its last path components for a tarball whose top folder is not
    fixed, to its sha256.
    """

    name: str
    filename: str
    urls: tuple[str, ...]
    sha256: str | None
    members: dict
    description: str


_CRAN = "https://cran.r-project.org/src/contrib"
_LDA_MEMBERS = {
    # sha256 of the data files of lda 1.5.2; CRAN's own MD5 list in the same tarball
    # (lda/MD5) agrees with these files
    "lda/data/newsgroup.label.map.rda": "a112e0d1524f325c1c4dc57cf5d3b5f04fb681ff4a484a5fdc63dbcea5d38cfc",
    "lda/data/newsgroup.test.documents.rda": "0853501a210baae4649cd2d7339223c71ca29c565f1fc081e829197bc118c4af",
    "lda/data/newsgroup.test.labels.rda": "d51c654e1eaf34afe6cc2e8cf47bcf6b1ba5e2fedc93bfa73000c57c41bbb508",
    "lda/data/newsgroup.train.documents.rda": "f8a01774228b73ccd4a97e2298b68d0ea761b28f0937f9bf3d48e27a335c1d6a",
    "lda/data/newsgroup.train.labels.rda": "f91241629f02025092ce9b649e365dd65d7590003fddc38f28675dfb133572c0",
    "lda/data/newsgroup.vocab.rda": "67c46a41fcc3ad6e1a1c11da9060cc4dfa91d46afa2ab0536c45f7029a7e1ebe",
    "lda/data/poliblog.documents.rda": "dba52146279a6332a944288ab60245e33e6bd567ed783c70129b8bf98dd5ba3c",
    "lda/data/poliblog.ratings.rda": "5bc99d1d4bb0ce4d3d02c3493b8e35422131b31a21cb243922e8f75687994db2",
    "lda/data/poliblog.vocab.rda": "bdbd5ffa616101a45fab2d7f5dbecb5f08c50ab1e27fe0671c88f31ba23a9b11",
}

# The scale data's members are the files of the project's reference copy (extracted from
# this archive): their checksums are those of FILE_SHA256 below.
_SCALE_MEMBERS = {
    f"{c}/{kind}.{c}": f"movie_scale/{c}/{kind}.{c}" for c in CRITICS for kind in _CRITIC_FILES
}

#: sha256 of every file written into a data folder (relative path -> hex digest): the files
#: of the project's reference copy, which are the extracted scale data and the conversions of
#: the lda package's data files described in the module docstring
FILE_SHA256 = {
    "20news/labels.txt": "e639d15e21a5fef5fa90955acc42bbf428a9bd3a379cd3084b9595cb0066831b",
    "20news/test.txt": "15edf4e4352fccc66930e68eb5e48e2c5136be9a4e90caefe43806dd390ed7f0",
    "20news/train.txt": "5291355687c8e78637b342c22f6abdb31dbae6b6ce38918511e20af451cd058a",
    "20news/vocab.txt": "3c0f0d64a814ba8836334a0f23925cef751fb3636baea55772f1f8ede4b791bc",
    "20news/binary/test.txt": "c53cd36ae0a53e886928a3755f6624f31d3713279872dd7fbad2f307aa288905",
    "20news/binary/train.txt": "e94d05fd4c56b2297e9e4d282442452263dce9be833d7d99ed23550217544d68",
    "poliblog/docs.txt": "5ef71c0d1416ce973a2cfb21cf284119054837fae0bca71a292efa7b37d1cd75",
    "poliblog/vocab.txt": "03505a18ccd34a3334301b8aec36693b66633a7a7cc5d578ff90276bb5f6b562",
    "movie_scale/Dennis+Schwartz/id.Dennis+Schwartz": "f7eb85839454406ed767752cedbff8d9ea8f059d3811366aec75aa24ebb0c515",
    "movie_scale/Dennis+Schwartz/label.3class.Dennis+Schwartz": "38fd3819797f0857fce3371e81f87f239ac37bf3657dc0baeda7db18997ec9a3",
    "movie_scale/Dennis+Schwartz/label.4class.Dennis+Schwartz": "4040ceabf677075a69041c6bac25ef38376856d3e25bd4205e0abbae6bf36d6a",
    "movie_scale/Dennis+Schwartz/rating.Dennis+Schwartz": "b9057227d5b1324f49d5f402f1cad0ae472f3d130f35a24a5334ab7db6726be7",
    "movie_scale/Dennis+Schwartz/subj.Dennis+Schwartz": "0e11662c559127701a7d52cf9efafa02b9d0e41215de53146f8e78ab9e58ec2d",
    "movie_scale/James+Berardinelli/id.James+Berardinelli": "5e902c3fd5c7325c119215b888c56c14d42f9b4eb9e72eb0e33b69e8a1f23d73",
    "movie_scale/James+Berardinelli/label.3class.James+Berardinelli": "330f37acc631d278f21d63ed2dd6857d40ced7ca203b258f4d4e65527d1cc645",
    "movie_scale/James+Berardinelli/label.4class.James+Berardinelli": "e75f0b5bd3047ff6475a8073ca43e995b3024dc0c3036222ea9c9613b1130212",
    "movie_scale/James+Berardinelli/rating.James+Berardinelli": "91abefa233432a2b92a82e0cb40706bd38e48e1ce4165e7a16584a6ec1dd8ed0",
    "movie_scale/James+Berardinelli/subj.James+Berardinelli": "1b612ca24494cc675f5e58c1fc320501446da2ed2520a00edb3522b565640658",
    "movie_scale/Scott+Renshaw/id.Scott+Renshaw": "689d7e036d0fc77b220b5cd36db9ef70a9da8d43167aef0e6a34bfaabc5c00fc",
    "movie_scale/Scott+Renshaw/label.3class.Scott+Renshaw": "baebc32f2c21ce9247e5ba6c7f59c8fb5f381fc48a9a1e2146d8d95a84ce377c",
    "movie_scale/Scott+Renshaw/label.4class.Scott+Renshaw": "2044fe4964d2a1201c9aa76f5729c213f5a876b76288bf708f7c9d78672367ee",
    "movie_scale/Scott+Renshaw/rating.Scott+Renshaw": "cbe4f07da184e0c68a1051503c91c2474bb23c8d6b433e57d99dc2a8ae43760c",
    "movie_scale/Scott+Renshaw/subj.Scott+Renshaw": "c1b0b7b80fa4161053fee1125e7fb7bfba987fcfa08a8ab525504eff4c988cec",
    "movie_scale/Steve+Rhodes/id.Steve+Rhodes": "160fa461df139b36a687a3d08d6abaf871ff271b331ad315cc2ab89cd48436d4",
    "movie_scale/Steve+Rhodes/label.3class.Steve+Rhodes": "21a7753c10cb71def6461f13a89f8f2c28920848333987fe6175f1e6ed3e4732",
    "movie_scale/Steve+Rhodes/label.4class.Steve+Rhodes": "c5d98f32b6558a63100136e947039541565b4274e8509b9b5aaa4bba1a9f9411",
    "movie_scale/Steve+Rhodes/rating.Steve+Rhodes": "bbbe28efbe998827cfe2737a25d19977091a2deea141461eb8e241ce6f5bc03d",
    "movie_scale/Steve+Rhodes/subj.Steve+Rhodes": "33ef24625d183f6f9ecf03f356e055e9ff998ac7773f48939a364e9900bbf10a",
}

#: the public archives (name -> :class:`Archive`)
ARCHIVES = {
    "lda": Archive(
        name="lda",
        filename="lda_1.5.2.tar.gz",
        # the current release, then where CRAN keeps it once a newer one replaces it
        urls=(f"{_CRAN}/lda_1.5.2.tar.gz", f"{_CRAN}/Archive/lda/lda_1.5.2.tar.gz"),
        sha256=None,
        members=dict(_LDA_MEMBERS),
        description="the CRAN R package lda 1.5.2 (its data/ folder holds 20news and poliblog)",
    ),
    "scale_data": Archive(
        name="scale_data",
        filename="scale_data.tar.gz",
        urls=("https://www.cs.cornell.edu/people/pabo/movie-review-data/scale_data.tar.gz",),
        sha256=None,
        members={m: FILE_SHA256[f] for m, f in _SCALE_MEMBERS.items()},
        description="Pang and Lee's scale dataset v1.0 (movie-scale)",
    ),
    "smart_stop": Archive(
        name="smart_stop",
        filename="english.stop",
        urls=("https://www.jmlr.org/papers/volume5/lewis04a/a11-smart-stop-list/english.stop",),
        # the list itself is not checked (its exact bytes are not known here); the two
        # 20news-binary files made with it are (FILE_SHA256)
        sha256=None,
        members={},
        description="the SMART stop list of RCV1's appendix 11 (makes 20news-binary from 20news)",
    ),
}

#: the files each data set reads, relative to the data folder
REQUIRED_FILES = {
    "20news": ("20news/train.txt", "20news/test.txt", "20news/vocab.txt", "20news/labels.txt"),
    "20news-binary": ("20news/binary/train.txt", "20news/binary/test.txt", "20news/vocab.txt", "20news/labels.txt"),
    "poliblog": ("poliblog/docs.txt", "poliblog/vocab.txt"),
    "movie-scale": tuple(f"movie_scale/{c}/{k}.{c}" for c in CRITICS for k in ("subj", "rating")),
}

#: the archives each data set is made from
SOURCES = {
    "20news": ("lda",),
    "20news-binary": ("lda", "smart_stop"),
    "poliblog": ("lda",),
    "movie-scale": ("scale_data",),
}


# --------------------------------------------------------------------------------------------
# where: the cache folder
# --------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """The user's cache folder for the data sets: ``$XDG_CACHE_HOME/topiczoo/data`` (default
    ``~/.cache/topiczoo/data``); on Windows ``%LOCALAPPDATA%\\topiczoo\\data``."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "topiczoo" / "data"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "topiczoo" / "data"


def missing_files(name: str, root: Path) -> list[Path]:
    """The files of data set ``name`` that ``root`` lacks (empty: it is complete there)."""
    return [root / rel for rel in REQUIRED_FILES[name] if not (root / rel).is_file()]


# --------------------------------------------------------------------------------------------
# the one function that opens a URL (tests replace it)
# --------------------------------------------------------------------------------------------


def _open_url(url: str, timeout: float):
    """A binary file-like response for ``url`` (raises ``OSError`` subclasses on failure:
    ``urllib.error.URLError``, ``urllib.error.HTTPError``, ``TimeoutError``)."""
    request = urllib.request.Request(url, headers={"User-Agent": "topiczoo (data set download)"})
    return urllib.request.urlopen(request, timeout=timeout)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _by_hand(name: str, root: Path, archives: list[Archive]) -> str:
    where = "; ".join(f"{a.urls[0]} and save it as {root / 'downloads' / a.filename}" for a in archives)
    files = ", ".join(REQUIRED_FILES[name])
    return (
        f"To place the files by hand: download {where} (it is checked and converted on the next "
        f"load, without the network), or put files of the same form under {root} ({files}), or "
        f"point the TOPICZOO_DATA environment variable (data_dir= in Python, --data-dir on the "
        f"command line) at a folder that holds them."
    )


def _download(archive: Archive, dest: Path, name: str, root: Path) -> None:
    """Download ``archive`` to ``dest`` through a temporary file renamed only when complete
    (and its sha256 right, where known). Tries each URL; raises DataUnavailableError."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    failures = []
    for url in archive.urls:
        fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out, _open_url(url, TIMEOUT_SECONDS) as response:
                shutil.copyfileobj(response, out, 1 << 20)
            if archive.sha256 is not None:
                got = _sha256(tmp)
                if got != archive.sha256:
                    raise DataUnavailableError(
                        f"data set {name!r}: the file downloaded from {url} has sha256 {got}, "
                        f"expected {archive.sha256}; it was not kept (the data folder {root} is "
                        f"unchanged). {_by_hand(name, root, [archive])}"
                    )
            os.replace(tmp, dest)
            return
        except DataUnavailableError:
            raise
        except (OSError, ValueError) as err:  # URLError, HTTPError, timeouts, refused connections
            failures.append(f"{url}: {_reason(err)}")
        finally:
            tmp.unlink(missing_ok=True)
    raise DataUnavailableError(
        f"data set {name!r} is not in the data folder {root} and could not be downloaded: "
        f"{'; '.join(failures)}. {_by_hand(name, root, [archive])}"
    )


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP error {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"cannot reach the server ({err.reason})"
    if isinstance(err, TimeoutError):
        return f"no answer within {TIMEOUT_SECONDS:g} s (timeout)"
    return f"{type(err).__name__}: {err}"


def _archive_path(archive: Archive, name: str, root: Path) -> Path:
    """The archive in ``root/downloads``, downloaded there first if it is not."""
    path = root / "downloads" / archive.filename
    if not path.is_file():
        _download(archive, path, name, root)
    return path


def _refuse(path: Path, message: str) -> DataUnavailableError:
    """Remove a downloaded archive that failed a check (no corrupt cache is left) and return
    the error to raise."""
    path.unlink(missing_ok=True)
    return DataUnavailableError(message)


# --------------------------------------------------------------------------------------------
# reading archives
# --------------------------------------------------------------------------------------------


def _tar_members(archive: Archive, path: Path, wanted: list[str], name: str, root: Path) -> dict[str, bytes]:
    """The bytes of the members ``wanted`` (keys of ``archive.members``: a member's path, or
    its last components), each checked against its sha256. A corrupt archive, a missing
    member or a wrong checksum removes the downloaded archive and raises."""
    found: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:*") as tar:
            for info in tar:
                if not info.isfile():
                    continue
                parts = info.name.replace("\\", "/").strip("/").split("/")
                for key in wanted:
                    depth = key.count("/") + 1
                    if key not in found and "/".join(parts[-depth:]) == key:
                        found[key] = tar.extractfile(info).read()
    except (tarfile.TarError, OSError, EOFError) as err:
        raise _refuse(path, f"data set {name!r}: {path} is not a readable tar archive ({err}); it was "
                            f"removed. {_by_hand(name, root, [archive])}") from None
    missing = [k for k in wanted if k not in found]
    if missing:
        raise _refuse(path, f"data set {name!r}: the archive {path} (from {archive.urls[0]}) has no "
                            f"{', '.join(missing)}; it was removed. {_by_hand(name, root, [archive])}")
    for key, data in found.items():
        expected = archive.members.get(key)
        got = hashlib.sha256(data).hexdigest()
        if expected is not None and got != expected:
            raise _refuse(path, f"data set {name!r}: {key} in {path} (from {archive.urls[0]}) has "
                                f"sha256 {got}, expected {expected}; the archive was removed and "
                                f"nothing was written to {root}. {_by_hand(name, root, [archive])}")
    return found


def _read_rda(data: bytes, what: str):
    """The one object saved in an .rda file (bytes), through the ``rdata`` package."""
    try:
        import rdata
    except ModuleNotFoundError:
        raise DataUnavailableError(
            f"converting {what} (an R data file of the CRAN lda package) needs the rdata package: "
            "pip install 'topiczoo[data]' (or pip install rdata)"
        ) from None
    objects = rdata.conversion.convert(rdata.parser.parse_data(data))  # gzip, bzip2 or xz
    if len(objects) != 1:
        raise ValueError(f"{what}: expected one R object, found {sorted(objects)}")
    return next(iter(objects.values()))


# --------------------------------------------------------------------------------------------
# converters: archive members -> the text files of a data folder
# --------------------------------------------------------------------------------------------


def _counts_line(label: str, matrix, what: str, d: int) -> str:
    """``LABEL WORD_ID:COUNT ...`` of one lda document (an integer matrix of 2 rows: 0-based
    word ids, counts), word ids sorted, repeated ids merged."""
    import numpy as np

    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != 2:
        raise ValueError(f"{what}: document {d + 1} is not a matrix of 2 rows (shape {m.shape})")
    ids, inverse = np.unique(m[0].astype(np.int64), return_inverse=True)
    counts = np.bincount(inverse, weights=m[1], minlength=ids.size).astype(np.int64)
    return label + "".join(f" {i}:{c}" for i, c in zip(ids.tolist(), counts.tolist())) + "\n"


def _vocab_text(words, what: str) -> str:
    words = [str(w) for w in words]
    if any("\n" in w or not w for w in words):
        raise ValueError(f"{what}: a word is empty or holds a line break")
    return "".join(w + "\n" for w in words)


def _convert_20news(members: dict[str, bytes]) -> dict[str, bytes]:
    import numpy as np

    def rda(stem):
        return _read_rda(members[f"lda/data/{stem}.rda"], f"{stem}.rda")

    out = {}
    label_map = rda("newsgroup.label.map")  # a data frame: V1 the group name, V2 its label 1..20
    ids = np.asarray(label_map["V2"], dtype=np.int64)
    names = [str(x) for x in label_map["V1"]]
    if sorted(ids.tolist()) != list(range(1, 21)):
        raise ValueError(f"newsgroup.label.map.rda: labels {ids.tolist()} are not 1..20")
    out["20news/labels.txt"] = "".join(names[int(np.flatnonzero(ids == k)[0])] + "\n" for k in range(1, 21))
    out["20news/vocab.txt"] = _vocab_text(rda("newsgroup.vocab"), "newsgroup.vocab.rda")
    for part in ("train", "test"):
        docs = rda(f"newsgroup.{part}.documents")
        labels = np.asarray(rda(f"newsgroup.{part}.labels"), dtype=np.int64)
        if len(docs) != labels.size or labels.min() < 1 or labels.max() > 20:
            raise ValueError(f"newsgroup.{part}: {len(docs)} documents, {labels.size} labels in "
                             f"{labels.min()}..{labels.max()} (expected one label in 1..20 each)")
        out[f"20news/{part}.txt"] = "".join(
            _counts_line(str(y - 1), m, f"newsgroup.{part}.documents.rda", d)
            for d, (y, m) in enumerate(zip(labels.tolist(), docs))
        )
    return {k: v.encode("utf-8") for k, v in out.items()}


def _convert_poliblog(members: dict[str, bytes]) -> dict[str, bytes]:
    import numpy as np

    def rda(stem):
        return _read_rda(members[f"lda/data/{stem}.rda"], f"{stem}.rda")

    docs = rda("poliblog.documents")
    ratings = np.asarray(rda("poliblog.ratings"), dtype=np.float64)
    if len(docs) != ratings.size or not np.all(np.isfinite(ratings)) or np.any(ratings != np.round(ratings)):
        raise ValueError(f"poliblog: {len(docs)} documents but {ratings.size} ratings, or ratings "
                         "that are not whole numbers")
    text = "".join(
        _counts_line(str(int(r)), m, "poliblog.documents.rda", d) for d, (r, m) in enumerate(zip(ratings, docs))
    )
    return {
        "poliblog/docs.txt": text.encode("utf-8"),
        "poliblog/vocab.txt": _vocab_text(rda("poliblog.vocab"), "poliblog.vocab.rda").encode("utf-8"),
    }


def _convert_movie_scale(members: dict[str, bytes]) -> dict[str, bytes]:
    return {_SCALE_MEMBERS[key]: data for key, data in members.items()}


def _derive_20news_binary(root: Path, stop_list: bytes) -> dict[str, bytes]:
    """alt.atheism (0) vs talk.religion.misc (1): the 20news documents of those two groups in
    file order, every word of the stop list removed (word ids and counts otherwise as they are)."""
    stop = set(stop_list.decode("utf-8", errors="replace").split())
    vocab = (root / "20news" / "vocab.txt").read_text(encoding="utf-8").split("\n")
    groups = (root / "20news" / "labels.txt").read_text(encoding="utf-8").split("\n")
    first, second = str(groups.index("alt.atheism")), str(groups.index("talk.religion.misc"))
    out = {}
    for part in ("train", "test"):
        lines = []
        for line in (root / "20news" / f"{part}.txt").read_text(encoding="utf-8").splitlines():
            label, *tokens = line.split(" ")
            if label not in (first, second):
                continue
            kept = [t for t in tokens if vocab[int(t.partition(":")[0])] not in stop]
            lines.append(" ".join(["0" if label == first else "1", *kept]) + "\n")
        out[f"20news/binary/{part}.txt"] = "".join(lines).encode("utf-8")
    return out


# --------------------------------------------------------------------------------------------
# putting files into the data folder
# --------------------------------------------------------------------------------------------


def _install(files: dict[str, bytes], root: Path, name: str, archives: list[Archive], sources: str) -> None:
    """Check every file's sha256, write them to a temporary folder in ``root`` and rename
    each into place. A mismatch writes nothing."""
    for rel, data in files.items():
        expected = FILE_SHA256.get(rel)
        got = hashlib.sha256(data).hexdigest()
        if expected is None or got != expected:
            raise DataUnavailableError(
                f"data set {name!r}: {rel} made from {sources} has sha256 {got}, expected "
                f"{expected}; nothing was written to {root}. {_by_hand(name, root, archives)}"
            )
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".incoming-"))
    try:
        for rel, data in files.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        for rel in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, root / rel)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_CONVERTERS: dict[str, tuple[str, Callable[[dict[str, bytes]], dict[str, bytes]]]] = {
    "20news": ("lda", _convert_20news),
    "poliblog": ("lda", _convert_poliblog),
    "movie-scale": ("scale_data", _convert_movie_scale),
}


def _members_of(name: str) -> list[str]:
    if name == "movie-scale":
        return list(_SCALE_MEMBERS)
    prefix = "lda/data/newsgroup." if name == "20news" else "lda/data/poliblog."
    return [m for m in ARCHIVES["lda"].members if m.startswith(prefix)]


def ensure(name: str, root: str | os.PathLike) -> Path:
    """Make data set ``name``'s files (:data:`REQUIRED_FILES`) present in the data folder
    ``root``: nothing is done if they are; else the archives are downloaded into
    ``root/downloads`` (or taken from there), checked, converted and written. Returns ``root``.

    Raises :class:`DataUnavailableError` (a ``FileNotFoundError``) when a download fails or a
    checksum does not match, naming the URL, ``root`` and how to place the files by hand.
    """
    root = Path(root).expanduser()
    if name not in REQUIRED_FILES:
        raise ValueError(f"data set {name!r} is not fetched; fetched ones: {', '.join(REQUIRED_FILES)}")
    if not missing_files(name, root):
        return root
    if name == "20news-binary":
        ensure("20news", root)
        stop = ARCHIVES["smart_stop"]
        path = _archive_path(stop, name, root)
        files = _derive_20news_binary(root, path.read_bytes())
        try:
            _install(files, root, name, [stop], f"{root / '20news'} and the stop list {path}")
        except DataUnavailableError:
            path.unlink(missing_ok=True)
            raise
        return root
    archive_name, convert = _CONVERTERS[name]
    archive = ARCHIVES[archive_name]
    if archive_name == "lda":
        try:  # before downloading: the conversion needs it
            import rdata  # noqa: F401
        except ModuleNotFoundError:
            raise DataUnavailableError(
                f"data set {name!r} is made from the R data files of the CRAN lda package; "
                "converting them needs the rdata package: pip install 'topiczoo[data]' "
                f"(or pip install rdata). {_by_hand(name, root, [archive])}"
            ) from None
    path = _archive_path(archive, name, root)
    members = _tar_members(archive, path, _members_of(name), name, root)
    try:
        files = convert(members)
    except (ValueError, KeyError, TypeError) as err:
        raise _refuse(path, f"data set {name!r}: cannot convert {path} ({err}); it was removed. "
                            f"{_by_hand(name, root, [archive])}") from None
    _install(files, root, name, [archive], str(path))
    return root
