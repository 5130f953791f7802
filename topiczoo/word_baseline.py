"""The word baseline of every comparison: a linear model on the tf-idf of the words.

How far are the topic models from a plain linear model on the words themselves? Every
``topiczoo compare`` table has a row for it, per data set: scikit-learn's
``TfidfTransformer`` (its defaults: smoothed idf, l2-normalised rows) on the training
documents' word counts, then, by task,

* binary: logistic regression (``LogisticRegressionCV``),
* multi-class: one-vs-rest logistic regressions (``OneVsRestClassifier`` of
  ``LogisticRegressionCV``: each class its own regularisation), predicting the class of the
  largest score,
* multi-label: one-vs-rest logistic regressions, one per label,
* regression: ridge regression (``RidgeCV``),

its regularisation chosen by cross-validation on the training set alone (logistic: C from 10
values, 1e-4 to 1e4, by stratified :data:`FOLDS`-fold cross-validated accuracy; ridge: alpha
from :data:`RIDGE_ALPHAS` by efficient leave-one-out), scored on the test documents with the
topic models' metrics (:func:`topiczoo.metrics.evaluate`). Nothing is random: no seed.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp

from topiczoo.metrics import evaluate

__all__ = ["FOLDS", "RIDGE_ALPHAS", "baseline_name", "counts_matrix", "word_baseline",
           "word_pipeline"]

#: Folds of the logistic models' cross-validation of C (stratified, in document order).
FOLDS = 5
#: The ridge penalties tried (efficient leave-one-out): 1e-3 .. 1e3, two per decade.
RIDGE_ALPHAS = tuple(float(a) for a in np.logspace(-3, 3, 13))
#: Each logistic model's iterations (lbfgs): enough for tf-idf rows of a few thousand words.
MAX_ITER = 2000

#: The row's name in a comparison table, by task kind.
NAMES = {"binary": "words: tf-idf + logistic", "multiclass": "words: tf-idf + one-vs-rest logistic",
         "multilabel": "words: tf-idf + one-vs-rest logistic",
         "regression": "words: tf-idf + ridge"}


def baseline_name(kind: str) -> str:
    """The table's name of the baseline of a task kind (``binary``, ``multiclass``,
    ``multilabel``, ``regression``)."""
    return NAMES[kind]


def counts_matrix(corpus) -> sp.csr_matrix:
    """The corpus's document-term counts as a sparse float64 ``[D, V]`` matrix (its own
    vocabulary's columns)."""
    ones = np.ones(corpus.num_tokens, np.float64)
    return sp.csr_matrix((ones, (corpus.doc_ids, corpus.words)),
                         shape=(corpus.num_docs, corpus.vocab_size))


def word_pipeline(kind: str):
    """The unfitted scikit-learn pipeline of the baseline of a task kind (see the module
    docstring): ``TfidfTransformer()`` then the linear model."""
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegressionCV, RidgeCV
    from sklearn.model_selection import StratifiedKFold
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline

    if kind == "regression":
        model = RidgeCV(alphas=RIDGE_ALPHAS)
    else:
        logistic = LogisticRegressionCV(Cs=10, cv=StratifiedKFold(FOLDS), scoring="accuracy",
                                        max_iter=MAX_ITER)
        if kind == "binary":
            model = logistic
        elif kind in ("multiclass", "multilabel"):
            model = OneVsRestClassifier(logistic)
        else:
            raise ValueError(f"no word baseline for task kind {kind!r}")
    return make_pipeline(TfidfTransformer(), model)


def word_baseline(train, test, kind: str | None = None) -> dict:
    """Fit the word baseline on ``train`` and score ``test`` (corpora in one vocabulary, with
    labels).

    Returns ``{"model": the row's name, "task": kind, "metrics": {metric: value} (as the
    topic models': accuracy; predictive_r2 and mse; micro / macro precision, recall, f1),
    "regularisation": {"C": [...]} (logistic: the C chosen, one per class or label) or
    {"alpha": a} (ridge), "train_seconds": s, "predict_seconds": s}``.
    """
    if tuple(test.vocabulary) != tuple(train.vocabulary):
        raise ValueError("the test corpus must be encoded in the training vocabulary; use "
                         "corpus.restrict_vocabulary(train.vocabulary)")
    kind = kind or train.label_kind
    if kind is None:
        raise ValueError("the word baseline needs a training corpus with labels")
    X_train, X_test = counts_matrix(train), counts_matrix(test)
    y_train = np.asarray(train.labels)
    pipeline = word_pipeline(kind)
    tic = time.perf_counter()
    with warnings.catch_warnings():  # scikit-learn's notices of its future defaults
        warnings.simplefilter("ignore", FutureWarning)
        pipeline.fit(X_train, y_train)
    train_seconds = time.perf_counter() - tic
    tic = time.perf_counter()
    predicted = pipeline.predict(X_test)
    predict_seconds = time.perf_counter() - tic
    model = pipeline[-1]
    if kind == "regression":
        chosen = {"alpha": float(model.alpha_)}
    elif kind == "binary":
        chosen = {"C": [float(np.ravel(model.C_)[0])]}
    else:
        chosen = {"C": [float(np.ravel(e.C_)[0]) for e in model.estimators_]}
    return {"model": baseline_name(kind), "task": kind,
            "metrics": evaluate(kind, np.asarray(test.labels), predicted),
            "regularisation": chosen, "train_seconds": train_seconds,
            "predict_seconds": predict_seconds}
