"""topiczoo: supervised topic models with exact MCMC on numpyro.

Quick start::

    from topiczoo import load_dataset, medlda, fit, predict
    data = load_dataset("bbc")                      # business vs politics, embedded
    result = fit(medlda(20), data.train, num_chains=4, num_iterations=100)
    print(predict(result, data.test).accuracy(data.test.labels))
"""

from topiczoo.corpus import Corpus
from topiczoo.datasets import DATASETS, load_dataset
from topiczoo.errors import DataLossWarning, InputError, InputTypeError
from topiczoo.fit import FitResult, fit
from topiczoo.models import gslda, lda, medlda
from topiczoo.predict import Prediction, predict

__version__ = "0.1.0"
__all__ = ["DATASETS", "Corpus", "DataLossWarning", "FitResult", "InputError", "InputTypeError",
           "Prediction", "fit", "gslda", "lda", "load_dataset", "medlda", "predict"]
