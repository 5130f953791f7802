"""The papers' two-step baselines: an unsupervised topic model, then a linear model on the
training documents' topic proportions zbar, applied to the test documents' zbar.

* :func:`lda_svm_predict`: LDA, then a linear SVM (the sLDA / MedLDA papers' baseline);
* :func:`hdp_glm_predict`: the HDP, then a GLM (ridge or logistic regression; the sHDP
  paper's "2-step" baseline).

Both return the :class:`~topiczoo.predict.Prediction` every model returns, with one "snapshot"
and one "test draw" per chain (each chain has its own topic labels, so its own second step).
"""

from __future__ import annotations

import time

import numpy as np

from topiczoo.models.tasks import Task
from topiczoo.predict import Prediction


def lda_svm_predict(result, train, test, *, svm_c: float = 1.0, num_burnin: int = 20,
                    num_draws: int = 10, seed: int = 0, timing: dict | None = None) -> Prediction:
    """Fit a linear SVM per LDA chain on that chain's training zbar, score the test documents.

    Args:
      result: a fit of an unsupervised model (e.g. :func:`topiczoo.models.lda`) on ``train``.
      train, test: corpora in the same vocabulary; ``train.labels`` are binary class ids.
      svm_c: the SVM's cost (scikit-learn ``LinearSVC(C=svm_c)``).
      timing: if given, ``timing["fit_seconds"]`` receives the wall seconds of the second
        step's training (training zbar and the SVMs; the test chains are prediction).
    Training zbar comes from each chain's last state; test zbar is the mean over test draws of
    the last snapshot's test chain. Topic labels differ between chains, so each chain gets its
    own SVM and only decision values (label-invariant) are averaged. Returns a
    :class:`Prediction` with scores [C, 1, 1, 1, D]: the SVM decision values, one "snapshot"
    and "test draw" per chain (so ``sf`` is chain 0's SVM and ``ma`` their mean).
    """
    from sklearn.svm import LinearSVC

    task = Task.of(("binary",), train)
    labels = np.asarray(train.labels)
    test_zbar = _test_zbar(result, test, num_burnin, num_draws, seed)  # [C, D, K]
    decision, fit_seconds = [], 0.0
    for c in range(result.num_chains):
        tic = time.perf_counter()
        train_zbar = result.model.predictor().train_proportions(result.chain_state(c))
        svm = LinearSVC(C=svm_c, random_state=seed).fit(train_zbar, labels)
        fit_seconds += time.perf_counter() - tic
        decision.append(svm.decision_function(test_zbar[c]))
    if timing is not None:
        timing["fit_seconds"] = fit_seconds
    scores = np.asarray(decision, np.float32)[:, None, None, None, :]
    return Prediction(scores, task)


def _test_zbar(result, test, num_burnin, num_draws, seed):
    """Each chain's test zbar [C, D, K]: the mean over the kept draws of the last snapshot's
    test chain, the draws :func:`held_out_proportions` gives for that snapshot (same seed), but
    only that snapshot's: a nonparametric model's number of slots K may differ between
    snapshots (it grows), and the last snapshot is the chain's last state."""
    if tuple(test.vocabulary) != tuple(result.vocabulary):
        raise ValueError("the test corpus must be encoded in the training vocabulary; use "
                         "corpus.restrict_vocabulary(train.vocabulary)")
    last = len(result.snapshots) - 1
    if last < 0:
        raise ValueError("the fit kept no snapshots (num_snapshots=0 or no post-burn-in draws)")
    out = []
    for c in range(result.num_chains):
        host_seed = int(np.random.SeedSequence([seed, result.seed, c, last]).generate_state(1)[0])
        out.append(result.model.predictor().test_proportions(
            result.snapshots[last].chain(c), test, num_burnin=num_burnin, num_draws=num_draws,
            lag=1, seed=host_seed).mean(0))
    return np.asarray(out, np.float32)


def hdp_glm_predict(result, train, test, *, ridge: float | None = None,
                    logistic_c: float | None = None, num_burnin: int = 20, num_draws: int = 10,
                    seed: int = 0, timing: dict | None = None) -> Prediction:
    """Fit a GLM per HDP chain on that chain's training zbar, predict the test documents.

    Args:
      result: a fit of an unsupervised model (:func:`topiczoo.models.shdp.hdp`) on ``train``.
      train, test: corpora in the same vocabulary; ``train.labels`` real responses
        (regression) or binary class ids.
      ridge: regression: the L2 penalty of scikit-learn's ``Ridge(alpha=ridge)`` (with an
        intercept); None chooses it from 10^-4 .. 10^2 by leave-one-out on the training
        documents (``RidgeCV``).
      logistic_c: binary: the inverse penalty ``C`` of ``LogisticRegression``; None chooses
        it by 5-fold cross-validation on the training documents (``LogisticRegressionCV``).
      num_burnin, num_draws, seed: the test chains (as :func:`topiczoo.predict.predict`).
      timing: if given, ``timing["fit_seconds"]`` receives the wall seconds of the GLMs'
        training (training zbar, the fits and their cross-validation).
    Training zbar [D, K] is each chain's last state; test zbar the mean over test draws of
    the last snapshot's test chain, so K is the chain's number of topic slots (empty slots are
    0 columns, which the penalised fits give 0 weight). Returns a :class:`Prediction` with
    scores [C, 1, 1, 1, D]: predicted responses (regression) or log-odds (binary).
    """
    import warnings

    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV, Ridge, RidgeCV

    task = Task.of(("regression", "binary"), train)
    labels = np.asarray(train.labels)
    test_zbar = _test_zbar(result, test, num_burnin, num_draws, seed)
    scores, fit_seconds = [], 0.0
    for c in range(result.num_chains):
        tic = time.perf_counter()
        train_zbar = result.model.predictor().train_proportions(result.chain_state(c))
        if task.kind == "regression":
            glm = (RidgeCV(alphas=np.logspace(-4, 2, 13)) if ridge is None
                   else Ridge(alpha=ridge)).fit(train_zbar, labels)
        else:
            glm = (LogisticRegressionCV(Cs=10, cv=5, scoring="accuracy", max_iter=2000)
                   if logistic_c is None
                   else LogisticRegression(C=logistic_c, max_iter=2000))
            # scoring pinned to accuracy, scikit-learn's default until 1.10 (then log loss)
            with warnings.catch_warnings():  # scikit-learn's notices of future defaults
                warnings.simplefilter("ignore", FutureWarning)
                glm.fit(train_zbar, labels)
        fit_seconds += time.perf_counter() - tic
        scores.append(glm.predict(test_zbar[c]) if task.kind == "regression"
                      else glm.decision_function(test_zbar[c]))
    if timing is not None:
        timing["fit_seconds"] = fit_seconds
    return Prediction(np.asarray(scores, np.float32)[:, None, None, None, :], task)


#: The second steps of the registry's two-step entries (``ModelEntry.second_step``), by name.
SECOND_STEPS = {"linear-svm": lda_svm_predict, "glm": hdp_glm_predict}
