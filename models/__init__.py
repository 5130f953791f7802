"""Model families: numpyro declarations, their samplers, tasks and the registry of names.

The parametric family (``models.parametric``): LDA, gSLDA, Gibbs MedLDA (classification,
regression, multi-task), Gaussian sLDA. The supervised HDP (``models.shdp``). The mixture of
unigrams (``models.unigram_mixture``): one topic per document. What every supervised family
shares (``models.supervised``), responses in Gaussian form (``models.responses``), tasks
(``models.tasks``), the names of the label-invariant monitors (``models.monitors``), and every
named model (``models.registry.REGISTRY``).
"""

from topiczoo.models.family import ModelFamily, Predictor
from topiczoo.models.gslda import gslda, gslda_multitask
from topiczoo.models.lda import lda, lda_declaration, supervised_lda_declaration
from topiczoo.models.medlda import medlda, medlda_multitask, medlda_regression
from topiczoo.models.parametric import ParametricState, TopicModel
from topiczoo.models.registry import REGISTRY, ModelEntry
from topiczoo.models.shdp import SHDPModel
from topiczoo.models.slda_gaussian import slda_gaussian
from topiczoo.models.tasks import Task
from topiczoo.models.unigram_mixture import (UnigramMixture, unigram_mixture,
                                             unigram_mixture_declaration)

__all__ = ["REGISTRY", "ModelEntry", "ModelFamily", "ParametricState", "Predictor", "SHDPModel",
           "Task", "TopicModel", "UnigramMixture", "gslda", "gslda_multitask", "lda",
           "lda_declaration", "medlda", "medlda_multitask", "medlda_regression",
           "slda_gaussian", "supervised_lda_declaration", "unigram_mixture",
           "unigram_mixture_declaration"]
