"""Model declarations (numpyro) and specs: LDA, gSLDA, Gibbs MedLDA."""

from topiczoo.models.gslda import gslda
from topiczoo.models.lda import lda, lda_declaration
from topiczoo.models.medlda import medlda
from topiczoo.models.spec import TopicModel
from topiczoo.models.supervised import supervised_lda_declaration

MODELS = {"lda": lda, "gslda": gslda, "medlda": medlda}

__all__ = ["MODELS", "TopicModel", "gslda", "lda", "lda_declaration", "medlda",
           "supervised_lda_declaration"]
