"""One-vs-all: L independent binary models (each with its own topics), argmax of their scores.

The papers' multi-class baseline for gSLDA and Gibbs MedLDA. Models are trained one after
another; each one's test scores are computed right after its fit and its snapshots dropped,
so memory stays that of one binary model.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from topiczoo.fit import fit
from topiczoo.predict import reduce_scores, predict


@dataclass
class OneVsAllPrediction:
    """scores: float32 [L, C, I, J, D] per class (chain, snapshot, test draw, document)."""

    scores: np.ndarray
    train_seconds: float
    token_iterations_per_second: float

    def score(self, strategy: str = "ma") -> np.ndarray:
        """Averaged scores [L, D]."""
        return np.stack([reduce_scores(s[..., None, :], strategy)[0] for s in self.scores])

    def labels(self, strategy: str = "ma") -> np.ndarray:
        """Class ids [D]: argmax over the L binary models' averaged scores."""
        return np.argmax(self.score(strategy), axis=0)

    def accuracy(self, labels, strategy: str = "ma") -> float:
        return float(np.mean(self.labels(strategy) == np.asarray(labels)))


def one_vs_all(make_model, train, test, *, predict_kwargs=None, progress=True,
               **fit_kwargs) -> OneVsAllPrediction:
    """Fit ``make_model()`` once per class on labels (class == l) and score ``test``.

    Args:
      make_model: a function returning a binary :class:`TopicModel` (e.g.
        ``lambda: medlda(40, ell=64)``).
      train, test: corpora with class-id labels [D], test in the training vocabulary.
      predict_kwargs: passed to :func:`topiczoo.predict.predict`.
      fit_kwargs: passed to :func:`topiczoo.fit.fit` (seed, num_chains, num_iterations, ...).
    """
    labels = np.asarray(train.labels)
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise ValueError("one-vs-all needs class-id labels [D]")
    num_classes = int(labels.max()) + 1
    scores, seconds, token_iterations = [], 0.0, 0.0
    for cls in range(num_classes):
        tic = time.perf_counter()
        binary = replace(train, labels=(labels == cls).astype(np.int64), label_names=None)
        result = fit(make_model(), binary, progress=False, **fit_kwargs)
        seconds += result.train_seconds
        token_iterations += result.token_iterations_per_second * result.train_seconds
        scores.append(predict(result, test, **(predict_kwargs or {})).scores[..., 0, :])
        if progress:
            print(f"[one-vs-all] class {cls + 1}/{num_classes} done in "
                  f"{time.perf_counter() - tic:.1f} s", file=sys.stderr, flush=True)
    return OneVsAllPrediction(np.asarray(scores), seconds, token_iterations / max(seconds, 1e-9))
