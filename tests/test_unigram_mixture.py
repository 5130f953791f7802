"""The mixture of unigrams (``models.unigram_mixture``), the worked example of the sampler
contract: its exact sampler against enumeration (and a mutant that must fail), its numpyro
declaration against the same enumeration, its held-out draws against their exact law, and the
one driver (fit with checkpoints, held-out proportions, the command line) run unchanged.

The exact posterior here is written from the collapsed joint, independently of the sampler:

    p(W, Z) = Gamma(alpha) / Gamma(D + alpha) prod_k Gamma(m_k + alpha/K) / Gamma(alpha/K)
              * prod_k Gamma(V beta) / Gamma(n_k + V beta) prod_w Gamma(n_kw + beta) / Gamma(beta)

with m_k the documents of topic k and n_kw, n_k their word counts.
"""

from __future__ import annotations

import importlib
import itertools
import json

import jax
import jax.numpy as jnp
import numba
import numpy as np
import pytest
from numpyro import handlers
from numpyro.infer import MCMC, Predictive
from scipy.special import gammaln, logsumexp

from chains import interrupt_at, small_corpus, tiny_data
from exact import total_variation
from topiczoo.corpus import Corpus
from topiczoo.fit import fit
from topiczoo.kernels.gibbs import GibbsKernel
from topiczoo.models import REGISTRY, unigram_mixture
from topiczoo.predict import held_out_proportions
from topiczoo.models.supervised import task_of

# the module itself (``topiczoo.models.unigram_mixture`` as an attribute is the factory)
module = importlib.import_module("topiczoo.models.unigram_mixture")

# Six documents over V = 3 words, K = 2: 64 assignments (32 up to relabelling). Words repeat
# inside documents, so counting a document's own earlier words matters.
DOCS = [[0, 0, 1], [0, 0], [1, 2, 2], [2, 2, 1, 2], [0, 1], [2]]
VOCAB = 3
ALPHA, BETA = 1.0, 0.5
NUM_CHAINS = 4
NUM_SAMPLES = 10_000  # per chain
TV_BOUND = 0.02  # the Monte Carlo TV at this length is 0.006-0.008 (measured, seeds 0 and 1)


def exact_posterior(docs, num_topics, vocab_size, alpha, beta):
    """p(Z | W) over the K^D document assignments, indexed by sum_d z_d K^d."""
    words = np.concatenate([np.asarray(d) for d in docs])
    doc_ids = np.repeat(np.arange(len(docs)), [len(d) for d in docs])
    a = alpha / num_topics
    configs = np.array(list(itertools.product(range(num_topics), repeat=len(docs))))
    log_p = np.empty(len(configs))
    for row, z in enumerate(configs):
        m_k = np.bincount(z, minlength=num_topics)
        n_kw = np.zeros((num_topics, vocab_size))
        np.add.at(n_kw, (z[doc_ids], words), 1)
        log_p[row] = (gammaln(alpha) - gammaln(len(docs) + alpha)
                      + (gammaln(m_k + a) - gammaln(a)).sum()
                      + (gammaln(vocab_size * beta) - gammaln(n_kw.sum(1) + vocab_size * beta)
                         + (gammaln(n_kw + beta) - gammaln(beta)).sum(1)).sum())
    p = np.zeros(len(configs))
    p[(configs * num_topics ** np.arange(len(docs))).sum(1)] = np.exp(log_p - logsumexp(log_p))
    return p


def sampled_posterior(model, docs, *, seed=0, num_samples=NUM_SAMPLES):
    """Frequencies of the document assignments in a run of ``MCMC(GibbsKernel(model, V))``."""
    mcmc = MCMC(GibbsKernel(model, VOCAB), num_warmup=100, num_samples=num_samples,
                num_chains=NUM_CHAINS, chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), tiny_data(docs), extra_fields=("state.z",))
    z = np.asarray(mcmc.get_extra_fields()["state.z"])  # [draws, D]
    k = model.num_topics
    return np.bincount((z * k ** np.arange(z.shape[1])).sum(1), minlength=k ** z.shape[1]) / len(z)


