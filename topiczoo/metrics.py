"""Test metrics of the papers: accuracy, predictive R^2, MSE, multi-label precision/recall/F1.

Every metric takes ``(y_true, y_pred)`` of the same shape with at least one entry and raises
:class:`~topiczoo.errors.InputError` naming the metric and both shapes otherwise (a length-1
prediction is never broadcast against the test labels). Regression metrics need finite
numbers and name the first entry that is not.
"""

from __future__ import annotations

import warnings

import numpy as np

from .errors import InputError, InputTypeError

__all__ = ["accuracy", "evaluate", "mean_squared_error", "precision_recall_f1", "predictive_r2"]

TASK_KINDS = ("binary", "multiclass", "regression", "multilabel")


def _where(mask: np.ndarray) -> str:
    """``[i]`` or ``[i, j]``: the first position where ``mask`` holds."""
    pos = tuple(int(i) for i in np.argwhere(mask)[0])
    return "[" + ", ".join(map(str, pos)) + "]"


def _pair(metric: str, y_true, y_pred, *, real: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays, checked: same shape, not empty, finite numbers when ``real``."""
    arrays = []
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if isinstance(y, (str, bytes)):
            raise InputTypeError(f"{metric}: {name} must be an array with one entry per document, not a single string")
        try:
            arrays.append(np.asarray(y))
        except (ValueError, TypeError) as err:
            raise InputError(f"{metric}: {name} is not an array of equal-length rows ({err})") from None
    a, b = arrays
    if a.shape != b.shape:
        raise InputError(
            f"{metric}: y_true has shape {a.shape} but y_pred has shape {b.shape}; "
            "they must match (one prediction per test label)"
        )
    if a.ndim == 0:
        raise InputError(f"{metric}: y_true and y_pred must be arrays (one entry per document), got scalars")
    if a.size == 0:
        raise InputError(f"{metric}: no documents to score (y_true and y_pred are empty)")
    numeric = [y.dtype.kind in "biuf" for y in (a, b)]
    if numeric[0] != numeric[1] or (real and not all(numeric)):
        raise InputTypeError(
            f"{metric}: y_true ({a.dtype}) and y_pred ({b.dtype}) must both be "
            + ("numbers" if real else "numbers or both str")
        )
    if real:
        for name, y in (("y_true", a), ("y_pred", b)):
            bad = ~np.isfinite(y.astype(np.float64))
            if bad.any():
                raise InputError(f"{metric}: {name}{_where(bad)} is {y[tuple(np.argwhere(bad)[0])]}, not a finite number")
        a, b = a.astype(np.float64), b.astype(np.float64)
    return a, b


def accuracy(y_true, y_pred) -> float:
    """Fraction of entries where ``y_pred`` equals ``y_true`` (arrays of the same shape)."""
    a, b = _pair("accuracy", y_true, y_pred)
    return float(np.mean(a == b))


def mean_squared_error(y_true, y_pred) -> float:
    """mean (y - yhat)^2, in squared response units."""
    a, b = _pair("mean_squared_error", y_true, y_pred, real=True)
    return float(np.mean((a - b) ** 2))


def predictive_r2(y_true, y_pred) -> float:
    """Predictive R^2 of the sLDA and MedLDA papers: 1 - sum (y - yhat)^2 / sum (y - mean y)^2
    (the mean of the test responses; negative when worse than predicting that mean).

    Undefined when all test responses are equal: a ``RuntimeWarning`` says so and the result is nan.
    """
    a, b = _pair("predictive_r2", y_true, y_pred, real=True)
    spread = np.sum((a - a.mean()) ** 2)
    if spread == 0.0:
        warnings.warn(
            f"predictive_r2: all {a.size} test responses equal {a.flat[0]}, so R^2 is undefined; "
            "returning nan (mean_squared_error is defined)",
            RuntimeWarning,
            stacklevel=2,
        )
        return float("nan")
    return float(1.0 - np.sum((a - b) ** 2) / spread)


def _prf(a, b) -> tuple:
    tp = np.sum(a & b)
    precision = tp / max(np.sum(b), 1)
    recall = tp / max(np.sum(a), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return float(precision), float(recall), float(f1)


def precision_recall_f1(y_true, y_pred, label_names=None) -> dict:
    """Precision, recall and F1 of 0/1 (or bool) indicator arrays of one shape [D, L]:
    micro-averaged (``precision``, ``recall``, ``f1``: counts pooled over all labels) and, for
    two-dimensional arrays, macro-averaged (``macro_precision``, ``macro_recall``,
    ``macro_f1``: the mean over the L labels, columns, of each label's own figure).

    A label column with no positive in ``y_true`` has no defined recall (0 of 0 found): it is
    counted as 0, and so is its F1, and its precision is 0 when it is predicted anywhere (0 of
    those predictions right) and 0 when it is not (0 of 0), so such a column counts 0 in all
    three macro averages, even when it is predicted correctly as absent everywhere (as
    scikit-learn's ``zero_division=0``). A ``RuntimeWarning`` names those columns (by
    ``label_names`` when given, a sequence of L names, else by index); the micro figures pool
    the counts and are not affected.
    """
    a, b = _pair("precision_recall_f1", y_true, y_pred)
    for name, y in (("y_true", a), ("y_pred", b)):
        if y.dtype.kind not in "biuf":
            raise InputTypeError(f"precision_recall_f1: {name} must be 0/1 indicators, got dtype {y.dtype}")
        bad = (y != 0) & (y != 1)
        if bad.any():
            raise InputError(
                f"precision_recall_f1: {name}{_where(bad)} is {y[tuple(np.argwhere(bad)[0])]}, not a 0/1 indicator"
            )
    a, b = a.astype(bool), b.astype(bool)
    precision, recall, f1 = _prf(a, b)
    out = {"precision": precision, "recall": recall, "f1": f1}
    if a.ndim == 2:
        _warn_columns_without_positives(a, label_names)
        per_label = np.array([_prf(a[:, j], b[:, j]) for j in range(a.shape[1])])
        out.update(macro_precision=float(per_label[:, 0].mean()),
                   macro_recall=float(per_label[:, 1].mean()),
                   macro_f1=float(per_label[:, 2].mean()))
    return out


def _warn_columns_without_positives(truth: np.ndarray, label_names) -> None:
    """A RuntimeWarning naming the label columns of ``truth`` (bool [D, L]) that have no
    positive: their recall is undefined and they count 0 in the macro averages."""
    empty = np.flatnonzero(~truth.any(axis=0))
    if not empty.size:
        return
    L = truth.shape[1]
    names = None
    if label_names is not None:
        names = [str(n) for n in label_names]
        if len(names) != L:
            raise InputError(f"precision_recall_f1: {len(names)} label_names for {L} label columns")
    shown = [repr(names[j]) if names else str(int(j)) for j in empty[:10]]
    more = f", ... ({empty.size} in all)" if empty.size > 10 else ""
    which = "column" if empty.size == 1 else "columns"
    warnings.warn(
        f"precision_recall_f1: label {which} {', '.join(shown)}{more} of {L} "
        f"{'has' if empty.size == 1 else 'have'} no positive in y_true: recall is undefined "
        "there and counts as 0, as do precision and F1, in macro_precision, macro_recall and "
        "macro_f1 (the micro figures are not affected); score the columns with positives "
        "for a macro average without them",
        RuntimeWarning,
        stacklevel=3,
    )


def evaluate(kind: str, y_true, y_pred) -> dict:
    """The metrics of a task kind: ``binary``/``multiclass`` -> accuracy; ``regression`` ->
    predictive_r2 and mse; ``multilabel`` ([D, L] indicators) -> micro and macro precision,
    recall, f1."""
    if not isinstance(kind, str):
        raise InputTypeError(f"the task kind must be one of {', '.join(TASK_KINDS)}, got {type(kind).__name__}")
    if kind in ("binary", "multiclass"):
        return {"accuracy": accuracy(y_true, y_pred)}
    if kind == "regression":
        return {"predictive_r2": predictive_r2(y_true, y_pred),
                "mse": mean_squared_error(y_true, y_pred)}
    if kind == "multilabel":
        return precision_recall_f1(y_true, y_pred)
    raise InputError(f"unknown task kind {kind!r}; choose one of {', '.join(TASK_KINDS)}")
