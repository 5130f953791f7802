"""One-vs-all: L independent binary models (each with its own topics), argmax of their scores.

The papers' multi-class baseline for gSLDA and Gibbs MedLDA. Models are trained one after
another; each one's test scores are computed right after its fit and its snapshots dropped,
so memory stays that of one binary model.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace

import numpy as np

from topiczoo.fit import fit
from topiczoo.models.tasks import Task
from topiczoo.predict import Prediction, predict


def class_checkpoint(checkpoint, cls: int) -> str:
    """The checkpoint file of class ``cls``'s fit: ``ck.npz`` -> ``ck.class<cls>.npz``."""
    root, ext = os.path.splitext(os.fspath(checkpoint))
    return f"{root}.class{cls}{ext or '.npz'}"


def one_vs_all(make_model, train, test, *, predict_kwargs=None, progress=True,
               checkpoint=None, **fit_kwargs) -> tuple[Prediction, dict]:
    """Fit ``make_model()`` once per class on labels (class == l) and score ``test``.

    Args:
      make_model: a function returning a binary model (e.g. ``lambda: medlda(40, ell=64)``).
      train, test: corpora with class-id labels [D], test in the training vocabulary.
      predict_kwargs: passed to :func:`topiczoo.predict.predict`.
      progress: the fits' progress lines and a line per class on stderr.
      checkpoint: a path: each class's fit keeps its own checkpoint beside it
        (:func:`class_checkpoint`), so an interrupted run resumes at the class and chunk it
        reached; the finished classes' fits are read back and their test scores recomputed.
      fit_kwargs: passed to :func:`topiczoo.fit.fit` (seed, num_chains, num_iterations, ...).
    Returns the :class:`Prediction` (scores [C, I, J, L, D], one task per class, decided by
    argmax) and ``{"train_seconds": ..., "token_iterations_per_second": ...}`` over all L fits.
    """
    task = Task.of(("multiclass",), train)
    labels = np.asarray(train.labels)
    scores, seconds, token_iterations, response = [], 0.0, 0.0, None
    for cls in range(task.num_tasks):
        tic = time.perf_counter()
        binary = replace(train, labels=(labels == cls).astype(np.int64), label_names=None)
        result = fit(make_model(), binary, progress=progress, **fit_kwargs,
                     checkpoint=None if checkpoint is None else class_checkpoint(checkpoint, cls))
        seconds += result.train_seconds
        token_iterations += result.token_iterations_per_second * result.train_seconds
        prediction = predict(result, test, **(predict_kwargs or {}))
        scores.append(prediction.scores[..., 0, :])
        response = prediction.response
        if progress:
            print(f"[one-vs-all] class {cls + 1}/{task.num_tasks} done in "
                  f"{time.perf_counter() - tic:.1f} s", file=sys.stderr, flush=True)
    stacked = np.stack(scores, axis=-2)  # [C, I, J, L, D]
    timing = {"train_seconds": seconds,
              "token_iterations_per_second": token_iterations / max(seconds, 1e-9)}
    return Prediction(stacked, task, response), timing
