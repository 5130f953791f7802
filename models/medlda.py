"""Gibbs MedLDA: max-margin supervised topic model with the hinge loss (IG augmentation)."""

from __future__ import annotations

from functools import partial

from topiczoo.kernels.responses import Hinge
from topiczoo.models.spec import TopicModel
from topiczoo.models.supervised import supervised_lda_declaration


def medlda(num_topics: int, *, c: float = 1.0, ell: float = 164.0, alpha: float = 1.0,
           beta: float = 0.01, nu2: float = 1.0) -> TopicModel:
    """Binary Gibbs MedLDA, pseudo-likelihood exp(-2 c max(0, ell - y omega)), y in {0, 1}
    (coded -1/+1). Defaults are the JMLR paper's binary settings (c = 1, ell = 164, alpha = 1).
    """
    response = Hinge(c, ell)
    return TopicModel("medlda", num_topics, alpha, beta, nu2, response,
                      declaration=partial(supervised_lda_declaration, response=response))
