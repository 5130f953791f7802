"""Model declarations (numpyro) and specs: LDA, gSLDA, Gibbs MedLDA, Gaussian sLDA."""

from topiczoo.models.gslda import gslda, gslda_multitask
from topiczoo.models.lda import lda, lda_declaration
from topiczoo.models.medlda import medlda, medlda_multitask, medlda_regression
from topiczoo.models.slda_gaussian import slda_gaussian
from topiczoo.models.spec import TopicModel
from topiczoo.models.supervised import supervised_lda_declaration

__all__ = ["TopicModel", "gslda", "gslda_multitask", "lda", "lda_declaration", "medlda",
           "medlda_multitask", "medlda_regression", "slda_gaussian",
           "supervised_lda_declaration"]
