"""What is predicted: the task a model's response serves.

A :class:`Task` is the one place where the labels of a corpus meet the model:

* which label kinds a model accepts (``binary``, ``multiclass``, ``multilabel``,
  ``regression``) and the clear error when the corpus has another kind;
* the orientation: a corpus stores class ids [D], 0/1 indicators [D, L] or ratings [D]; the
  samplers read tasks first, ``y`` of shape [T, D] (one task per class for multi-class data,
  one per label for multi-label data). :meth:`Task.to_tasks` and :meth:`Task.decide` are the
  only places that turn between the two;
* the decision rule (sign of the score, argmax over the class scores, the score itself) and
  the metrics of the papers (accuracy; precision / recall / F1; predictive R^2 and MSE);
* the training monitors that depend on the decision (training accuracy, residual norm).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from topiczoo.errors import InputError
from topiczoo.metrics import evaluate

#: Every label kind, in the corpus's words (``Corpus.label_kind``).
KINDS = ("binary", "multiclass", "multilabel", "regression")


@dataclass(frozen=True)
class Task:
    """A prediction task: its label kind and number of tasks T.

    kind: one of :data:`KINDS`; num_tasks: T (1 for binary and regression, L classes for
    multi-class, L labels for multi-label; ``None`` while unknown, before a corpus is seen);
    offset: subtracted from real responses before the model sees them and added back to its
    predictions (the training mean when a regression model centres its responses; omega =
    eta . zbar has no intercept), in response units.
    """

    kind: str
    num_tasks: int | None = None
    offset: float = 0.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"task kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    # ------------------------------------------------------------------ from a corpus
    @classmethod
    def of(cls, kinds, corpus, num_classes: int | None = None, center: bool = False) -> "Task":
        """The task of a model accepting label ``kinds`` on ``corpus``'s labels; with
        ``center``, real responses are centred on their mean (:attr:`offset`).

        Raises ``ValueError`` when the corpus has no labels or labels of another kind (saying
        which), or class ids outside ``num_classes``.
        """
        have = corpus.label_kind
        if have is None:
            raise ValueError(f"a supervised model needs a corpus with labels ({' or '.join(kinds)})")
        kind = have
        if have == "binary" and have not in kinds and "multiclass" in kinds:
            kind = "multiclass"  # two classes are a multi-class problem too
        if kind not in kinds:
            hint = (" (view class ids as one 0/1 task per class with corpus.as_multilabel())"
                    if have == "multiclass" and "multilabel" in kinds
                    else " (integer labels read as class ids; give ratings as floats, e.g. "
                         "labels.astype(float), to fit them as real responses)"
                    if have in ("multiclass", "binary") and "regression" in kinds else "")
            raise ValueError(f"this model takes {' or '.join(kinds)} labels; the corpus has "
                             f"{have} labels{hint}")
        labels = corpus.require_labels(kind, num_classes=num_classes)
        if kind == "binary" and labels.size and np.all(labels == labels[0]):
            warnings.warn(f"every training label is {labels[0]}: a classifier fitted to one "
                          "class has nothing to tell the other by (the named data sets are "
                          "sorted by label: take a random subset, not the first documents)",
                          UserWarning, stacklevel=4)
        if kind == "multiclass":
            num_tasks = int(num_classes or corpus.num_classes)
        elif kind == "multilabel":
            num_tasks = labels.shape[1]
        else:
            num_tasks = 1
        offset = float(np.mean(labels)) if center and kind == "regression" else 0.0
        return cls(kind, num_tasks, offset)

    # ------------------------------------------------------------------ orientation
    def to_tasks(self, labels) -> np.ndarray:
        """Corpus labels -> float [T, D]: 0/1 per task (classification) or the ratings."""
        labels = np.asarray(labels)
        if self.kind == "multiclass":
            return (labels[None, :] == np.arange(self.num_tasks)[:, None]).astype(np.float32)
        if self.kind == "multilabel":
            return labels.T.astype(np.float32)
        if self.kind == "regression":
            return labels[None, :].astype(np.float64) - self.offset
        return labels[None, :].astype(np.float32)

    def decide(self, scores) -> np.ndarray:
        """Scores [T, D] -> predictions in the corpus's orientation: class ids [D] (binary:
        1 where the score is > 0; multi-class: the argmax over the class scores), 0/1
        indicators [D, L] (multi-label), or the predicted responses [D] (regression)."""
        scores = np.asarray(scores)
        if self.kind == "binary":
            return (scores[0] > 0).astype(np.int64)
        if self.kind == "multilabel":
            return (scores > 0).astype(np.int64).T
        if self.kind == "multiclass":
            return np.argmax(scores, axis=0).astype(np.int64)
        return scores[0] + self.offset

    # ------------------------------------------------------------------ metrics
    def check_truth(self, truth) -> np.ndarray:
        """``truth`` (test labels in the corpus's orientation) as an array, if it is labels of
        this task: 0/1 (binary), class ids in [0, T) (multi-class), 0/1 indicators [D, T]
        (multi-label); regression's finite numbers are checked by its metrics. Raises
        :class:`~topiczoo.errors.InputError` naming the first bad entry."""
        truth = np.asarray(truth)
        if self.kind == "regression":
            return truth
        if self.kind == "multilabel" and (truth.ndim != 2 or truth.shape[1] != self.num_tasks):
            raise InputError(f"multilabel truth must be 0/1 indicators [D, {self.num_tasks}], "
                             f"got shape {truth.shape}")
        top = 2 if self.kind != "multiclass" else self.num_tasks
        numeric = truth.dtype.kind in "biuf"
        bad = ~np.isin(truth, np.arange(top)) if numeric else np.ones(truth.shape, bool)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            allowed = "0 or 1" if top == 2 else f"a class id in [0, {top})"
            raise InputError(f"{self.kind} truth{list(where)} is {truth[where].item()!r}, not "
                             f"{allowed}")
        return truth

    def metrics(self, truth, predicted) -> dict:
        """The papers' metrics of predictions in the corpus's orientation: ``accuracy``
        (binary, multi-class); micro and macro ``precision``, ``recall``, ``f1`` (multi-label);
        ``predictive_r2`` and ``mse`` (regression, squared response units). ``truth`` must be
        labels of this task (:meth:`check_truth`)."""
        return evaluate(self.kind, self.check_truth(truth), predicted)

    # ------------------------------------------------------------------ monitors (jittable)
    def train_monitors(self, y, omega) -> dict:
        """Per-draw monitors from the coded responses y [T, D] (classification: > 0 for label 1,
        or the one-vs-all rows of a multi-class label) and the scores omega [T, D]:
        ``train_accuracy`` over (task, document) or documents; ``residual_norm`` (||y -
        omega||_2) and ``train_mse`` for regression."""
        if self.kind == "regression":
            residual = y - omega
            return {"residual_norm": jnp.sqrt(jnp.sum(residual**2)),
                    "train_mse": jnp.mean(residual**2)}
        if self.kind == "multiclass":
            correct = jnp.argmax(omega, axis=0)[None, :].astype(jnp.int32)[0] == jnp.argmax(y, axis=0)
        else:
            correct = (omega > 0).astype(jnp.int32) == (y > 0)
        return {"train_accuracy": jnp.mean(correct.astype(jnp.float32))}
