"""The sHDP's global block: tables m | z, beta, alpha (eq 14); (gamma, beta) | m (eq 15);
alpha | m (Teh et al. 2006, appendix A).

m is redrawn every time the block runs, so the block is valid on its own (in any order or
mixture of blocks): first the table counts given the topics, then gamma with beta integrated
out given the number of topics K and the number of tables m.., then the stick weights given m
and gamma, then alpha given m.. and the document lengths.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numba
import numpy as np

from topiczoo.kernels.host import batched, numba_seed, seed_words_from_key


@numba.njit(cache=True, nogil=True, inline="always")
def _seat_tables(z, doc_offsets, beta_w, alpha, m_k, seated):
    """m_.k | z, beta, alpha (Antoniak): the customers of dish k in document d are seated one
    by one; customer i + 1 opens a table with probability alpha beta_k / (alpha beta_k + i).
    One uniform per token that is not its dish's first in the document. m_k [Kcap] is filled;
    ``seated`` int64 [Kcap] is zeroed scratch."""
    for k in range(m_k.shape[0]):
        m_k[k] = 0
    for d in range(doc_offsets.shape[0] - 1):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        for i in range(start, end):
            k = z[i]
            c = seated[k]
            ab = alpha * beta_w[k]
            if c == 0:
                m_k[k] += 1
            elif np.random.random() * (ab + c) < ab:
                m_k[k] += 1
            seated[k] = c + 1
        for i in range(start, end):
            seated[z[i]] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_gamma(gamma, num_topics, tables, gamma_a, gamma_b):
    """gamma | K, m.. under a Gamma(a, b) prior, beta integrated out (Escobar and West 1995):
    x ~ Beta(gamma + 1, m..), then a two-component mixture of Gammas."""
    x = np.random.beta(gamma + 1.0, tables)
    rate = gamma_b - np.log(x)
    odds = (gamma_a + num_topics - 1.0) / (tables * rate)
    shape = gamma_a + num_topics if np.random.random() * (1.0 + odds) < odds \
        else gamma_a + num_topics - 1.0
    return np.random.gamma(shape, 1.0 / rate)


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_stick_weights(n_k, m_k, gamma, beta_w):
    """beta | m, gamma ~ Dir(m_.1, ..., m_.K, gamma) over the occupied slots in slot order (0 on
    the free ones); returns beta_new, the unrepresented mass."""
    total = 0.0
    for k in range(n_k.shape[0]):
        if n_k[k] > 0:
            g = np.random.gamma(m_k[k], 1.0)
            beta_w[k] = g
            total += g
        else:
            beta_w[k] = 0.0
    g_new = np.random.gamma(gamma, 1.0)
    total += g_new
    for k in range(n_k.shape[0]):
        beta_w[k] /= total
    return g_new / total


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_alpha(alpha, tables, doc_offsets, alpha_a, alpha_b):
    """alpha | m.., N_d under a Gamma(a, b) prior (Teh et al. 2006, appendix A): per non-empty
    document w_d ~ Beta(alpha + 1, N_d) and s_d ~ Bernoulli(N_d / (N_d + alpha)), then
    alpha ~ Gamma(a + m.. - sum s, b - sum log w)."""
    shape = alpha_a + tables
    rate = alpha_b
    for d in range(doc_offsets.shape[0] - 1):
        n = doc_offsets[d + 1] - doc_offsets[d]
        if n == 0:
            continue
        rate -= np.log(np.random.beta(alpha + 1.0, n))
        if np.random.random() * (n + alpha) < n:
            shape -= 1.0
    return np.random.gamma(shape, 1.0 / rate)


@numba.njit(cache=True, nogil=True)
def _hdp_global(z, doc_offsets, n_k, beta_w, globals_, m_k, learn_alpha, learn_gamma,
                alpha_a, alpha_b, gamma_a, gamma_b, seed):
    """m | z, beta, alpha; then (gamma, beta) | m; then alpha | m. In place: beta_w [Kcap],
    globals_ = (alpha, gamma, beta_new), m_k [Kcap] (table counts m_.k)."""
    np.random.seed(seed)
    alpha = globals_[0]
    gamma = globals_[1]
    _seat_tables(z, doc_offsets, beta_w, alpha, m_k, np.zeros(n_k.shape[0], np.int64))
    num_topics = 0
    tables = 0
    for k in range(n_k.shape[0]):
        if n_k[k] > 0:
            num_topics += 1
            tables += m_k[k]
    if learn_gamma:
        gamma = _draw_gamma(gamma, num_topics, tables, gamma_a, gamma_b)
    beta_new = _draw_stick_weights(n_k, m_k, gamma, beta_w)
    if learn_alpha:
        alpha = _draw_alpha(alpha, tables, doc_offsets, alpha_a, alpha_b)
    globals_[0] = alpha
    globals_[1] = gamma
    globals_[2] = beta_new


def _host_global(learn_alpha, learn_gamma, alpha_prior, gamma_prior):
    def one(z, n_k, beta_w, alpha, gamma, doc_offsets, seed):
        beta_w = np.array(beta_w, np.float64)
        globals_ = np.array([alpha, gamma, 0.0], np.float64)
        m_k = np.zeros(n_k.shape, np.int32)
        _hdp_global(np.asarray(z), np.asarray(doc_offsets), np.asarray(n_k), beta_w, globals_,
                    m_k, learn_alpha, learn_gamma, alpha_prior[0], alpha_prior[1],
                    gamma_prior[0], gamma_prior[1], numba_seed(seed))
        return (beta_w.astype(np.float32), np.float32(globals_[2]), np.float32(globals_[0]),
                np.float32(globals_[1]), m_k)

    return batched(one, 1)


def global_block(key, state, data, *, learn_alpha: bool = True, learn_gamma: bool = True,
                 alpha_prior=(1.0, 1.0), gamma_prior=(1.0, 1.0)):
    """Tables m | z, beta, alpha (eq 14); (gamma, beta) | m (eq 15); alpha | m.

    alpha / gamma are redrawn from their conditionals under Gamma(shape, rate) priors
    ``alpha_prior`` / ``gamma_prior`` (default Gamma(1, 1)) when ``learn_alpha`` /
    ``learn_gamma``, else kept fixed. ``state``: ``kernels.hdp.SHDPState``.
    """
    for name, prior in (("alpha_prior", alpha_prior), ("gamma_prior", gamma_prior)):
        if len(prior) != 2 or not all(float(p) > 0 for p in prior):
            raise ValueError(f"{name} must be (shape, rate) > 0, got {prior!r}")
    out_shape = (
        jax.ShapeDtypeStruct(state.beta_weights.shape, jnp.float32),
        jax.ShapeDtypeStruct((), jnp.float32),
        jax.ShapeDtypeStruct((), jnp.float32),
        jax.ShapeDtypeStruct((), jnp.float32),
        jax.ShapeDtypeStruct(state.m_k.shape, jnp.int32),
    )
    host = _host_global(bool(learn_alpha), bool(learn_gamma),
                        tuple(float(p) for p in alpha_prior),
                        tuple(float(p) for p in gamma_prior))
    beta_w, beta_new, alpha, gamma, m_k = jax.pure_callback(
        host, out_shape, state.z, state.n_k, state.beta_weights, state.alpha, state.gamma,
        data.doc_offsets, seed_words_from_key(key), vmap_method="expand_dims",
    )
    return state._replace(beta_weights=beta_w, beta_new=beta_new, alpha=alpha, gamma=gamma,
                          m_k=m_k)
