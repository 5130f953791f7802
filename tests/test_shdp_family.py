"""The sHDP through the sampler contract: fit grows the capacity by redoing the chunk, so the
draws equal those of a run started with a large capacity; checkpoints resume across growth.
And the relative settings of the regression responses (the sHDP's defaults, and MedLDA
regression's c): per spread of the responses, so a change of units changes no draw."""

from dataclasses import replace

import numpy as np
import pytest

from chains import interrupt_at, small_corpus
from topiczoo import Corpus, fit
from topiczoo.models import medlda_regression
from topiczoo.models.shdp import C_PER_SD, shdp_gaussian, shdp_regression


def _corpus():
    c = small_corpus()
    return Corpus(c.words, c.doc_offsets, c.vocabulary, labels=np.linspace(-1.0, 1.0, 12))


KW = dict(num_chains=2, num_iterations=8, num_burnin=4, num_snapshots=2, chunk=2,
          progress=False, seed=4)


def test_growing_capacity_gives_the_draws_of_a_large_capacity():
    small = fit(replace(shdp_gaussian(1), capacity=1), _corpus(), **KW)
    large = fit(replace(shdp_gaussian(1), capacity=64), _corpus(), **KW)
    assert small.state.state.n_k.shape[-1] > 1, "the run should have grown"
    assert int(np.max(small.draws["num_topics"])) > 1
    # the chain is the same; a monitor summed over more (zero) slots may round differently
    for name in large.draws:
        np.testing.assert_allclose(small.draws[name], large.draws[name], rtol=1e-6, atol=0,
                                   err_msg=name)
    for name in ("num_topics", "num_tables", "alpha", "gamma", "beta_new"):
        np.testing.assert_array_equal(small.draws[name], large.draws[name], err_msg=name)
    np.testing.assert_array_equal(small.state.state.z, large.state.state.z)
    k = small.state.state.n_k.shape[-1]
    np.testing.assert_array_equal(small.state.state.eta, large.state.state.eta[..., :k])


def test_checkpoint_resumes_across_growth(tmp_path):
    model = replace(shdp_gaussian(1), capacity=1)
    straight = fit(model, _corpus(), **KW)
    path = tmp_path / "ckpt.npz"
    with pytest.raises(KeyboardInterrupt):
        fit(model, _corpus(), checkpoint=path, callback=interrupt_at(4), **KW)
    resumed = fit(model, _corpus(), checkpoint=path, **KW)
    for name in straight.draws:
        np.testing.assert_array_equal(resumed.draws[name], straight.draws[name], err_msg=name)


def test_default_gaussian_s2_is_a_quarter_of_the_training_variance():
    # the default shdp-gaussian fixes s2 = S2_FRACTION x var(y) of the (centred) training
    # responses: every draw's s2 is that value, on any rating scale
    from topiczoo.models.shdp import S2_FRACTION

    corpus = _corpus()
    for scale in (1.0, 40.0):
        labels = scale * corpus.labels
        run = fit(shdp_gaussian(2), Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary,
                                           labels=labels),
                  num_chains=1, num_iterations=3, num_burnin=1, num_snapshots=1,
                  progress=False, seed=0)
        np.testing.assert_allclose(run.draws["augmentation_mean"],
                                   S2_FRACTION * np.var(labels), rtol=1e-5)


@pytest.mark.parametrize("setting, model", [("s2", shdp_gaussian), ("c", shdp_regression),
                                            ("c", medlda_regression)])
def test_a_relative_setting_needs_responses_that_vary(setting, model):
    # the defaults of all three: s2 a quarter of var(y), c 3 (10 for MedLDA) per sd(y)
    corpus = _corpus()
    flat = Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary,
                  labels=np.full(corpus.num_docs, 0.5))
    with pytest.raises(ValueError, match=f"relative {setting} .*vary"):
        fit(model(2), flat, num_chains=1, num_iterations=2, progress=False)


@pytest.mark.parametrize("family", ["shdp-regression", "medlda-regression"])
def test_default_regression_cost_is_per_sd_so_a_change_of_units_changes_no_draw(family):
    # the default c of shdp-regression and medlda-regression is C_PER_SD / sd(y) (3 and 10):
    # with the responses doubled (and eps doubled, nu2 quadrupled: eta doubles) every product
    # the chain forms is the same, so the topics (the sHDP's concentrations too) and the loss
    # are drawn bit for bit alike and eta doubles. An absolute c (the same number on both
    # scales) changes the draws.
    from topiczoo.models.medlda import C_PER_SD as MEDLDA_C_PER_SD
    from topiczoo.models.responses import EpsilonInsensitive

    make, per_sd, monitors = {
        "shdp-regression": (shdp_regression, C_PER_SD,
                            ("log_likelihood", "num_topics", "alpha", "gamma", "train_loss")),
        "medlda-regression": (medlda_regression, MEDLDA_C_PER_SD,
                              ("log_likelihood", "train_loss")),
    }[family]
    corpus = _corpus()

    def run(scale, model):
        labels = scale * corpus.labels
        return fit(model, Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary,
                                 labels=labels), **KW)

    default = make(2, eps=0.05, nu2=1.0)
    assert default.response == EpsilonInsensitive(per_sd, 0.05, relative=True)
    one, two = run(1.0, default), run(2.0, make(2, eps=0.1, nu2=4.0))
    for name in monitors:
        np.testing.assert_array_equal(one.draws[name], two.draws[name], err_msg=name)
    np.testing.assert_array_equal(one.state.state.z, two.state.state.z)
    np.testing.assert_array_equal(2 * one.state.state.eta, two.state.state.eta)
    absolute = run(2.0, make(2, c=per_sd / np.std(corpus.labels), eps=0.1, nu2=4.0))
    assert not np.array_equal(one.draws["log_likelihood"], absolute.draws["log_likelihood"])


def test_the_registry_says_a_relative_setting_in_response_units():
    # what summary.json and compare's cells record: the value in force on the training
    # responses, and for a learned s2 only its start (the draws say what it became)
    from topiczoo.models import REGISTRY

    corpus = _corpus()
    labels = np.asarray(corpus.labels, np.float32)
    facts = REGISTRY["shdp-regression"].hyperparameters(3, corpus)
    assert facts["c"] == C_PER_SD and facts["relative"] is True
    assert facts["c_in_force"] == pytest.approx(C_PER_SD / np.std(labels), rel=1e-6)
    assert "c_in_force" not in REGISTRY["shdp-regression"].hyperparameters(3, corpus, c=2.0)
    fixed = REGISTRY["shdp-gaussian"].hyperparameters(3, corpus)
    assert fixed["noise_variance"] == pytest.approx(0.25 * np.var(labels), rel=1e-6)
    learned = REGISTRY["shdp-gaussian"].hyperparameters(3, corpus, learn_s2=True)
    assert "noise_variance" not in learned
    assert learned["noise_variance_start"] == pytest.approx(0.25 * np.var(labels), rel=1e-6)
