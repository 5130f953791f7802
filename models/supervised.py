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
    eta, omega = response_declaration(zbar, num_tasks, nu2, response, y, "topic_weights")
    return z, zbar, eta, omega


def response_declaration(zbar, num_tasks: int, nu2: float, response, y, topic_plate: str):
    """eta_t ~ N(0, nu2 I) over the K topics of zbar [D, K] for each of the num_tasks tasks
    (plates "tasks" and ``topic_plate``), omega = eta zbar^T [T, D], and the response's own
    statement linking y [T, D] to omega. Returns ``(eta, omega)``."""
    with numpyro.plate("tasks", num_tasks, dim=-2):
        with numpyro.plate(topic_plate, zbar.shape[-1], dim=-1):
            eta = numpyro.sample("eta", dist.Normal(0.0, jnp.sqrt(nu2)))
    omega = eta @ zbar.T
    response.declare(omega, y)
    return eta, omega
