"""Supervised LDA with any Gaussian-form response: LDA, then eta, then the response."""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from topiczoo.models.lda import lda_declaration


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
    with numpyro.plate("tasks", num_tasks, dim=-2):
        with numpyro.plate("topic_weights", num_topics, dim=-1):
            eta = numpyro.sample("eta", dist.Normal(0.0, jnp.sqrt(nu2)))
    omega = eta @ zbar.T
    response.declare(omega, y)
    return z, zbar, eta, omega
