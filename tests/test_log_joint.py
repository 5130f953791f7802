"""The ``log_joint`` monitor against a brute-force computation from the chain's state.

For every family and response, a few Gibbs cycles on a tiny corpus leave a state with eta, the
augmentation, s2, the stick weights and the concentrations drawn; its ``log_joint`` monitor
must equal what is computed here from that state with plain Python and scipy, sharing nothing
with the package's formulas: the collapsed terms (words given topics, topics given alpha, and
the sHDP's documents given the stick weights) as Polya urns, token by token, rather than as
ratios of gamma functions; eta's prior and each response's ORIGINAL, un-augmented
(pseudo-)likelihood written out from the papers. A log joint without its p(Z | alpha) term
(planted) fails.
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from scipy import stats

import topiczoo.models.parametric as parametric
from topiczoo.kernels.gibbs import init_chain, step_chain
from topiczoo.models import REGISTRY
from topiczoo.models.supervised import corpus_data, task_of
from draw_digests import BINARY, CLASSES, MULTILABEL, RATINGS, _corpus

K = 3
NUM_STEPS = 4

# name -> (registry model, options, labels, sampler)
CASES = {
    "lda": ("lda", {}, None, "exact"),
    "lda/light": ("lda", {}, None, "light:z_draw=mh"),
    "gslda": ("gslda", {"c": 2.0, "nu2": 2.0}, BINARY, "exact"),
    "gslda/light": ("gslda", {"c": 2.0}, BINARY, "light:z_draw=mh"),
    "gslda/parallel": ("gslda", {"c": 2.0}, BINARY, "parallel"),
    "medlda": ("medlda", {"c": 2.0, "ell": 2.0}, BINARY, "exact"),
    "medlda-multilabel": ("medlda", {"c": 1.0, "ell": 1.0}, MULTILABEL, "exact"),
    "medlda-regression": ("medlda-regression", {"c": 2.0, "eps": 0.1}, RATINGS, "exact"),
    "slda-gaussian-learn-s2": ("slda-gaussian", {"learn_s2": True}, RATINGS, "exact"),
    "slda-gaussian-fixed": ("slda-gaussian", {"learn_s2": False, "s2": 0.5}, RATINGS, "exact"),
    "gslda-multitask": ("gslda-multitask", {"c": 1.0}, CLASSES, "exact"),
    "medlda-multitask": ("medlda-multitask", {"c": 1.0, "ell": 2.0}, CLASSES, "exact"),
    "unigram-mixture": ("unigram-mixture", {}, None, "exact"),
    "hdp": ("hdp", {}, None, "exact"),
    "shdp-gaussian-learn-s2": ("shdp-gaussian", {"learn_s2": True}, RATINGS, "exact"),
    "shdp-regression": ("shdp-regression", {}, RATINGS, "exact"),
    "shdp-logistic": ("shdp-logistic", {"c": 2.0}, BINARY, "exact"),
    "shdp-hinge": ("shdp-hinge", {"ell": 2.0}, BINARY, "exact"),
    "shdp-multitask": ("shdp-multitask", {"ell": 2.0}, CLASSES, "exact"),
    "shdp-map": ("shdp-map", {}, RATINGS, "exact"),
}


def _state_after_steps(name, options, labels, sampler):
    """(model, corpus data, state, log_joint monitor) after NUM_STEPS cycles of one chain."""
    corpus = _corpus(labels)
    model = REGISTRY[name].build(K, corpus=corpus, **options)
    task = task_of(model, corpus)
    data = corpus_data(model, corpus, task)
    chain_sampler = model.sampler(sampler, corpus.vocab_size, task)
    chain = init_chain(chain_sampler, jax.random.PRNGKey(11), data)
    for _ in range(NUM_STEPS):
        chain = step_chain(chain_sampler, chain, data)
    state = jax.tree.map(np.asarray, chain.state)
    return model, data, state, float(chain.info["log_joint"])


# ------------------------------------------------------------------------- the brute force


def _urn(labels, words, num_labels, weight, vocab_size=None, beta=None):
    """log of the Polya urn: the sum over tokens, in order, of log (n_lw + beta) / (n_l + V
    beta) (words given labels) when ``vocab_size`` is given, else of log weight(label, counts
    so far)."""
    total = 0.0
    counts = {}
    per_label = np.zeros(num_labels)
    for label, word in zip(labels.tolist(), words.tolist()):
        seen = counts.get((label, word), 0)
        total += math.log((seen + beta) / (per_label[label] + vocab_size * beta))
        counts[(label, word)] = seen + 1
        per_label[label] += 1
    return total


def _documents_urn(z, offsets, prior_mass, total_mass=None):
    """sum over documents and their tokens in order of log (a_k + n_dk) / (A + n_d): the
    Dirichlet-multinomial probability of each document's topic sequence; ``a`` the per-topic
    masses ``prior_mass`` [K], A their sum (``total_mass``: larger where mass lies outside
    the K topics, the sHDP's alpha beta_new)."""
    total = 0.0
    total_mass = prior_mass.sum() if total_mass is None else total_mass
    for d in range(len(offsets) - 1):
        seen = np.zeros(len(prior_mass))
        for i, k in enumerate(z[offsets[d]:offsets[d + 1]].tolist()):
            total += math.log((prior_mass[k] + seen[k]) / (total_mass + i))
            seen[k] += 1
    return total


def _omega(eta, z, offsets):
    """omega [T, D] = eta . zbar_d in float64 from the tokens' topics."""
    eta = np.asarray(eta, np.float64)
    out = np.zeros((eta.shape[0], len(offsets) - 1))
    for d in range(len(offsets) - 1):
        topics = z[offsets[d]:offsets[d + 1]]
        out[:, d] = eta[:, topics].sum(axis=1) / max(len(topics), 1)
    return out


def _response_terms(model, state, y, omega):
    """The response's original log (pseudo-)likelihood summed, and s2's log prior if drawn."""
    response = model.response
    name = response.name
    if name == "logistic":
        return float(np.sum(response.c * (y * omega - np.logaddexp(0.0, omega))))
    if name == "hinge":
        return float(np.sum(-2.0 * response.c * np.maximum(0.0, response.ell - y * omega)))
    if name == "epsilon_insensitive":
        c = response.c / y.std(axis=1, keepdims=True) if response.relative else response.c
        return float(np.sum(-2.0 * c * np.maximum(0.0, np.abs(y - omega) - response.eps)))
    assert name == "gaussian"
    s2 = np.asarray(state.augmentation, np.float64)[:, 0]  # per task
    out = float(np.sum(stats.norm.logpdf(y, omega, np.sqrt(s2)[:, None])))
    if response.learn_s2:
        out += float(np.sum(stats.invgamma.logpdf(s2, response.a0, scale=response.b0)))
    return out


def _eta_prior(model, eta):
    return float(np.sum(stats.norm.logpdf(np.asarray(eta, np.float64), 0.0, math.sqrt(model.nu2))))


def brute_force_log_joint(model, data, state) -> float:
    """The log joint of the state of any family (see the module docstring)."""
    words = np.asarray(data.words)
    offsets = np.asarray(data.doc_offsets)
    y = np.asarray(data.y, np.float64)
    vocab_size = max(int(words.max()) + 1, 8)
    if model.name == "unigram-mixture":
        token_topics = np.repeat(np.asarray(state.z), np.diff(offsets))
        mass = np.full(K, model.alpha_per_topic)
        return (_urn(token_topics, words, K, None, vocab_size, model.beta)
                + _documents_urn(np.asarray(state.z), [0, len(state.z)], mass))
    z = np.asarray(state.z)
    if hasattr(state, "beta_weights"):  # the sHDP: CRF terms over the occupied topics
        occupied = np.flatnonzero(np.asarray(state.n_k) > 0)
        relabel = {int(k): i for i, k in enumerate(occupied)}
        labels = np.array([relabel[int(k)] for k in z])
        alpha, gamma = float(state.alpha), float(state.gamma)
        beta_w = np.asarray(state.beta_weights, np.float64)[occupied]
        out = _urn(labels, words, len(occupied), None, vocab_size, model.beta)
        out += _documents_urn(labels, offsets, alpha * beta_w, alpha)
        out += (len(occupied) * math.log(gamma) + (gamma - 1) * math.log(float(state.beta_new))
                - np.log(beta_w).sum())
        if model.learn_alpha:
            out += stats.gamma.logpdf(alpha, 1.0)
        if model.learn_gamma:
            out += stats.gamma.logpdf(gamma, 1.0)
        if model.response is not None:
            eta = np.asarray(state.eta, np.float64)
            out += _eta_prior(model, eta[:, occupied])
            out += _response_terms(model, state, y, _omega(eta, z, offsets))
        return float(out)
    out = _urn(z, words, K, None, vocab_size, model.beta)
    out += _documents_urn(z, offsets, np.full(K, model.alpha_per_topic))
    if model.response is not None:
        out += _eta_prior(model, state.eta)
        out += _response_terms(model, state, y, _omega(state.eta, z, offsets))
    return float(out)


def _close(monitor, exact) -> bool:
    return abs(monitor - exact) <= 2e-3 + 1e-5 * abs(exact)


@pytest.mark.parametrize("case", sorted(CASES))
def test_log_joint_equals_the_brute_force(case):
    model, data, state, monitor = _state_after_steps(*CASES[case])
    exact = brute_force_log_joint(model, data, state)
    assert _close(monitor, exact), f"{case}: monitor {monitor}, brute force {exact}"


@pytest.mark.parametrize("case", ["lda", "medlda-multitask"])
def test_a_log_joint_without_p_z_fails(case, monkeypatch):
    """The planted mutant: the p(Z | alpha) term left out of the parametric log joint."""
    monkeypatch.setattr(parametric, "assignments_log_prior", lambda n_dk, alpha: 0.0)
    parametric._sampler.cache_clear()
    try:
        model, data, state, monitor = _state_after_steps(*CASES[case])
    finally:
        monkeypatch.undo()
        parametric._sampler.cache_clear()
    exact = brute_force_log_joint(model, data, state)
    assert not _close(monitor, exact)
