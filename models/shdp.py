"""The supervised hierarchical Dirichlet process (Dai and Storkey, eqs 8-12) as a numpyro model.

Truncated stick-breaking form with ``truncation`` = L atoms (the sampler,
``topiczoo.kernels.hdp``, works with the untruncated process; at L = 50 the mass beyond the
truncation is below 1e-5 on average under the Gamma(1, 1) prior of gamma):

    gamma ~ Gamma(1, 1) (or fixed);  alpha ~ Gamma(1, 1) (or fixed)
    v_k ~ Beta(1, gamma), k < L;  beta_k = v_k prod_{j<k} (1 - v_j), beta_L the rest
                                                                             (G0's weights)
    phi_k ~ Dir(beta_word 1_V);  eta_tk ~ N(0, nu2)                              (H, per atom k)
    pi_d ~ Dir(alpha beta_1, ..., alpha beta_L)          (G_d ~ DP(alpha, G0) on G0's L atoms)
    z_dn ~ Cat(pi_d);  w_dn ~ Cat(phi_{z_dn})
    omega_td = eta_t . zbar_d;  y_td from ``response.declare(omega, y)``
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

# Dirichlet parameters alpha beta_k are clipped below at this (float32 stick products underflow
# after many small sticks; the atoms concerned have weight < 1e-30).
_TINY = 1e-30


def shdp_declaration(doc_ids, num_docs: int, vocab_size: int, beta: float, *, nu2: float = 1.0,
                     response=None, num_tasks: int = 1, truncation: int = 50, alpha=None,
                     gamma=None, alpha_prior=(1.0, 1.0), gamma_prior=(1.0, 1.0), words=None,
                     y=None):
    """The (supervised) HDP topic model, truncated at ``truncation`` atoms.

    Args:
      doc_ids: int [N] document of each token; num_docs: D; vocab_size: V.
      beta: the topics' symmetric Dirichlet parameter.
      nu2: prior variance of each topic's coefficient eta_tk (supervised only).
      response: a response of ``topiczoo.kernels.responses`` or None (plain HDP).
      num_tasks: T, rows of y.
      alpha, gamma: fixed concentrations, or None to draw them from Gamma(shape, rate) priors
        ``alpha_prior`` / ``gamma_prior`` (sites "alpha", "gamma").
      words: int [N] observed words or None to draw them; y: [T, D] responses or None.
    Sites: gamma, alpha, sticks, phi, eta, pi, z, w, (s2,) y; deterministic "beta_weights" [L].
    Returns ``(z [N], zbar [D, L], eta [T, L] or None, omega [T, D] or None)``.
    """
    if gamma is None:
        gamma = numpyro.sample("gamma", dist.Gamma(*gamma_prior))
    if alpha is None:
        alpha = numpyro.sample("alpha", dist.Gamma(*alpha_prior))
    with numpyro.plate("sticks_plate", truncation - 1):
        sticks = numpyro.sample("sticks", dist.Beta(1.0, gamma))
    remaining = jnp.concatenate([jnp.ones(1), jnp.cumprod(1.0 - sticks)])
    weights = numpyro.deterministic(
        "beta_weights", jnp.concatenate([sticks, jnp.ones(1)]) * remaining)
    with numpyro.plate("atoms", truncation):
        phi = numpyro.sample("phi", dist.Dirichlet(jnp.full(vocab_size, beta)))
    with numpyro.plate("docs", num_docs):
        pi = numpyro.sample("pi", dist.Dirichlet(jnp.maximum(alpha * weights, _TINY)))
    with numpyro.plate("tokens", doc_ids.shape[0]):
        z = numpyro.sample("z", dist.Categorical(probs=pi[doc_ids]))
        numpyro.sample("w", dist.Categorical(probs=phi[z]), obs=words)
    counts = jax.ops.segment_sum(jax.nn.one_hot(z, truncation), doc_ids, num_segments=num_docs)
    zbar = counts / jnp.maximum(counts.sum(-1, keepdims=True), 1.0)
    if response is None:
        return z, zbar, None, None
    with numpyro.plate("tasks", num_tasks, dim=-2):
        with numpyro.plate("eta_atoms", truncation, dim=-1):
            eta = numpyro.sample("eta", dist.Normal(0.0, jnp.sqrt(nu2)))
    omega = eta @ zbar.T
    response.declare(omega, y)
    return z, zbar, eta, omega
