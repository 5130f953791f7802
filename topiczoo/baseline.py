"""The papers' two-step baseline: unsupervised LDA, then a linear SVM on topic proportions."""

from __future__ import annotations

import numpy as np

from topiczoo.models.tasks import Task
from topiczoo.predict import Prediction, held_out_proportions


def lda_svm_predict(result, train, test, *, svm_c: float = 1.0, num_burnin: int = 20,
                    num_draws: int = 10, seed: int = 0) -> Prediction:
    """Fit a linear SVM per LDA chain on that chain's training zbar, score the test documents.

    Args:
      result: a fit of an unsupervised model (e.g. :func:`topiczoo.models.lda`) on ``train``.
      train, test: corpora in the same vocabulary; ``train.labels`` are binary class ids.
      svm_c: the SVM's cost (scikit-learn ``LinearSVC(C=svm_c)``).
    Training zbar comes from each chain's last state; test zbar is the mean over test draws of
    the last snapshot's test chain. Topic labels differ between chains, so each chain gets its
    own SVM and only decision values (label-invariant) are averaged. Returns a
    :class:`Prediction` with scores [C, 1, 1, 1, D]: the SVM decision values, one "snapshot"
    and "test draw" per chain (so ``sf`` is chain 0's SVM and ``ma`` their mean).
    """
    from sklearn.svm import LinearSVC

    task = Task.of(("binary",), train)
    labels = np.asarray(train.labels)
    test_zbar = held_out_proportions(result, test, num_burnin=num_burnin, num_draws=num_draws,
                                     seed=seed)[:, -1].mean(1)  # [C, D, K]
    decision = []
    for c in range(result.num_chains):
        train_zbar = result.model.train_proportions(result.chain_state(c))
        svm = LinearSVC(C=svm_c, random_state=seed).fit(train_zbar, labels)
        decision.append(svm.decision_function(test_zbar[c]))
    scores = np.asarray(decision, np.float32)[:, None, None, None, :]
    return Prediction(scores, task)