def test_exact_posterior_sums_to_one_and_is_label_symmetric():
    p = exact_posterior(DOCS, 2, VOCAB, ALPHA, BETA)
    assert abs(p.sum() - 1) < 1e-12
    flipped = (2 ** len(DOCS) - 1) - np.arange(2 ** len(DOCS))  # every document's other topic
    np.testing.assert_allclose(p, p[flipped], rtol=1e-12)


@pytest.mark.slow
def test_sampler_matches_enumeration():
    exact = exact_posterior(DOCS, 2, VOCAB, ALPHA, BETA)
    tv = total_variation(exact, sampled_posterior(unigram_mixture(2, alpha=ALPHA, beta=BETA),
                                                  DOCS))
    print(f"TV sampler vs enumeration: {tv:.4f}")
    assert tv < TV_BOUND, f"TV {tv:.4f} between sampled and exact posterior of Z"


@numba.njit(cache=False)
def _sweep_without_own_words(z, m_k, n_wk, n_k, words, doc_offsets, alpha, beta, seed):
    """The mutant: ``_document_sweep`` with the document's own earlier words not counted (each
    token's predictive uses the other documents' counts only)."""
    np.random.seed(seed)
    num_topics = n_k.shape[0]
    v_beta = n_wk.shape[0] * beta
    log_weight = np.empty(num_topics)
    for d in range(doc_offsets.shape[0] - 1):
        start, end = doc_offsets[d], doc_offsets[d + 1]
        k_old = z[d]
        m_k[k_old] -= 1
        n_k[k_old] -= end - start
        for i in range(start, end):
            n_wk[words[i], k_old] -= 1
        for k in range(num_topics):
            acc = np.log(m_k[k] + alpha)
            for i in range(start, end):
                acc += np.log((n_wk[words[i], k] + beta) / (n_k[k] + v_beta))
            log_weight[k] = acc
        p = np.exp(log_weight - log_weight.max())
        cum = np.cumsum(p)
        u = np.random.random() * cum[-1]
        k_new = 0
        while k_new < num_topics - 1 and cum[k_new] <= u:
            k_new += 1
        z[d] = k_new
        m_k[k_new] += 1
        n_k[k_new] += end - start
        for i in range(start, end):
            n_wk[words[i], k_new] += 1


def _alpha_not_over_k(model):
    """The mutant: the sampler's per-topic alpha written as the total alpha (alpha where alpha/K
    belongs), i.e. the sampler of a model with alpha * K."""
    return unigram_mixture(model.num_topics, alpha=model.alpha * model.num_topics,
                           beta=model.beta)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["own-words-not-counted", "alpha-not-over-K"])
def test_enumeration_detects_a_wrong_conditional(monkeypatch, mutant):
    model = unigram_mixture(2, alpha=ALPHA, beta=BETA)
    if mutant == "own-words-not-counted":
        # the compiled step's host callback looks the sweep up at every call: the mutant runs
        monkeypatch.setattr(module, "_document_sweep", _sweep_without_own_words)
    else:
        model = _alpha_not_over_k(model)
    exact = exact_posterior(DOCS, 2, VOCAB, ALPHA, BETA)
    tv = total_variation(exact, sampled_posterior(model, DOCS))
    print(f"TV mutant ({mutant}) vs enumeration: {tv:.4f}")
    assert tv > 2 * TV_BOUND, f"a wrong conditional went unnoticed (TV {tv:.4f})"


