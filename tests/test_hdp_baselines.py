"""The sHDP paper's baselines as registry models: the two-step HDP + GLM (``hdp-glm``) and the
MAP-coefficient sHDP (``shdp-map``). Each runs end to end through ``fit_and_predict`` on a small
synthetic corpus with learnable labels and beats a constant predictor; the MAP block's eta is
the MAP (the posterior's gradient vanishes there)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from topiczoo import Corpus, fit_and_predict
from topiczoo.kernels import hdp as khdp
from topiczoo.models import REGISTRY
from topiczoo.models.shdp import shdp_map
from topiczoo.models.supervised import corpus_data

FIT = dict(num_chains=2, num_iterations=30, num_burnin=15, num_snapshots=2, seed=0)
PREDICT = dict(num_burnin=5, num_draws=3)


def _corpus(num_docs, seed):
    """Two topics on disjoint halves of 10 words; document d mixes them by theta_d ~ U(0, 1),
    30 tokens. Labels: theta_d (regression) and theta_d > 1/2 (binary)."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 1.0, num_docs)
    docs = []
    for t in theta:
        first = rng.random(30) < t
        docs.append(np.where(first, rng.integers(0, 5, 30), rng.integers(5, 10, 30)))
    words = np.concatenate(docs).astype(np.int32)
    offsets = np.arange(num_docs + 1, dtype=np.int64) * 30
    vocab = tuple(f"w{i}" for i in range(10))
    return (Corpus(words, offsets, vocab, labels=theta),
            Corpus(words, offsets, vocab, labels=(theta > 0.5).astype(np.int64)))


def _run(name, kind, options=None):
    train = _corpus(60, 1)[kind]
    test = _corpus(40, 2)[kind]
    run = fit_and_predict(REGISTRY[name], 2, train, test, options=options, progress=False,
                          fit_kwargs=FIT, predict_kwargs=PREDICT)
    return run, train, test


@pytest.mark.parametrize("name", ["hdp-glm", "shdp-map"])
def test_regression_beats_a_constant(name):
    run, train, test = _run(name, 0)
    r2 = run.prediction.metrics(test.labels)["predictive_r2"]
    # the constant predictor (the training mean) has R^2 <= 0 up to the test mean's offset
    constant = 1 - np.sum((test.labels - train.labels.mean()) ** 2) / np.sum(
        (test.labels - test.labels.mean()) ** 2)
    assert constant < 0.05
    assert r2 > 0.6, r2
    assert run.prediction.scores.shape[-1] == test.num_docs


@pytest.mark.parametrize("name, options", [("hdp-glm", None),
                                           ("shdp-map", {"response": "logistic"})])
def test_binary_beats_a_constant(name, options):
    run, train, test = _run(name, 1, options)
    accuracy = run.prediction.accuracy(test.labels)
    majority = max(np.mean(test.labels), 1 - np.mean(test.labels))
    assert accuracy > majority + 0.2, (accuracy, majority)


def _state_with_topics(data, num_topics, capacity, response, seed):
    """A start state with tokens spread over ``num_topics`` of ``capacity`` slots."""
    state = khdp.init_state(jax.random.PRNGKey(seed), data, 10, capacity, response,
                            init_topics=num_topics)
    return state._replace(eta=jnp.zeros_like(state.eta))


def _zbar(state, data):
    n_dk = np.asarray(state.n_dk, np.float64)
    return n_dk / n_dk.sum(1, keepdims=True)


@pytest.mark.parametrize("response", ["gaussian", "logistic"])
def test_map_block_sets_eta_to_the_map(response):
    kind = 0 if response == "gaussian" else 1
    corpus = _corpus(40, 3)[kind]
    noise = dict(learn_s2=False, s2=0.05) if response == "gaussian" else {}
    model = shdp_map(3, response=response, nu2=4.0, **noise)
    data = corpus_data(model, corpus)
    state = _state_with_topics(data, 3, 6, model.response, 0)
    out = khdp.eta_map_block(None, state, data, model.response, nu2=model.nu2)
    occupied = np.asarray(state.n_k) > 0
    eta = np.asarray(out.eta, np.float64)[0]
    assert np.all(eta[~occupied] == 0)
    zbar = _zbar(state, data)[:, occupied]
    y = np.asarray(data.y, np.float64)[0]
    omega = zbar @ eta[occupied]
    # gradient of log N(eta; 0, nu2) + the response's log-likelihood over the occupied topics
    if response == "gaussian":
        residual = (y - omega) / 0.05
    else:
        residual = y - 1 / (1 + np.exp(-omega))
    gradient = zbar.T @ residual - eta[occupied] / model.nu2
    # measured 1e-7 .. 3e-7 (eta in float32); a single Newton step (from 0) leaves 1.5e-3
    assert np.max(np.abs(gradient)) < 1e-5, gradient
    assert np.max(np.abs(eta[occupied])) > 0.1  # not the prior's mode


def test_map_needs_a_response_with_a_map():
    with pytest.raises(ValueError, match="response must be"):
        shdp_map(3, response="hinge")
    with pytest.raises(ValueError, match="response='gaussian' takes s2"):
        shdp_map(3, c=5.0)
    with pytest.raises(ValueError, match="response='logistic' takes c"):
        shdp_map(3, response="logistic", s2=0.5)
    from dataclasses import replace

    from topiczoo.models.shdp import shdp_hinge
    with pytest.raises(ValueError, match="MAP of eta is implemented"):
        replace(shdp_hinge(3), eta_map=True)


def test_hdp_glm_with_snapshots_of_different_capacities():
    """The sHDP's slots grow during a run, so its snapshots may differ in K; the two-step
    baseline reads the last snapshot only (whose slots are those of the chains' last states):
    an earlier snapshot with more (empty) slots changes nothing."""
    from dataclasses import replace

    from topiczoo import fit
    from topiczoo.baseline import hdp_glm_predict
    from topiczoo.fit import Snapshot
    from topiczoo.models.shdp import hdp

    train, test = _corpus(60, 1)[0], _corpus(40, 2)[0]
    result = fit(hdp(2), train, num_chains=2, num_iterations=4, num_burnin=0, num_snapshots=2,
                 seed=0, progress=False)
    first = result.snapshots[0]
    wide = Snapshot(first.iteration, {
        name: np.concatenate([a, np.zeros(a.shape[:-1] + (8,), a.dtype)], -1)
        if np.ndim(a) >= 2 else a for name, a in first.arrays.items()})
    grown = replace(result, snapshots=[wide, *result.snapshots[1:]])
    kwargs = dict(ridge=1e-3, num_burnin=2, num_draws=2)
    expected = hdp_glm_predict(result, train, test, **kwargs)
    got = hdp_glm_predict(grown, train, test, **kwargs)
    assert got.scores.shape == (2, 1, 1, 1, test.num_docs)
    np.testing.assert_array_equal(got.scores, expected.scores)
