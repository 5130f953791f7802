"""Labels: what a corpus accepts as labels, and what a model checks on top.

:func:`normalize_labels` is the one check of the labels given to a
:class:`~topiczoo.corpus.Corpus` (any array-like: class ids, ratings, 0/1 indicator rows or
class names; missing entries, mixed types, bytes and other objects are errors naming the
document). :func:`check_labels` validates a bare label array for a model kind, and
:meth:`Corpus.require_labels <topiczoo.corpus.Corpus.require_labels>` checks only what the
model adds (class range, columns, a positive label per row) to labels already checked.
:func:`missing_label_positions` finds missing labels (None, NaN, pandas NA) for the
``missing_labels="drop"`` option of the corpus constructors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .errors import InputError, InputTypeError

__all__ = ["LABEL_KINDS", "ClassIdNames", "check_labels", "class_values",
           "missing_label_positions", "normalize_labels", "shown"]


def shown(value) -> str:
    """``repr(value)`` for a message, numpy scalars as the Python values they hold (``1``,
    ``'a'``, ``nan``; not ``np.int64(1)``, ``np.str_('a')``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def readonly(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (in place) and returned."""
    a.flags.writeable = False
    return a


def is_int(value) -> bool:
    """An int or numpy integer that is not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


#: the label kinds of :attr:`Corpus.label_kind` and :func:`check_labels`
LABEL_KINDS = ("binary", "multiclass", "regression", "multilabel")
#: the most classes unnamed class ids may imply (``L = max id + 1``; every class is a task of
#: the multi-class models): a larger id is almost surely a raw label such as a year or -100/100
MAX_CLASSES = 10_000

_MISSING_HINT = (
    "give every document a label, or let Corpus.from_texts / Corpus.from_document_term drop "
    "such documents with missing_labels='drop'"
)


def _is_missing(x) -> bool:
    """None, a float NaN, pandas NA or NaT: a label that is not there."""
    if x is None:
        return True
    if isinstance(x, (float, np.floating)):
        return bool(np.isnan(x))
    return type(x).__name__ in ("NAType", "NaTType")


def missing_label_positions(labels) -> np.ndarray:
    """int64 ``[M]``: the documents whose label is missing (None, NaN, pandas NA; for ``[D, L]``
    labels a row with any missing entry). Input that is not a sequence of labels gives no
    positions (the corpus then says what is wrong with it)."""
    if labels is None or isinstance(labels, (str, bytes, set, frozenset, Mapping)):
        return np.zeros(0, np.int64)
    if isinstance(labels, np.ndarray) and labels.dtype.kind in "biuUS":
        return np.zeros(0, np.int64)
    if isinstance(labels, np.ndarray) and labels.dtype.kind == "f" and labels.ndim in (1, 2):
        bad = np.isnan(labels)
        return np.flatnonzero(bad if labels.ndim == 1 else bad.any(axis=1)).astype(np.int64)
    if not isinstance(labels, Iterable):
        return np.zeros(0, np.int64)
    out = []
    for d, row in enumerate(labels):
        if _is_missing(row):
            out.append(d)
        elif isinstance(row, (list, tuple, np.ndarray)) and any(_is_missing(x) for x in np.ravel(np.asarray(row, dtype=object))):
            out.append(d)
    return np.asarray(out, np.int64)


def take_labels(labels, keep: np.ndarray):
    """The labels of the documents ``keep`` (labels as given: an array or a sequence)."""
    if isinstance(labels, np.ndarray):
        return labels[keep]
    rows = list(labels)
    return [rows[i] for i in keep]


class ClassIdNames(tuple):
    """The names ``"0"``, ..., ``"L-1"`` that stand for class ids without names.

    :meth:`Corpus.subset <topiczoo.corpus.Corpus.subset>` gives them to a part of a corpus of
    unnamed class ids, so that the part keeps the corpus's number of classes (its own largest
    id may be lower). They compare, hash and print as the plain tuple; what the classes stand
    for stays the ids themselves (:func:`class_values`), so predictions give back ints.
    """

    __slots__ = ()


def class_values(names, num_classes: int) -> np.ndarray:
    """What class ids ``0..L-1`` stand for: the class names, str ``[L]``, when the classes are
    named (class names given as labels, or ``label_names``); the ids themselves, int64 ``[L]``,
    when they are not (``names`` None or :class:`ClassIdNames`)."""
    if names is None or isinstance(names, ClassIdNames):
        return np.arange(num_classes, dtype=np.int64)
    if len(names) != num_classes:
        raise InputError(f"{len(names)} label_names for {num_classes} classes")
    return np.asarray(names, dtype=str)


def check_label_names(names) -> tuple[str, ...] | None:
    """``label_names`` as a tuple of str (None stays None); InputTypeError otherwise."""
    if names is None or type(names) is ClassIdNames:
        return names
    if isinstance(names, (str, bytes)):
        raise InputTypeError("label_names must be a sequence of str, not a single string")
    if isinstance(names, (set, frozenset, Mapping)) or not isinstance(names, Iterable):
        raise InputTypeError(f"label_names must be an ordered sequence of str, got {type(names).__name__}")
    out = []
    for i, n in enumerate(names):
        if isinstance(n, str):
            out.append(str(n))
        elif is_int(n):
            out.append(str(int(n)))
        else:
            raise InputTypeError(f"label_names[{i}] must be str, got {type(n).__name__}: {shown(n)}")
    if len(set(out)) != len(out):
        raise InputError(f"label_names must be unique, got {tuple(out)}")
    return tuple(out)


def _labels_from_objects(y: np.ndarray) -> np.ndarray:
    """A str, int64 or float64 array from an object array of labels (or raise naming the document)."""
    row = y.shape[1] if y.ndim == 2 and y.shape[1] else 1
    first: dict[str, int] = {}
    for k, x in enumerate(y.flat):
        d = k // row
        if _is_missing(x):
            raise InputError.about_document(d, f"the label is missing ({shown(x)}); {_MISSING_HINT}")
        if isinstance(x, (bytes, np.bytes_)):
            raise InputTypeError(f"document {d}: the label {shown(x)} is bytes; decode the labels to str first")
        if isinstance(x, str):
            kind = "str"
        elif isinstance(x, (bool, np.bool_, int, np.integer)):
            kind = "int"
        elif isinstance(x, (float, np.floating)):
            kind = "float"
        else:
            raise InputTypeError(
                f"document {d}: the label {shown(x)} is a {type(x).__name__}; labels must be numbers or str"
            )
        first.setdefault(kind, d)
    if "str" in first and len(first) > 1:
        other = min(v for k, v in first.items() if k != "str")
        raise InputTypeError(
            f"labels mix str and numbers (document {first['str']} has a str, document {other} a "
            "number); use class names (str) or class ids (int) throughout"
        )
    if "str" in first:
        return np.array(y.tolist(), dtype=str)
    if "float" in first:
        return np.array(y.tolist(), dtype=np.float64)
    try:
        return np.array(y.tolist(), dtype=np.int64).reshape(y.shape)
    except OverflowError:
        for k, x in enumerate(y.flat):
            if not -(2**63) <= int(x) < 2**63:
                raise InputError.about_document(k // row, f"class id {int(x)} does not fit in int64") from None
        raise  # pragma: no cover - the loop finds the entry


def normalize_labels(labels, names: tuple[str, ...] | None, num_docs: int):
    """``(labels, label_names)`` as stored by :class:`Corpus` (see its docstring), or raise."""
    if isinstance(labels, (str, bytes)):
        raise InputTypeError("labels must be a sequence with one label per document, not a single string")
    if isinstance(labels, (set, frozenset, Mapping)):
        raise InputTypeError(f"labels must be an ordered sequence (one label per document), got {type(labels).__name__}")
    # a list is read entry by entry (numpy would turn [0, None, 1] or [0, "a"] into str labels)
    y = labels if isinstance(labels, np.ndarray) else np.asarray(labels, dtype=object)
    if y.dtype.kind == "O" and y.ndim == 1 and y.size and all(isinstance(x, (list, tuple, np.ndarray)) for x in y):
        raise InputError("labels must be a [D] sequence or a [D, L] array of equal-length rows (the rows differ in length)")
    if y.ndim not in (1, 2):
        raise InputError(
            f"labels must be [D] or [D, L] (one label or one row per document), got "
            f"{type(labels).__name__} of shape {y.shape}"
        )
    if y.shape[0] != num_docs:
        raise InputError(f"labels have {y.shape[0]} rows but the corpus has D={num_docs} documents")
    if y.dtype.kind == "O":
        y = _labels_from_objects(y)
    kind = y.dtype.kind
    if kind == "S":
        raise InputTypeError("labels are bytes; decode them to str first")
    if kind == "U":
        if y.ndim != 1:
            raise InputError(f"class names (str labels) must be [D], one per document, got shape {y.shape}")
        raw = y.tolist()
        if names is None:
            names = tuple(sorted(set(raw)))
        index = {n: i for i, n in enumerate(names)}
        for d, x in enumerate(raw):
            if x not in index:
                raise InputError.about_document(d, f"label {x!r} is not in label_names {names}")
        return np.array([index[x] for x in raw], dtype=np.int64).reshape(len(raw)), names
    if kind not in "biuf":
        raise InputTypeError(
            f"unsupported label dtype {y.dtype}: labels are class ids (int), ratings (float), "
            "[D, L] 0/1 indicators or class names (str)"
        )
    if y.ndim == 2:
        bad = (y != 0) & (y != 1)
        if bad.any():
            d, l = (int(i) for i in np.argwhere(bad)[0])
            raise InputError.about_document(d, f"multi-label [D, L] labels must be 0/1; entry {l} is {y[d, l]}")
        if names is not None and len(names) != y.shape[1]:
            raise InputError(f"{len(names)} label_names for multi-label labels with L={y.shape[1]} columns")
        return y.astype(np.int64), names
    if kind == "f":
        y = y.astype(np.float64)
        bad = ~np.isfinite(y)
        if bad.any():
            d = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"non-finite rating at document {d} ({y[d]}); ratings must be finite ({_MISSING_HINT})",
                document=d,
                detail=f"non-finite rating ({y[d]})",
            )
        return y, names
    if kind == "u" and y.size and y.max() > np.iinfo(np.int64).max:
        d = int(np.argmax(y > np.iinfo(np.int64).max))
        raise InputError.about_document(d, f"class id {y[d]} does not fit in int64")
    y = y.astype(np.int64)
    if y.size:
        if y.min() < 0:
            d = int(np.flatnonzero(y < 0)[0])
            raise InputError.about_document(
                d,
                f"class id {y[d]} is negative; class ids are 0..L-1 (ratings: float labels, or "
                "label_type='rating' for a file; other raw labels: label_map)",
            )
        if names is not None and y.max() >= len(names):
            d = int(np.flatnonzero(y >= len(names))[0])
            raise InputError.about_document(d, f"class id {y[d]} has no name ({len(names)} label_names)")
        if names is None and y.max() >= MAX_CLASSES:
            d = int(np.argmax(y >= MAX_CLASSES))
            raise InputError.about_document(
                d,
                f"class id {y[d]} would make {y[d] + 1:,} classes (at most {MAX_CLASSES:,}); class "
                "ids are 0..L-1 (ratings: float labels; other raw labels: str class names or label_map)",
            )
    return y, names


def check_labels(
    labels, kind: str, *, num_classes: int | None = None, at_least_one: bool = False
) -> np.ndarray:
    """Validate a bare label array for a model of the given ``kind`` and return it normalised.

    * ``"binary"``: ``[D]`` integer class ids 0/1 (``num_classes`` must be 2 or None);
    * ``"multiclass"``: ``[D]`` integer class ids ``0..num_classes-1`` (only ``>= 0`` is
      checked when ``num_classes`` is None);
    * ``"regression"``: ``[D]`` finite real ratings;
    * ``"multilabel"``: ``[D, L]`` 0/1 indicators (``L == num_classes`` when given); with
      ``at_least_one=True`` every document needs at least one positive label.

    Errors name the first offending document, e.g. ``"class label 7 out of range for 5
    classes at document 12"``, ``"non-finite rating at document 3 (nan)"``, ``"document 4
    has no positive label"``. Returns a read-only int64 ``[D]`` / float64 ``[D]`` / int64
    ``[D, L]`` array (a copy when the dtype changes). The labels of a corpus were checked
    when it was built: :meth:`Corpus.require_labels` checks only what the model adds.
    """
    kind, num_classes = check_kind(kind, num_classes)
    if isinstance(labels, (str, bytes)):
        raise InputTypeError(f"{kind} labels must be an array, not a single string")
    try:
        y = np.asarray(labels)
    except (ValueError, TypeError) as err:
        raise InputError(f"{kind} labels must be an array of equal-length rows ({err})") from None
    want_ndim = 2 if kind == "multilabel" else 1
    if y.ndim != want_ndim:
        shape = "[D, L] 0/1 indicators" if want_ndim == 2 else "[D]"
        raise InputError(f"{kind} labels must be {shape}, got shape {y.shape}")
    if y.dtype.kind not in "biuf":
        raise InputTypeError(f"{kind} labels must be numeric, got dtype {y.dtype}")

    if kind == "regression":
        y = y.astype(np.float64)
        bad = ~np.isfinite(y)
        if bad.any():
            d = int(np.flatnonzero(bad)[0])
            raise InputError(f"non-finite rating at document {d} ({y[d]})")
        return readonly(np.array(y, copy=True))

    if y.dtype.kind == "f":
        whole = np.isfinite(y) & (y == np.round(y))
        if not whole.all():
            pos = np.argwhere(~whole)[0]
            where = f"document {pos[0]}" + (f", label {pos[1]}" if y.ndim == 2 else "")
            what = "multi-label entry" if kind == "multilabel" else "class label"
            raise InputError(f"{what} {y[tuple(pos)]} at {where} is not a whole number")
    if y.dtype.kind == "u" and y.size and y.max() > np.iinfo(np.int64).max:
        raise InputError(f"class label {y.max()} does not fit in int64")
    y = y.astype(np.int64)
    if kind == "multilabel":
        bad = (y != 0) & (y != 1)
        if bad.any():
            d, l = (int(i) for i in np.argwhere(bad)[0])
            raise InputError(f"multi-label entry {y[d, l]} at document {d}, label {l} is not 0 or 1")
    elif num_classes is None and y.size and y.min() < 0:
        d = int(np.flatnonzero(y < 0)[0])
        raise InputError(f"class label {y[d]} is negative at document {d}")
    return check_classes(readonly(np.array(y, copy=True)), kind, num_classes, at_least_one)


def check_kind(kind: str, num_classes) -> tuple[str, int | None]:
    """A checked label kind (one of ``LABEL_KINDS``) and its number of classes; InputError
    naming what does not fit."""
    if not isinstance(kind, str) or kind not in LABEL_KINDS:
        raise InputError(f"label kind must be one of {', '.join(LABEL_KINDS)}, got {shown(kind)}")
    if num_classes is not None and (not is_int(num_classes) or num_classes < 1):
        raise InputError(f"num_classes must be an integer >= 1, got {shown(num_classes)}")
    if kind == "binary":
        if num_classes is not None and num_classes != 2:
            raise InputError(f"binary labels have 2 classes, not num_classes={num_classes}")
        num_classes = 2
    return kind, None if num_classes is None else int(num_classes)


def check_classes(y: np.ndarray, kind: str, num_classes: int | None, at_least_one: bool) -> np.ndarray:
    """What a model adds to valid labels: the class range, the column count, a positive label
    in every row. ``y`` holds int64 class ids ``>= 0`` or 0/1 rows, or float64 ratings."""
    if kind == "regression":
        return y
    if kind == "multilabel":
        L = y.shape[1]
        if num_classes is not None and L != num_classes:
            raise InputError(f"multi-label labels have {L} columns but num_classes={num_classes}")
        if at_least_one:
            none = y.sum(axis=1) == 0
            if none.any():
                d = int(np.flatnonzero(none)[0])
                raise InputError(f"document {d} has no positive label ({int(none.sum())} such document(s))")
        return y
    if num_classes is not None and y.size and y.max() >= num_classes:
        d = int(np.flatnonzero(y >= num_classes)[0])
        raise InputError(f"class label {y[d]} out of range for {num_classes} classes at document {d}")
    return y
