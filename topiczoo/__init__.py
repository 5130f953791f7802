"""topiczoo: supervised topic models with exact MCMC on numpyro.

Quick start::

    from topiczoo import load_dataset, medlda, fit, predict
    data = load_dataset("bbc")                      # business vs politics, embedded
    result = fit(medlda(20), data.train, num_chains=4, num_iterations=100)
    print(predict(result, data.test).accuracy(data.test.labels))
"""

from topiczoo.corpus import Corpus
from topiczoo.datasets import DATASETS, load_dataset, load_folds
from topiczoo.errors import ConvergenceWarning, DataLossWarning, InputError, InputTypeError
from topiczoo.fit import FitResult, fit
from topiczoo.models import (REGISTRY, gslda, gslda_multitask, lda, medlda, medlda_multitask,
                             medlda_regression, slda_gaussian, unigram_mixture)
from topiczoo.predict import Prediction, predict
from topiczoo.run import fit_and_predict

__version__ = "0.1.0"
__all__ = ["DATASETS", "REGISTRY", "ConvergenceWarning", "Corpus", "DataLossWarning",
           "FitResult", "InputError", "InputTypeError", "Prediction", "fit",
           "fit_and_predict", "gslda", "gslda_multitask", "lda", "load_dataset",
           "load_folds", "medlda", "medlda_multitask", "medlda_regression", "predict",
           "slda_gaussian", "unigram_mixture"]
