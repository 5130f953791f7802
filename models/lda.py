"""Latent Dirichlet allocation: the generative process every model here extends."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from topiczoo.models.parametric import TopicModel


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


def lda(num_topics: int, *, alpha: float = 1.0, beta: float = 0.01) -> TopicModel:
    """Unsupervised LDA with K topics; ``alpha`` is the total concentration (per topic alpha/K)."""
    return TopicModel("lda", num_topics, alpha, beta, response=None, declaration=lda_declaration)
