"""Gibbs MedLDA: max-margin supervised topic models (hinge loss for classification, the
epsilon-insensitive loss for regression), by inverse-Gaussian augmentation (JMLR paper)."""

from __future__ import annotations

from functools import partial

from topiczoo.models.parametric import TopicModel
from topiczoo.models.responses import EpsilonInsensitive, Hinge
from topiczoo.models.lda import supervised_lda_declaration


def _model(name, num_topics, response, tasks, alpha, beta, nu2, num_classes=None,
           center=False):
    return TopicModel(name, num_topics, alpha, beta, nu2, response, tasks, num_classes,
                      center,
                      declaration=partial(supervised_lda_declaration, response=response))


def medlda(num_topics: int, *, c: float = 1.0, ell: float = 164.0, alpha: float = 1.0,
           beta: float = 0.01, nu2: float = 1.0) -> TopicModel:
    """Binary Gibbs MedLDA, pseudo-likelihood exp(-2 c max(0, ell - y omega)), y in {0, 1}
    (coded -1/+1). Defaults are the JMLR paper's binary settings (c = 1, ell = 164, alpha = 1).
    With labels [D, L] of 0/1 it is the multi-label (multi-task) model, one eta per label.
    """
    return _model("medlda", num_topics, Hinge(c, ell), ("binary", "multilabel"), alpha, beta,
                  nu2)


def medlda_multitask(num_topics: int, num_classes: int | None = None, *, c: float = 1.0,
                     ell: float = 64.0, alpha: float = 1.0, beta: float = 0.01,
                     nu2: float = 1.0) -> TopicModel:
    """Multi-task Gibbs MedLDA for multi-class data (JMLR section 5.2): one binary hinge task
    per class on shared topic assignments, prediction argmax_t eta_t . zbar. Defaults: the
    paper's multi-class settings (c = 1, ell = 64, alpha = 1). ``num_classes``: L (default:
    the training corpus's number of classes)."""
    return _model("medlda-multitask", num_topics, Hinge(c, ell), ("multiclass",), alpha, beta,
                  nu2, num_classes)


#: MedLDA regression's default cost, per standard deviation of the training responses
#: (``medlda_regression``; measured in ``studies/results/medlda_regression_default_c.md``).
C_PER_SD = 10.0


def medlda_regression(num_topics: int, *, c: float | None = None, eps: float = 1e-3,
                      alpha: float = 1.0, beta: float = 0.01, nu2: float = 1.0,
                      center: bool = True) -> TopicModel:
    """Gibbs MedLDA regression: pseudo-likelihood exp(-2 c max(0, |y - omega| - eps)) (JMLR
    section 5.1; the paper used eps = 1e-3 and chose c by cross-validation). ``center``: fit
    y - mean(y_train) and add the mean back to predictions (omega has no intercept).

    c: the cost, in 1 / response units. None (the default): ``C_PER_SD`` = 10 per standard
    deviation of the training responses, c = 10 / sd(y) (``EpsilonInsensitive(relative=True)``;
    a fit's summary says its value, ``c_in_force``), so the default means the same on any
    rating scale; ``"cv"`` in the estimators and ``--c cv`` choose an absolute c by
    cross-validation. ``eps`` (response units) and ``nu2`` do not follow the scale. Why 10: on
    movie-scale (a validation split of fold 0's training documents, 2 chains x 100
    iterations), with ratings in [0, 1] (sd 0.18) and as log ratings (the sHDP paper's
    preprocessing, sd 0.34), at K = 10 and 50, c = 3, 10, 30, 100 per sd gave validation
    predictive R^2 0.431, 0.445, 0.414, 0.345 on average over the four, 10 per sd best or
    within 0.023 of the best in each; the old fixed default c = 1 gave 0.18-0.29.
    """
    response = (EpsilonInsensitive(C_PER_SD, eps, relative=True) if c is None
                else EpsilonInsensitive(c, eps))
    return _model("medlda-regression", num_topics, response, ("regression",), alpha, beta,
                  nu2, center=center)
