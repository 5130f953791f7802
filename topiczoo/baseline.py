"""The papers' two-step baseline: unsupervised LDA, then a linear SVM on topic proportions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topiczoo.predict import held_out_proportions


@dataclass
class TwoStepPrediction:
    """SVM decision values of test documents, one row per LDA chain: float [C, D]."""

    decision: np.ndarray

    def labels(self) -> np.ndarray:
        """Predicted 0/1 labels [D]: sign of the chain-averaged decision value."""
        return (self.decision.mean(0) > 0).astype(np.int64)

    def accuracy(self, labels) -> float:
        return float(np.mean(self.labels() == np.asarray(labels)))


def lda_svm_predict(result, train, test, *, svm_c: float = 1.0, num_burnin: int = 20,
                    num_draws: int = 10, seed: int = 0) -> TwoStepPrediction:
    """Fit a linear SVM per LDA chain on that chain's training zbar, score the test documents.

    Args:
      result: a fit of :func:`topiczoo.models.lda` on ``train`` (unsupervised).
      train, test: corpora in the same vocabulary; ``train.labels`` are 0/1.
      svm_c: the SVM's cost (scikit-learn ``LinearSVC(C=svm_c)``).
    Training zbar comes from each chain's last state; test zbar is the mean over test draws of
    the last snapshot's test chain. Topic labels differ between chains, so each chain gets its
    own SVM and only decision values (label-invariant) are averaged.
    """
    from sklearn.svm import LinearSVC

    labels = np.asarray(train.labels)
    if not np.isin(labels, (0, 1)).all():
        raise ValueError("lda-svm here is binary: labels must be 0/1")
    n_dk = np.asarray(result.state.topics.n_dk, np.float64)  # [C, D, K]
    train_zbar = n_dk / n_dk.sum(-1, keepdims=True)
    test_zbar = held_out_proportions(result, test, num_burnin=num_burnin, num_draws=num_draws,
                                     seed=seed)[:, -1].mean(1)  # [C, D, K]
    decision = []
    for c in range(result.num_chains):
        svm = LinearSVC(C=svm_c, random_state=seed).fit(train_zbar[c], labels)
        decision.append(svm.decision_function(test_zbar[c]))
    return TwoStepPrediction(np.asarray(decision))
