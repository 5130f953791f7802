"""Topic-assignment (Z) samplers.

The collapsed sampler of the papers is a sequential loop over tokens; on CPU the fastest form
measured here is a numba function called once per sweep through ``jax.pure_callback``
(``notes/ecosystem.md``). Everything in this module is exact: each token's topic is drawn from
its full conditional

    p(z_dn = k | rest)  propto  (n_dk + alpha) (n_wk + beta) / (n_k + V beta)
                                * prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2)

with all counts excluding token n and ``omega_td(k) = (eta_tk + sum_{m != n} eta_{t, z_m}) / N_d``
(DESIGN.md, "The one idea that unifies every response"). The supervised factor is evaluated in
its log form relative to the document's running score, so each topic costs O(T) extra work.

Counts are stored word-major, ``n_wk`` with shape [V, K] (the transpose of the papers' n_kw),
because a token reads one row of it: one cache line instead of K.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np


class TopicState(NamedTuple):
    """Topic assignments and their sufficient counts.

    z:    int32 [N]     topic of each token
    n_dk: int32 [D, K]  tokens of document d assigned to topic k
    n_wk: int32 [V, K]  tokens of word w assigned to topic k (the papers' n_kw, transposed)
    n_k:  int32 [K]     tokens assigned to topic k
    """

    z: jax.Array
    n_dk: jax.Array
    n_wk: jax.Array
    n_k: jax.Array


def counts_from_assignments(z, words, doc_ids, num_docs, num_topics, vocab_size) -> TopicState:
    """Build a :class:`TopicState` from assignments ``z`` (int32 [N]) by scatter-adds (jittable)."""
    n_dk = jnp.zeros((num_docs, num_topics), jnp.int32).at[doc_ids, z].add(1)
    n_wk = jnp.zeros((vocab_size, num_topics), jnp.int32).at[words, z].add(1)
    n_k = jnp.zeros((num_topics,), jnp.int32).at[z].add(1)
    return TopicState(z, n_dk, n_wk, n_k)


def topic_proportions(n_dk: jax.Array) -> jax.Array:
    """``zbar``: float32 [D, K] empirical topic proportions n_dk / N_d (zero rows for empty docs)."""
    n_d = n_dk.sum(axis=-1, keepdims=True)
    return n_dk.astype(jnp.float32) / jnp.maximum(n_d, 1).astype(jnp.float32)


@numba.njit(cache=True, nogil=True)
def _collapsed_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta, seed):
    """One in-place sweep over all tokens (see module docstring). eta [T,K], psi/rho [T,D]."""
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    inv_nk = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    cum = np.empty(num_topics)
    log_factor = np.zeros(num_topics)
    score = np.zeros(num_tasks)
    lin = np.zeros(num_tasks)
    quad = np.zeros(num_tasks)
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        if end == start:
            continue
        inv_n = 1.0 / (end - start)
        for t in range(num_tasks):
            s = 0.0
            for i in range(start, end):
                s += eta[t, z[i]]
            score[t] = s
            quad[t] = 0.5 * rho[t, d] * inv_n * inv_n
        for i in range(start, end):
            w = words[i]
            k_old = z[i]
            n_dk[d, k_old] -= 1
            n_wk[w, k_old] -= 1
            n_k[k_old] -= 1
            inv_nk[k_old] = 1.0 / (n_k[k_old] + v_beta)
            if num_tasks > 0:
                # log of the supervised factor up to a k-independent constant:
                #   sum_t eta_tk (psi/N - rho S/N^2) - rho eta_tk^2 / (2 N^2),  S = score without n
                for t in range(num_tasks):
                    score[t] -= eta[t, k_old]
                    lin[t] = psi[t, d] * inv_n - rho[t, d] * score[t] * inv_n * inv_n
                top = -np.inf
                for k in range(num_topics):
                    acc = 0.0
                    for t in range(num_tasks):
                        e = eta[t, k]
                        acc += e * (lin[t] - quad[t] * e)
                    log_factor[k] = acc
                    if acc > top:
                        top = acc
                total = 0.0
                for k in range(num_topics):
                    total += (
                        (n_dk[d, k] + alpha) * (n_wk[w, k] + beta) * inv_nk[k]
                        * np.exp(log_factor[k] - top)
                    )
                    cum[k] = total
            else:
                total = 0.0
                for k in range(num_topics):
                    total += (n_dk[d, k] + alpha) * (n_wk[w, k] + beta) * inv_nk[k]
                    cum[k] = total
            u = np.random.random() * total
            k_new = 0
            while k_new < num_topics - 1 and cum[k_new] <= u:
                k_new += 1
            z[i] = k_new
            n_dk[d, k_new] += 1
            n_wk[w, k_new] += 1
            n_k[k_new] += 1
            inv_nk[k_new] = 1.0 / (n_k[k_new] + v_beta)
            for t in range(num_tasks):
                score[t] += eta[t, k_new]


def _seed_from_key(key) -> jax.Array:
    """A uint32 host seed derived from a JAX key (reproducible per chain)."""
    return jax.random.bits(key, (), jnp.uint32)


def _batched(fn_single, n_batched_args):
    """Host wrapper looping ``fn_single`` over a leading chain axis when vmapped.

    Under ``vmap_method="expand_dims"`` every argument gains a leading axis (size 1 when not
    batched); outside vmap there is none. ``n_batched_args`` tells the rank of the first arg
    when unbatched.
    """

    def host(*args):
        args = [np.asarray(a) for a in args]  # callbacks receive jax Arrays: index numpy views
        if args[0].ndim == n_batched_args:
            return fn_single(*args)
        num = max(a.shape[0] for a in args)
        outs = [fn_single(*(a[min(c, a.shape[0] - 1)] for a in args)) for c in range(num)]
        return tuple(np.stack(parts) for parts in zip(*outs))

    return host


def _host_collapsed_sweep(alpha, beta):
    def single(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, seed):
        z, n_dk, n_wk, n_k = (np.array(a, dtype=np.int32) for a in (z, n_dk, n_wk, n_k))
        _collapsed_sweep(
            z, n_dk, n_wk, n_k, np.asarray(words), np.asarray(doc_offsets),
            np.asarray(eta, np.float64), np.asarray(psi, np.float64), np.asarray(rho, np.float64),
            alpha, beta, int(seed),
        )
        return z, n_dk, n_wk, n_k

    return _batched(single, 1)


def collapsed_topics_step(key, topics: TopicState, words, doc_offsets, eta, psi, rho,
                          alpha: float, beta: float) -> TopicState:
    """One collapsed Gibbs sweep over every token (the papers' sampler).

    Args:
      key: JAX PRNG key; the host seed is derived from it.
      topics: current :class:`TopicState`.
      words: int32 [N]; doc_offsets: int32/int64 [D+1].
      eta: float32 [T, K] classifier weights (T = 0 for unsupervised LDA).
      psi, rho: float32 [T, D] Gaussian-form coefficients of the responses.
      alpha, beta: per-topic / per-word symmetric Dirichlet parameters (static floats).
    Returns the new :class:`TopicState`. Works under jit, vmap (chains) and lax loops.
    """
    out_shape = tuple(jax.ShapeDtypeStruct(a.shape, jnp.int32) for a in topics)
    z, n_dk, n_wk, n_k = jax.pure_callback(
        _host_collapsed_sweep(float(alpha), float(beta)), out_shape,
        *topics, words, doc_offsets, eta, psi, rho, _seed_from_key(key),
        vmap_method="expand_dims",
    )
    return TopicState(z, n_dk, n_wk, n_k)


# ---------------------------------------------------------------------------------------------
# Test chains (prediction): Phi fixed, no response term (JMLR eq. 15)


@numba.njit(cache=True, nogil=True)
def _test_chain(words, doc_offsets, phi_wk, alpha, num_burnin, num_draws, lag, seed, out):
    """Per document: burn-in sweeps, then ``num_draws`` zbar draws ``lag`` sweeps apart.

    phi_wk [V, K]: topic-word probabilities (word-major); out [num_draws, D, K] float32.
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = phi_wk.shape[1]
    cum = np.empty(num_topics)
    n_k = np.zeros(num_topics)
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        length = end - start
        if length == 0:
            for j in range(num_draws):
                for k in range(num_topics):
                    out[j, d, k] = 1.0 / num_topics
            continue
        z = np.empty(length, np.int64)
        n_k[:] = 0.0
        for i in range(length):
            k = np.random.randint(num_topics)
            z[i] = k
            n_k[k] += 1.0
        total_sweeps = num_burnin + num_draws * lag
        j = 0
        for sweep in range(1, total_sweeps + 1):
            for i in range(length):
                w = words[start + i]
                n_k[z[i]] -= 1.0
                total = 0.0
                for k in range(num_topics):
                    total += (n_k[k] + alpha) * phi_wk[w, k]
                    cum[k] = total
                u = np.random.random() * total
                k_new = 0
                while k_new < num_topics - 1 and cum[k_new] <= u:
                    k_new += 1
                z[i] = k_new
                n_k[k_new] += 1.0
            if sweep > num_burnin and (sweep - num_burnin) % lag == 0:
                for k in range(num_topics):
                    out[j, d, k] = n_k[k] / length
                j += 1


def sample_test_topics(words, doc_offsets, phi_wk, alpha: float, *, num_burnin: int,
                       num_draws: int, lag: int = 1, seed: int = 0) -> np.ndarray:
    """Draw test-document topic proportions with the topics ``phi_wk`` held fixed.

    Args:
      words: int [N] test tokens (training-vocabulary ids); doc_offsets: int [D+1].
      phi_wk: float [V, K] topic-word probabilities, columns summing to 1.
      alpha: per-topic Dirichlet parameter.
      num_burnin, num_draws, lag: the test chain's burn-in, number of kept draws, and sweeps
        between kept draws (the averaging paper's B_TE, number of test samples, L_TE).
      seed: host seed.
    Returns float32 [num_draws, D, K]: zbar of each kept draw (uniform 1/K rows for empty docs).
    """
    if num_draws < 1 or lag < 1 or num_burnin < 0:
        raise ValueError("need num_draws >= 1, lag >= 1 and num_burnin >= 0")
    phi_wk = np.ascontiguousarray(phi_wk, dtype=np.float64)
    out = np.zeros((num_draws, len(doc_offsets) - 1, phi_wk.shape[1]), np.float32)
    _test_chain(np.asarray(words, np.int64), np.asarray(doc_offsets, np.int64), phi_wk,
                float(alpha), int(num_burnin), int(num_draws), int(lag), int(seed), out)
    return out
