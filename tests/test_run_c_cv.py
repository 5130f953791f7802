"""``fit_and_predict(entry, K, train, test, options={"c": "cv"})``: c chosen by
cross-validation on the training set, as ``--c cv`` and the estimators' ``c="cv"`` do."""

import numpy as np
import pytest

from topiczoo.corpus import Corpus
from topiczoo.models.registry import REGISTRY
from topiczoo.run import fit_and_predict
from topiczoo.tuning import choose_c

RUN = dict(fit_kwargs=dict(num_chains=1, num_iterations=4, num_snapshots=2, seed=2),
           predict_kwargs=dict(num_burnin=1, num_draws=2, seed=2))


def _ratings(num_docs=32, seed=0):
    """Two topics over 8 words; the rating is the share of the first topic's words."""
    rng = np.random.default_rng(seed)
    share = rng.uniform(0, 1, num_docs)
    phi = np.zeros((2, 8))
    phi[0, :4], phi[1, 4:] = 0.25, 0.25
    counts = np.stack([rng.multinomial(12, s * phi[0] + (1 - s) * phi[1]) for s in share])
    corpus = Corpus.from_document_term(counts, [f"w{i}" for i in range(8)], share)
    return corpus.subset(np.arange(24)), corpus.subset(np.arange(24, num_docs))


def test_c_cv_in_fit_and_predict_is_the_search_then_the_fit_with_its_c():
    train, test = _ratings()
    entry = REGISTRY["medlda-regression"]
    tuning = dict(grid=[1.0, 64.0], num_folds=2)
    run = fit_and_predict(entry, 2, train, test, options={"c": "cv"}, tuning=tuning,
                          progress=False, **RUN)
    search = choose_c(entry, 2, train, seed=2, **tuning, **RUN)
    np.testing.assert_array_equal(run.tuning.scores, search.scores)
    assert run.result.model.response.c == search.best_c
    fixed = fit_and_predict(entry, 2, train, test, options={"c": search.best_c},
                            progress=False, **RUN)
    np.testing.assert_array_equal(run.prediction.scores, fixed.prediction.scores)
    assert fixed.tuning is None


def test_tuning_settings_without_c_cv_are_refused():
    train, test = _ratings()
    with pytest.raises(ValueError, match="give options={'c': 'cv'}"):
        fit_and_predict(REGISTRY["medlda-regression"], 2, train, test,
                        tuning={"num_folds": 2}, progress=False, **RUN)
