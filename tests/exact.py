"""Exact posteriors of tiny models by enumeration, written independently of the samplers.

p(Z | W, y) is proportional to the collapsed LDA joint p(W, Z) times the integral over eta of
the prior N(0, nu2 I) and the response's ORIGINAL (un-augmented) pseudo-likelihood, computed
by 2-D quadrature on a fine grid (K = 2).
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import MCMC
from scipy.special import gammaln, logsumexp

from topiczoo.kernels.gibbs import CorpusData, GibbsKernel


def tiny_data(docs, labels=None, response=None):
    """CorpusData from a list of word-id lists and optional labels (raw 0/1 or ratings)."""
    words = np.concatenate([np.asarray(d, np.int32) for d in docs])
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int32)
    doc_ids = np.repeat(np.arange(len(docs), dtype=np.int32), [len(d) for d in docs])
    if response is None:
        y = np.zeros((0, len(docs)), np.float32)
    else:
        y = response.encode(np.asarray(labels))
    return CorpusData(jnp.asarray(words), jnp.asarray(doc_ids), jnp.asarray(offsets),
                      jnp.asarray(y))


def small_corpus():
    """A deterministic Corpus of 12 short documents over 8 words, labels alternating 0/1."""
    from topiczoo.corpus import Corpus

    rng = np.random.default_rng(0)
    docs = [rng.integers(0, 8, size=rng.integers(3, 9)) for _ in range(12)]
    lengths = [len(d) for d in docs]
    return Corpus(np.concatenate(docs).astype(np.int32),
                  np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                  tuple(f"w{i}" for i in range(8)), labels=np.arange(12) % 2)


def log_collapsed_lda(z, words, doc_ids, num_docs, num_topics, vocab_size, alpha, beta):
    """log p(W, Z) with theta and Phi integrated out; alpha, beta per entry."""
    n_dk = np.zeros((num_docs, num_topics))
    n_kw = np.zeros((num_topics, vocab_size))
    np.add.at(n_dk, (doc_ids, z), 1)
    np.add.at(n_kw, (z, words), 1)
    doc_part = (gammaln(num_topics * alpha) - gammaln(n_dk.sum(1) + num_topics * alpha)
                + (gammaln(n_dk + alpha) - gammaln(alpha)).sum(1)).sum()
    topic_part = (gammaln(vocab_size * beta) - gammaln(n_kw.sum(1) + vocab_size * beta)
                  + (gammaln(n_kw + beta) - gammaln(beta)).sum(1)).sum()
    return doc_part + topic_part, n_dk


def exact_posterior(data: CorpusData, model, vocab_size, log_pseudo_likelihood=None,
                    grid_half_width=9.0, grid_points=901):
    """Exact p(Z | W, y) over all K^N configurations, indexed by sum_i z_i K^i.

    ``log_pseudo_likelihood(y [1, D], omega [G, 1, D]) -> [G, 1, D]`` (one task at a time;
    summed over documents) defaults to the model response's original form. Supports K = 2
    (2-D quadrature over each task's eta) or no response.
    """
    words = np.asarray(data.words)
    doc_ids = np.asarray(data.doc_ids)
    num_docs = len(np.asarray(data.doc_offsets)) - 1
    k = model.num_topics
    response = model.response
    if log_pseudo_likelihood is None and response is not None:
        log_pseudo_likelihood = response.log_pseudo_likelihood
    if response is not None:
        assert k == 2, "the quadrature is two-dimensional"
        grid = np.linspace(-grid_half_width, grid_half_width, grid_points) * np.sqrt(model.nu2)
        e1, e2 = np.meshgrid(grid, grid, indexing="ij")
        eta_grid = np.stack([e1.ravel(), e2.ravel()], axis=1)  # [G, 2]
        log_prior = -0.5 * (eta_grid**2).sum(1) / model.nu2
        y = np.asarray(data.y, np.float64)
        cache = {}
    log_p = []
    lengths = np.bincount(doc_ids, minlength=num_docs)
    for config in itertools.product(range(k), repeat=len(words)):
        z = np.asarray(config)
        lp, n_dk = log_collapsed_lda(z, words, doc_ids, num_docs, k, vocab_size,
                                     model.alpha_per_topic, model.beta)
        if response is not None:
            key = tuple(n_dk.ravel())
            if key not in cache:
                zbar = n_dk / lengths[:, None]
                omega = (eta_grid @ zbar.T)[:, None, :]  # [G, 1, D]
                # tasks have independent eta_t: the integral is a product over tasks
                cache[key] = sum(
                    logsumexp(log_prior + np.asarray(
                        log_pseudo_likelihood(y[None, t:t + 1], omega), np.float64).sum((1, 2)))
                    for t in range(y.shape[0]))
            lp += cache[key]
        log_p.append(lp)
    log_p = np.asarray(log_p)
    # itertools.product varies the LAST token fastest; re-index so index = sum z_i K^i
    index = np.array([sum(c * k**i for i, c in enumerate(cfg))
                      for cfg in itertools.product(range(k), repeat=len(words))])
    p = np.zeros_like(log_p)
    p[index] = np.exp(log_p - logsumexp(log_p))
    return p


def sampled_configurations(kernel: GibbsKernel, data: CorpusData, *, num_samples, seed,
                           num_chains=4, num_warmup=200, chain_method="vectorized"):
    """Configuration frequencies of Z from a run of ``MCMC`` with the kernel."""
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                chain_method=chain_method, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), data, extra_fields=("state.topics.z",))
    z = np.asarray(mcmc.get_extra_fields()["state.topics.z"])  # [draws, N]
    k = kernel.spec.num_topics
    index = (z * k ** np.arange(z.shape[1])).sum(1)
    return np.bincount(index, minlength=k ** z.shape[1]) / len(index)


def total_variation(p, q, num_topics=2):
    """Total variation between two distributions over configurations of Z, up to relabelling.

    The exact posterior is invariant under permutations of the topic labels; how fast a chain
    moves between the K! relabelled copies of a mode is mixing, not correctness (at c = 9 the
    chain stays in one labelling for thousands of sweeps). So both distributions are first
    summed over each orbit of the label permutations, then compared.
    """
    p, q = np.asarray(p), np.asarray(q)
    num_tokens = round(np.log(len(p)) / np.log(num_topics))
    orbit = _canonical_labelling(num_topics, num_tokens)
    size = orbit.max() + 1
    return 0.5 * np.abs(np.bincount(orbit, p, size) - np.bincount(orbit, q, size)).sum()


def _canonical_labelling(num_topics, num_tokens):
    """For each configuration index, the index of its relabelling in order of first use."""
    index = np.arange(num_topics**num_tokens)
    digits = (index[:, None] // num_topics ** np.arange(num_tokens)) % num_topics
    canonical = np.zeros(len(index), np.int64)
    for row, z in enumerate(digits):
        relabel = {}
        for topic in z:
            relabel.setdefault(topic, len(relabel))
        canonical[row] = sum(relabel[t] * num_topics**i for i, t in enumerate(z))
    return canonical
