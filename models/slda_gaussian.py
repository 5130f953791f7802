"""Gaussian supervised LDA: y ~ N(eta . zbar, s2), s2 fixed or drawn (inverse gamma)."""

from __future__ import annotations

from functools import partial

from topiczoo.models.parametric import TopicModel
from topiczoo.models.responses import Gaussian
from topiczoo.models.lda import supervised_lda_declaration


def slda_gaussian(num_topics: int, *, s2: float = 1.0, learn_s2: bool = True, a0: float = 1.0,
                  b0: float = 0.01, alpha: float = 1.0, beta: float = 0.01,
                  nu2: float = 1.0, center: bool = True) -> TopicModel:
    """sLDA with a Gaussian response (a proper generative model).

    s2: the noise variance, or its start value when ``learn_s2``; then s2 ~ IG(a0, b0) a priori
    and is drawn from its inverse-gamma conditional every sweep. ``center``: fit
    y - mean(y_train) and add the mean back to predictions (omega has no intercept).
    """
    response = Gaussian(s2, learn_s2, a0, b0)
    return TopicModel("slda-gaussian", num_topics, alpha, beta, nu2, response, ("regression",),
                      center=center,
                      declaration=partial(supervised_lda_declaration, response=response))
