"""gSLDA: logistic supervised LDA with regularisation constant c (Polya-Gamma Gibbs)."""

from __future__ import annotations

from functools import partial

from topiczoo.models.parametric import TopicModel
from topiczoo.models.responses import Logistic
from topiczoo.models.lda import supervised_lda_declaration


def gslda(num_topics: int, *, c: float = 25.0, alpha: float = 1.0, beta: float = 0.01,
          nu2: float = 1.0) -> TopicModel:
    """Logistic sLDA, pseudo-likelihood (e^omega)^(c y) / (1 + e^omega)^c, y in {0, 1}.

    ``alpha`` is the papers' total concentration: theta_d ~ Dir(alpha / K). Defaults are the
    paper's (c = 1 is plain sLDA; c = 25 is the tuned "gSLDA+" of the binary experiments).
    With labels [D, L] of 0/1 it is the multi-label (multi-task) model, one eta per label.
    """
    response = Logistic(c)
    return TopicModel("gslda", num_topics, alpha, beta, nu2, response, ("binary", "multilabel"),
                      declaration=partial(supervised_lda_declaration, response=response))


def gslda_multitask(num_topics: int, num_classes: int | None = None, *, c: float = 1.0,
                    alpha: float = 1.0, beta: float = 0.01, nu2: float = 1.0) -> TopicModel:
    """Multi-task logistic sLDA for multi-class data: one logistic task per class (labels
    one-vs-all) on shared topic assignments, prediction argmax_t eta_t . zbar.
    ``num_classes``: L (default: the training corpus's number of classes)."""
    response = Logistic(c)
    return TopicModel("gslda-multitask", num_topics, alpha, beta, nu2, response, ("multiclass",),
                      num_classes, declaration=partial(supervised_lda_declaration,
                                                       response=response))
