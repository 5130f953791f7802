"""Entry points of the kernels that only the tests use, and the oracles they check against.

* :class:`TopicState` steps: the collapsed and the light sweep for a chain whose state carries
  the counts (z, n_dk, n_wk, n_k) through ``jax.pure_callback``, as the samplers did before
  their state held z alone (``kernels.assignments``): the tests drive the numba sweeps through
  them one sweep at a time and check the counts stay consistent with z.
* :func:`collapsed_log_likelihood`: log p(W | Z) computed in XLA from the counts (the monitor's
  definition; the samplers compute it on the host, ``kernels.assignments``).
* :func:`collapsed_sweep_reference`: the collapsed sweep in its first, per-token log-space
  form, against which the table form of ``kernels.topics._collapsed_sweep`` is checked draw by
  draw.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np

from topiczoo.kernels import parallel_jax
from topiczoo.kernels import response_table as rt
from topiczoo.kernels.assignments import check_word_index, word_token_index
from topiczoo.kernels.categorical import cumulate, search
from topiczoo.kernels.host import chain_copies, seed_from_key, trim_after
from topiczoo.kernels.light import _check_options, _light_sweep
from topiczoo.kernels.topics import TABLE_ARGUMENTS, _collapsed_sweep, _count_token, _lda_weights


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





@numba.njit(cache=True, nogil=True)
def collapsed_sweep_reference(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta,
                               seed):
    """The per-token log-space form of ``kernels.topics._collapsed_sweep`` (K exps per
    token): the sweep as it was first written, the reference of ``tests/test_topics.py``. Same
    arguments and the same uniform per token, so the package's sweep must draw the same topics
    up to floating rounding."""
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    inv_nk = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    weights = np.empty(num_topics)
    cum = np.empty(num_topics)
    tb = rt.response_tables(num_tasks, num_topics, 0, 0)
    score, quad = tb.score, tb.quad
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
            _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
            if num_tasks > 0:
                for t in range(num_tasks):
                    score[t] -= eta[t, k_old]
                rt.log_space_factors(d, eta, psi, rho, inv_n, num_topics, tb)
                for k in range(num_topics):
                    weights[k] = ((n_dk[d, k] + alpha) * (n_wk[w, k] + beta) * inv_nk[k]
                                  * tb.shifted[k])
            else:
                _lda_weights(d, w, n_dk, n_wk, inv_nk, alpha, beta, weights)
            total = cumulate(weights, cum)
            k_new = search(cum, np.random.random() * total)
            z[i] = k_new
            _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
            for t in range(num_tasks):
                score[t] += eta[t, k_new]


def _host_collapsed_sweep(alpha, beta):
    """The host side of :func:`collapsed_topics_step`'s callback.

    The callback receives read-only views of jax's buffers and must return new arrays, so z and
    the counts are copied once, into the output arrays, and swept in place there; words and
    offsets are read through the views and only the small eta, psi, rho are converted (to
    float64). Under ``vmap_method="expand_dims"`` every argument has a leading chain axis (of
    size 1 where not batched): the outputs are allocated for all chains at once and each chain
    is swept in its own row.
    """

    def host(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, seed):
        state = [np.asarray(a) for a in (z, n_dk, n_wk, n_k)]
        words, doc_offsets, seed = np.asarray(words), np.asarray(doc_offsets), np.asarray(seed)
        eta, psi, rho = (np.asarray(a, np.float64) for a in (eta, psi, rho))
        if state[0].ndim == 1:
            out = [np.array(a, dtype=np.int32) for a in state]
            _collapsed_sweep(*out, words, doc_offsets, eta, psi, rho, alpha, beta, int(seed),
                             *TABLE_ARGUMENTS)
            return tuple(out)
        inputs = (words, doc_offsets, eta, psi, rho, seed)
        num = max(a.shape[0] for a in (*state, *inputs))
        out = [chain_copies(a, num) for a in state]
        for chain in range(num):
            w, o, e, p, r, s = (a[min(chain, a.shape[0] - 1)] for a in inputs)
            _collapsed_sweep(*(a[chain] for a in out), w, o, e, p, r, alpha, beta, int(s),
                             *TABLE_ARGUMENTS)
        return tuple(out)

    return host


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
        *topics, words, doc_offsets, eta, psi, rho, seed_from_key(key),
        vmap_method="expand_dims",
    )
    return TopicState(z, n_dk, n_wk, n_k)


def _host_light_sweep(alpha, beta, num_steps, cycle):
    """The host side of :func:`light_topics_step` (same conventions as the collapsed sweep's:
    z and counts are copied once into the outputs and swept there; under
    ``vmap_method="expand_dims"`` every argument has a leading chain axis)."""

    def sweep(out, words, offsets, w_off, w_tok, eta, psi, rho, seed):
        if w_off.shape[0] == 0:
            w_off, w_tok = word_token_index(words, out[2].shape[0])
        stats = np.zeros((3, 2), np.int64)
        _light_sweep(*out, words, offsets, w_off, w_tok, eta, psi, rho, alpha, beta, int(seed),
                     num_steps, cycle, stats)

    def host(z, n_dk, n_wk, n_k, words, doc_offsets, word_offsets, word_tokens, eta, psi, rho,
             seed):
        state = [np.asarray(a) for a in (z, n_dk, n_wk, n_k)]
        inputs = [np.asarray(a) for a in (words, doc_offsets, word_offsets, word_tokens)]
        inputs += [np.asarray(a, np.float64) for a in (eta, psi, rho)]
        seed = np.asarray(seed)
        if state[0].ndim == 1:
            out = [np.array(a, dtype=np.int32) for a in state]
            sweep(out, *inputs, seed)
        else:
            inputs.append(seed)
            num = max(a.shape[0] for a in (*state, *inputs))
            out = [chain_copies(a, num) for a in state]
            for chain in range(num):
                sweep([a[chain] for a in out], *(a[min(chain, a.shape[0] - 1)] for a in inputs))
        trim_after(sum(a.nbytes for a in out))
        return tuple(out)

    return host




def light_topics_step(key, topics: TopicState, words, doc_offsets, eta, psi, rho, alpha: float,
                      beta: float, *, word_offsets=None, word_tokens=None, num_steps: int = 6,
                      combination: str = "mixture") -> TopicState:
    """One light sweep over every token: ``num_steps`` Metropolis-Hastings steps per token
    (module docstring), exact in its stationary distribution.

    Args:
      key: JAX PRNG key; the host seed is derived from it.
      topics: current :class:`~topiczoo.kernels.topics.TopicState` (z [N], n_dk [D, K],
        n_wk [V, K], n_k [K], int32).
      words: int32 [N]; doc_offsets: int32 [D+1].
      eta: float32 [T, K] (T = 0 for plain LDA); psi, rho: float32 [T, D] (Gaussian form).
      alpha, beta: symmetric per-topic / per-word Dirichlet parameters (static floats).
      word_offsets, word_tokens: the data's :func:`word_token_index` (int32 [V+1], int32 [N]);
        computed on every call if omitted.
      num_steps: Metropolis-Hastings steps per token (static).
      combination: ``"mixture"`` (each step's proposal drawn with equal odds) or ``"cycle"``
        (document, word, response in turn).
    Returns the new :class:`TopicState`. Works under jit, vmap (chains) and lax loops; nothing
    besides the TopicState needs to be carried between calls.

    Through ``pure_callback`` the whole TopicState is copied in and out at every call: at
    K = 400 on 20news (n_wk 86 MB) that adds about 190 ns per token to the sweep's 600 and
    some 340 MB to the peak. :func:`light_assignments_step` runs the same sweep with z alone
    in the chain state.
    """
    _check_options(combination, num_steps)
    check_word_index(word_offsets, word_tokens)
    if word_offsets is None:
        word_offsets = word_tokens = jnp.zeros((0,), jnp.int32)
    out_shape = tuple(jax.ShapeDtypeStruct(a.shape, jnp.int32) for a in topics)
    z, n_dk, n_wk, n_k = jax.pure_callback(
        _host_light_sweep(float(alpha), float(beta), int(num_steps), combination == "cycle"),
        out_shape, *topics, words, doc_offsets, word_offsets, word_tokens, eta, psi, rho,
        seed_from_key(key), vmap_method="expand_dims",
    )
    return TopicState(z, n_dk, n_wk, n_k)


def collapsed_log_likelihood(topics: TopicState, beta: float) -> jax.Array:
    """log p(W | Z) with Phi integrated out (label-invariant), in nats, from a TopicState's
    counts: ``kernels.parallel_jax.collapsed_log_likelihood`` (the JAX engine's monitor)."""
    return parallel_jax.collapsed_log_likelihood(topics.n_wk, topics.n_k, beta)
