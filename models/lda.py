"""Latent Dirichlet allocation, the generative process every parametric model extends, and
supervised LDA: LDA, then eta, then the response."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from topiczoo.models.parametric import TopicModel
from topiczoo.models.supervised import response_declaration


def lda_declaration(doc_ids, num_docs: int, num_topics: int, vocab_size: int,
                    alpha: float, beta: float, words=None):
    """LDA as a numpyro model.

    phi_k ~ Dir(beta 1_V); theta_d ~ Dir(alpha 1_K) (alpha per topic here); z_dn ~ Cat(theta_d); w_dn ~ Cat(phi_{z_dn}).

    Args:
      doc_ids: int [N] the document of each token; num_docs: D.
      words: int [N] observed word ids, or None to draw them.
    Returns ``(z [N], zbar [D, K])``.
    """
    with numpyro.plate("topics", num_topics):
        phi = numpyro.sample("phi", dist.Dirichlet(jnp.full(vocab_size, beta)))
    with numpyro.plate("docs", num_docs):
        theta = numpyro.sample("theta", dist.Dirichlet(jnp.full(num_topics, alpha)))
    with numpyro.plate("tokens", doc_ids.shape[0]):
        z = numpyro.sample("z", dist.Categorical(probs=theta[doc_ids]))
        numpyro.sample("w", dist.Categorical(probs=phi[z]), obs=words)
    counts = jax.ops.segment_sum(jax.nn.one_hot(z, num_topics), doc_ids, num_segments=num_docs)
    zbar = counts / jnp.maximum(counts.sum(-1, keepdims=True), 1.0)
    return z, zbar


def supervised_lda_declaration(doc_ids, num_docs: int, num_topics: int, vocab_size: int,
                               alpha: float, beta: float, nu2: float, response,
                               num_tasks: int = 1, words=None, y=None):
    """Supervised LDA as a numpyro model (regularised Bayes where the response is a
    pseudo-likelihood).

    LDA as in :func:`lda_declaration`; eta_t ~ N(0, nu2 I_K) for each task t;
    omega_td = eta_t . zbar_d; the response's own statement (``response.declare``) links
    y [T, D] to omega [T, D]: a likelihood for a generative response, a factor otherwise.
    Returns ``(z, zbar, eta, omega)``.
    """
    z, zbar = lda_declaration(doc_ids, num_docs, num_topics, vocab_size, alpha, beta, words)
    eta, omega = response_declaration(zbar, num_tasks, nu2, response, y, "topic_weights")
    return z, zbar, eta, omega


def lda(num_topics: int, *, alpha: float = 1.0, beta: float = 0.01) -> TopicModel:
    """Unsupervised LDA with K topics; ``alpha`` is the total concentration (per topic alpha/K)."""
    return TopicModel("lda", num_topics, alpha, beta, response=None, declaration=lda_declaration)
