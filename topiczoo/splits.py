"""Deterministic train/test splits and K-fold partitions of document indices.

Both functions take either the number of documents ``D`` or a label array with ``D`` rows
(``[D]`` integer class ids are stratified; ratings and ``[D, L]`` indicators are not) and
depend only on their arguments (``numpy.random.default_rng(seed)``).
:meth:`Corpus.train_test_split <topiczoo.corpus.Corpus.train_test_split>` and
:meth:`Corpus.kfold_splits <topiczoo.corpus.Corpus.kfold_splits>` apply them to a corpus.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError, InputTypeError

__all__ = ["kfold_indices", "split_indices"]

_REAL = (int, float, np.integer, np.floating)


def _labels_and_count(labels_or_num_docs) -> tuple[np.ndarray | None, int]:
    """``(labels or None, D)`` from a document count or a label array with D rows."""
    x = labels_or_num_docs
    if isinstance(x, (bool, np.bool_)):
        raise InputTypeError("labels_or_num_docs must be a document count or a label array, not a bool")
    if isinstance(x, (int, np.integer)):
        if x < 0:
            raise InputError(f"the number of documents must be >= 0, got {x}")
        return None, int(x)
    if isinstance(x, (str, bytes)) or np.isscalar(x):
        raise InputTypeError(
            f"labels_or_num_docs must be an int document count or a label array, got {type(x).__name__} {x!r}"
        )
    try:
        labels = np.asarray(x)
    except (ValueError, TypeError) as err:
        raise InputError(f"labels must be a [D] or [D, L] array: {err}") from None
    if labels.ndim == 0:
        raise InputTypeError(f"labels_or_num_docs must be an int document count or a label array, got {x!r}")
    return labels, labels.shape[0]


def _stratify_by(labels: np.ndarray | None, stratify: bool) -> bool:
    return bool(stratify) and labels is not None and labels.ndim == 1 and np.issubdtype(labels.dtype, np.integer)


def split_indices(
    labels_or_num_docs, test_fraction: float = 0.25, seed: int = 0, stratify: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic random train/test split of document indices.

    ``labels_or_num_docs`` is either the number of documents ``D`` or a label array ``[D]``
    (``[D, L]`` multi-label or float ratings are split without stratification). With
    ``stratify=True`` and integer class labels, each class contributes its share of test
    documents (largest-remainder rounding so that the total is ``round(test_fraction * D)``).

    Returns ``(train_idx, test_idx)``: two sorted int64 arrays partitioning ``range(D)``.
    The result depends only on ``(labels, test_fraction, seed, stratify)``
    (``numpy.random.default_rng(seed)``).
    """
    labels, num_docs = _labels_and_count(labels_or_num_docs)
    if isinstance(test_fraction, (bool, np.bool_)) or not isinstance(test_fraction, _REAL):
        raise InputTypeError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    if not 0.0 < float(test_fraction) < 1.0:
        raise InputError(f"test_fraction must be in (0, 1), got {test_fraction}")
    n_test = int(round(float(test_fraction) * num_docs))
    if n_test < 1 or n_test > num_docs - 1:
        raise InputError(
            f"test_fraction={test_fraction} of {num_docs} documents leaves an empty train or test set"
        )
    rng = np.random.default_rng(seed)
    if _stratify_by(labels, stratify):
        classes, inverse = np.unique(labels, return_inverse=True)
        sizes = np.bincount(inverse, minlength=len(classes))
        quota = float(test_fraction) * sizes
        take = np.floor(quota).astype(np.int64)
        remainder = n_test - int(take.sum())
        if remainder > 0:
            # largest fractional part first, ties by class order (stable sort)
            order = np.argsort(-(quota - take), kind="stable")
            take[order[:remainder]] += 1
        test_parts = []
        for c in range(len(classes)):
            members = np.flatnonzero(inverse == c)
            perm = rng.permutation(members)
            test_parts.append(perm[: take[c]])
        test_idx = np.sort(np.concatenate(test_parts)).astype(np.int64)
    else:
        test_idx = np.sort(rng.permutation(num_docs)[:n_test]).astype(np.int64)
    mask = np.ones(num_docs, dtype=bool)
    mask[test_idx] = False
    train_idx = np.flatnonzero(mask).astype(np.int64)
    return train_idx, test_idx


def kfold_indices(
    labels_or_num_docs, num_folds: int = 5, seed: int = 0, stratify: bool = True
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Deterministic random K-fold partition of document indices (for cross-validation).

    ``labels_or_num_docs`` is the number of documents ``D`` or a label array as for
    :func:`split_indices`. The documents are put in random order
    (``numpy.random.default_rng(seed).permutation``) -- with ``stratify=True`` and ``[D]``
    integer class labels, grouped by class, random within a class -- and dealt to the folds
    in turn, so fold sizes differ by at most one and every class is spread evenly.

    Returns a list of ``num_folds`` pairs ``(train_idx, test_idx)`` of sorted int64 arrays;
    the test parts partition ``range(D)`` and ``train_idx`` is the complement of
    ``test_idx``. The result depends only on ``(labels, num_folds, seed, stratify)``.
    """
    labels, num_docs = _labels_and_count(labels_or_num_docs)
    if (
        isinstance(num_folds, (bool, np.bool_))
        or not isinstance(num_folds, _REAL)
        or not float(num_folds).is_integer()
        or num_folds < 2
    ):
        raise InputError(f"num_folds must be an integer >= 2, got {num_folds!r}")
    num_folds = int(num_folds)
    if num_folds > num_docs:
        raise InputError(f"num_folds={num_folds} is more than the {num_docs} documents")
    order = np.random.default_rng(seed).permutation(num_docs)
    if _stratify_by(labels, stratify):
        order = order[np.argsort(labels[order], kind="stable")]
    fold_of = np.empty(num_docs, dtype=np.int64)
    fold_of[order] = np.arange(num_docs) % num_folds
    return [
        (np.flatnonzero(fold_of != k).astype(np.int64), np.flatnonzero(fold_of == k).astype(np.int64))
        for k in range(num_folds)
    ]
