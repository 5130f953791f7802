"""How chains start: the dispersed start (the default) and the uniform one.

Documented (``fit(init=...)``): ``"dispersed"`` draws Z from its prior p(Z | alpha), so each
document's tokens sit on one or a few topics chosen at random in each chain, and eta from its
prior; ``"uniform"`` draws every token's topic uniformly at random, eta = 0. These tests check
the first states against that description, the prior draw against its exact law, and that a
run is reproducible from its seed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from chains import small_corpus
from topiczoo import Corpus, fit
from topiczoo.kernels.gibbs import GibbsKernel
from topiczoo.kernels.topics import prior_assignments
from topiczoo.models import REGISTRY, lda, medlda
from topiczoo.models.supervised import corpus_data, task_of

K = 10
NUM_CHAINS = 4


def _long_documents(num_docs=30, length=60, vocab_size=20):
    rng = np.random.default_rng(0)
    words = rng.integers(0, vocab_size, num_docs * length).astype(np.int32)
    return Corpus(words, np.arange(0, num_docs * length + 1, length),
                  tuple(f"w{v}" for v in range(vocab_size)), labels=np.arange(num_docs) % 2)


def _first_states(model, corpus, start):
    """The chains' states before the first iteration (a chain axis first)."""
    task = task_of(model, corpus)
    kernel = GibbsKernel(model, corpus.vocab_size, task=task, start=start)
    keys = jax.random.split(jax.random.PRNGKey(0), NUM_CHAINS)
    chain = kernel.init(keys, 0, None, (corpus_data(model, corpus, task),), {})
    return jax.tree.map(np.asarray, chain.state)


def _largest_share(n_dk):
    """Mean over documents of the share of its largest topic: [chains]."""
    n_dk = np.asarray(n_dk, np.float64)
    return (n_dk.max(-1) / n_dk.sum(-1)).mean(-1)


def _together(n_dk):
    """For each chain, which pairs of documents share their largest topic: a label-invariant
    partition of the documents, [chains, D, D] bool."""
    top = np.asarray(n_dk).argmax(-1)
    return top[:, :, None] == top[:, None, :]


@pytest.mark.parametrize("name", ["medlda", "shdp-hinge"])
def test_dispersed_chains_start_on_few_topics_and_apart(name):
    corpus = _long_documents()
    model = REGISTRY[name].build(K, corpus=corpus)
    dispersed = _first_states(model, corpus, "dispersed")
    uniform = _first_states(model, corpus, "uniform")
    # uniform: every document spread over the topics (60 tokens on 10 topics: the largest
    # share is about 0.2); dispersed (theta_d ~ Dir(1/10)): mostly on one topic
    assert (_largest_share(uniform.n_dk) < 0.3).all()
    assert (_largest_share(dispersed.n_dk) > 0.5).all()
    # the chains group the documents differently: most pairs that share a topic in one chain
    # do not in another
    together = _together(dispersed.n_dk)
    off_diagonal = ~np.eye(corpus.num_docs, dtype=bool)
    for a in range(NUM_CHAINS):
        for b in range(a + 1, NUM_CHAINS):
            agree = (together[a] & together[b] & off_diagonal).sum()
            assert agree < 0.5 * (together[a] & off_diagonal).sum()
    if name == "medlda":  # eta from its prior N(0, nu2), its own in each chain
        assert (uniform.eta == 0).all()
        eta = dispersed.eta.reshape(NUM_CHAINS, -1)
        assert np.abs(eta).min() > 0 and len({tuple(e) for e in eta}) == NUM_CHAINS
        assert 0.4 < eta.std() < 2.0  # nu2 = 1


def test_prior_assignments_follow_the_prior():
    """Two tokens of one document: P(same topic) = (a + 1) / (K a + 1) under theta ~ Dir(a),
    and each token's topic is uniform; one token of each of two documents: independent."""
    offsets = jnp.asarray([0, 2, 3], jnp.int32)
    keys = jax.random.split(jax.random.PRNGKey(2), 20_000)
    draws = np.asarray(jax.vmap(lambda k: prior_assignments(k, offsets, 3, 3, 0.5))(keys))
    same = (draws[:, 0] == draws[:, 1]).mean()
    assert abs(same - 1.5 / 2.5) < 4 * np.sqrt(0.24 / 20_000)
    assert abs((draws[:, 0] == draws[:, 2]).mean() - 1 / 3) < 4 * np.sqrt(2 / 9 / 20_000)
    assert np.abs(np.bincount(draws[:, 0], minlength=3) / 20_000 - 1 / 3).max() < 0.015


def test_a_run_is_reproducible_by_its_seed_and_the_start_changes_it():
    corpus = small_corpus()
    model = medlda(3, c=1.0, ell=2.0)
    kw = dict(num_chains=2, num_iterations=4, num_burnin=2, num_snapshots=1, progress=False)
    first = fit(model, corpus, seed=5, **kw)
    again = fit(model, corpus, seed=5, **kw)
    for name in first.draws:
        np.testing.assert_array_equal(first.draws[name], again.draws[name])
    assert first.init == "dispersed"
    other_seed = fit(model, corpus, seed=6, **kw)
    uniform = fit(model, corpus, seed=5, init="uniform", **kw)
    assert uniform.init == "uniform"
    for other in (other_seed, uniform):
        assert not np.array_equal(first.draws["log_joint"], other.draws["log_joint"])


def test_an_unknown_start_is_refused():
    with pytest.raises(ValueError, match="no start 'prior'; its starts: dispersed, uniform"):
        fit(lda(3), small_corpus(), init="prior", num_iterations=2, progress=False)