@pytest.mark.slow
def test_declaration_states_the_enumerated_model():
    """p(Z | W) of the numpyro declaration, by Monte Carlo over its prior on pi and Phi
    (p(W, Z) = E[p(Z | pi) p(W | Z, Phi)]), is the collapsed joint's; and the comparison tells
    the total alpha from the per-topic one."""
    model = unigram_mixture(2, alpha=ALPHA, beta=BETA)
    data = tiny_data(DOCS)
    declaration = model.declaration_for(VOCAB)
    num_prior = 200_000
    prior = Predictive(declaration, num_samples=num_prior, return_sites=["pi", "phi"])(
        jax.random.PRNGKey(0), data)

    def log_z_and_w(pi, phi, z):
        trace = handlers.trace(handlers.substitute(
            declaration, {"pi": pi, "phi": phi, "z": z})).get_trace(data)
        return sum(trace[site]["fn"].log_prob(trace[site]["value"]).sum() for site in ("z", "w"))

    batched = jax.jit(jax.vmap(log_z_and_w, (0, 0, None)))
    num_docs = len(DOCS)
    log_p = np.empty(2**num_docs)
    for index in range(2**num_docs):
        z = jnp.asarray((index // 2 ** np.arange(num_docs)) % 2, jnp.int32)
        log_p[index] = logsumexp(np.asarray(batched(prior["pi"], prior["phi"], z), np.float64))
    declared = np.exp(log_p - logsumexp(log_p))
    tv = 0.5 * np.abs(declared - exact_posterior(DOCS, 2, VOCAB, ALPHA, BETA)).sum()
    print(f"TV declaration (Monte Carlo) vs enumeration: {tv:.4f}")
    assert tv < TV_BOUND  # measured 0.0047 (no relabelling: the estimate is per assignment)
    wrong = 0.5 * np.abs(declared - exact_posterior(DOCS, 2, VOCAB, 2 * ALPHA, BETA)).sum()
    assert wrong > 2 * TV_BOUND, f"alpha and alpha/K are not told apart (TV {wrong:.4f})"


# ---------------------------------------------------------------------------------------------
# The one driver, unchanged: fit, checkpoints, held-out proportions, the command line

FIT = dict(num_chains=2, num_iterations=12, num_burnin=6, num_snapshots=2, progress=False,
           chunk=3, seed=1)


def test_interrupted_fit_resumes_without_losing_draws(tmp_path):
    corpus = small_corpus()  # labels are ignored: the model is unsupervised
    straight = fit(unigram_mixture(3), corpus, **FIT)
    assert straight.task is None
    assert set(straight.draws) == {"log_joint", "log_likelihood", "occupied_topics"}
    path = tmp_path / "ckpt.npz"
    with pytest.raises(KeyboardInterrupt):  # interrupted after 9 iterations, one snapshot taken
        fit(unigram_mixture(3), corpus, checkpoint=path, callback=interrupt_at(9), **FIT)
    resumed = fit(unigram_mixture(3), corpus, checkpoint=path, **FIT)
    np.testing.assert_array_equal(resumed.draw_iterations, straight.draw_iterations)
    for name in straight.draws:
        np.testing.assert_array_equal(resumed.draws[name], straight.draws[name])
    assert [s.iteration for s in resumed.snapshots] == [9, 12]
    assert [s.iteration for s in straight.snapshots] == [9, 12]
    for a, b in zip(resumed.snapshots, straight.snapshots):
        assert set(a.arrays) == {"n_wk", "n_k", "m_k"}
        for name in a.arrays:
            np.testing.assert_array_equal(a.arrays[name], b.arrays[name])
    for a, b in zip(jax.tree.leaves(resumed.state), jax.tree.leaves(straight.state)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="model"):  # a checkpoint of another model is refused
        fit(unigram_mixture(3, beta=0.1), corpus, checkpoint=path, **FIT)


def test_counts_follow_the_assignments_and_chains_differ():
    corpus = small_corpus()
    model = unigram_mixture(3)
    result = fit(model, corpus, **FIT)
    words = np.asarray(corpus.words)
    doc_ids = np.repeat(np.arange(corpus.num_docs), np.diff(np.asarray(corpus.doc_offsets)))
    for c in range(result.num_chains):
        state = result.chain_state(c)
        z = np.asarray(state.z)
        n_wk = np.zeros((corpus.vocab_size, 3), np.int64)
        np.add.at(n_wk, (words, z[doc_ids]), 1)
        np.testing.assert_array_equal(state.n_wk, n_wk)
        np.testing.assert_array_equal(state.n_k, n_wk.sum(0))
        np.testing.assert_array_equal(state.m_k, np.bincount(z, minlength=3))
        zbar = model.predictor().train_proportions(state)
        np.testing.assert_array_equal(zbar, np.eye(3, dtype=np.float32)[z])
        assert result.draws["occupied_topics"][c, -1] == np.count_nonzero(state.m_k)
    assert not np.array_equal(result.chain_state(0).z, result.chain_state(1).z)


def test_held_out_draws_follow_their_exact_law():
    """Test documents' topics are drawn from pi-hat_k prod_n phi-hat_{w k} of each snapshot
    (an empty document: pi-hat); frequencies of many draws within 5 standard errors."""
    train = small_corpus()
    model = unigram_mixture(3, beta=0.1)
    result = fit(model, train, **FIT)
    docs = [[0, 0, 1], [], [5, 6, 7, 7], [2]]
    test = Corpus(np.concatenate([np.asarray(d, np.int32) for d in docs]),
                  np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64),
                  train.vocabulary)
    num_draws = 4000
    with pytest.warns(UserWarning, match="no tokens"):
        zbar = held_out_proportions(result, test, num_draws=num_draws, seed=3)
    assert zbar.shape == (2, 2, num_draws, len(docs), 3)
    np.testing.assert_array_equal(zbar.sum(-1), 1.0)
    with pytest.warns(UserWarning):
        np.testing.assert_array_equal(zbar, held_out_proportions(result, test,
                                                                 num_draws=num_draws, seed=3))
    for c in range(2):
        for i, snap in enumerate(result.snapshots):
            n_wk, n_k, m_k = (np.asarray(snap.arrays[k][c], np.float64)
                              for k in ("n_wk", "n_k", "m_k"))
            phi = (n_wk + 0.1) / (n_k + train.vocab_size * 0.1)
            pi = (m_k + 1.0 / 3) / (train.num_docs + 1.0)
            for d, doc in enumerate(docs):
                p = pi * np.prod(phi[doc], axis=0)
                p /= p.sum()
                freq = zbar[c, i, :, d].mean(0)
                se = np.sqrt(p * (1 - p) / num_draws)
                assert np.all(np.abs(freq - p) <= 5 * se + 1e-9), (c, i, d, freq, p)


def test_registry_entry():
    entry = REGISTRY["unigram-mixture"]
    assert entry.tasks == () and entry.driver == "gibbs"
    assert entry.options() == {"alpha": 1.0, "beta": 0.01}
    assert entry.build(5, beta=0.1) == unigram_mixture(5, beta=0.1)
    model = entry.build(4)
    assert model.describe() == {"model": "unigram-mixture", "num_topics": 4, "alpha": 1.0,
                                "alpha_per_topic": 0.25, "beta": 0.01}
    assert task_of(model, small_corpus()) is None and model.response is None
    with pytest.raises(ValueError, match="unknown sampler"):
        GibbsKernel(model, 8, sampler="light")
    with pytest.raises(ValueError, match="num_topics"):
        unigram_mixture(0)
    with pytest.raises(ValueError, match="beta"):
        unigram_mixture(2, beta=-1.0)


# A mixture of unigrams sits in one mode, so its log-likelihood (about -8.6e5 nats on bbc,
# float32 step 0.0625) moves by a few nats within a chain: the trace plot's density failed on
# it ("Too many bins for data range") until the ArviZ tree held float64 draws.


def test_command_line_fits_and_diagnoses(tmp_path, capsys):
    import arviz as az

    from topiczoo.cli import main

    out = tmp_path / "run"
    code = main(["fit", "--model", "unigram-mixture", "--out", str(out), "--topics", "4",
                 "--chains", "2", "--iterations", "8", "--snapshots", "2", "--quiet"])
    err = capsys.readouterr().err
    tree = az.from_netcdf(out / "posterior.nc")  # written before the trace plot
    assert tree["posterior"]["log_likelihood"].shape == (2, 4)
    assert tree["posterior"]["occupied_topics"].shape == (2, 4)
    assert tree.attrs["model"] == "unigram-mixture"
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == "unigram-mixture" and summary["test_metrics_by_strategy"] == {}
    assert "log_likelihood" in summary["rhat"]
    assert main(["diagnose", str(out)]) == 0
    assert "log_likelihood" in capsys.readouterr().out
