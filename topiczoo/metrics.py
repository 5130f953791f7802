"""Test metrics of the papers: accuracy, predictive R^2, MSE, multi-label precision/recall/F1."""

from __future__ import annotations

import numpy as np


def accuracy(y_true, y_pred) -> float:
    """Fraction of equal entries."""
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def mean_squared_error(y_true, y_pred) -> float:
    """mean (y - yhat)^2, in squared response units."""
    y_true, y_pred = np.asarray(y_true, np.float64), np.asarray(y_pred, np.float64)
    return float(np.mean((y_true - y_pred) ** 2))


def predictive_r2(y_true, y_pred) -> float:
    """Predictive R^2 of the sLDA and MedLDA papers: 1 - sum (y - yhat)^2 / sum (y - mean y)^2
    (the mean of the test responses; negative when worse than predicting that mean)."""
    y_true, y_pred = np.asarray(y_true, np.float64), np.asarray(y_pred, np.float64)
    return float(1.0 - np.sum((y_true - y_pred) ** 2) / np.sum((y_true - y_true.mean()) ** 2))


def precision_recall_f1(y_true, y_pred) -> dict:
    """Micro-averaged precision, recall and F1 of 0/1 indicator arrays of one shape."""
    y_true, y_pred = np.asarray(y_true).astype(bool), np.asarray(y_pred).astype(bool)
    tp = np.sum(y_true & y_pred)
    precision = tp / max(np.sum(y_pred), 1)
    recall = tp / max(np.sum(y_true), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


def evaluate(kind: str, y_true, y_pred) -> dict:
    """The metrics of a task kind: ``binary``/``multiclass`` -> accuracy; ``regression`` ->
    predictive_r2 and mse; ``multilabel`` ([T, D] indicators) -> precision, recall, f1."""
    if kind in ("binary", "multiclass"):
        return {"accuracy": accuracy(y_true, y_pred)}
    if kind == "regression":
        return {"predictive_r2": predictive_r2(y_true, y_pred),
                "mse": mean_squared_error(y_true, y_pred)}
    if kind == "multilabel":
        return precision_recall_f1(y_true, y_pred)
    raise ValueError(f"unknown task kind {kind!r}")
