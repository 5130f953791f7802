"""Deterministic train/test splits and K-fold partitions of document indices."""

from __future__ import annotations

import numpy as np

__all__ = ["kfold_indices", "split_indices"]

def _labels_and_count(labels_or_num_docs):
    """``(labels or None, D)`` from a document count or a label array with D rows."""
    if np.isscalar(labels_or_num_docs):
        return None, int(labels_or_num_docs)
    labels = np.asarray(labels_or_num_docs)
    return labels, labels.shape[0]


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
    if not 0.0 < float(test_fraction) < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    n_test = int(round(float(test_fraction) * num_docs))
    if n_test < 1 or n_test > num_docs - 1:
        raise ValueError(
            f"test_fraction={test_fraction} of {num_docs} documents leaves an empty train or test set"
        )
    rng = np.random.default_rng(seed)
    if (
        stratify
        and labels is not None
        and labels.ndim == 1
        and np.issubdtype(labels.dtype, np.integer)
    ):
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
    if isinstance(num_folds, (bool, np.bool_)) or int(num_folds) != num_folds or num_folds < 2:
        raise ValueError(f"num_folds must be an integer >= 2, got {num_folds!r}")
    num_folds = int(num_folds)
    if num_folds > num_docs:
        raise ValueError(f"num_folds={num_folds} is more than the {num_docs} documents")
    order = np.random.default_rng(seed).permutation(num_docs)
    if (
        stratify
        and labels is not None
        and labels.ndim == 1
        and np.issubdtype(labels.dtype, np.integer)
    ):
        order = order[np.argsort(labels[order], kind="stable")]
    fold_of = np.empty(num_docs, dtype=np.int64)
    fold_of[order] = np.arange(num_docs) % num_folds
    return [
        (np.flatnonzero(fold_of != k).astype(np.int64), np.flatnonzero(fold_of == k).astype(np.int64))
        for k in range(num_folds)
    ]

