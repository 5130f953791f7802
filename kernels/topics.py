"""Topic-assignment (Z) samplers.

The collapsed sampler of the papers is a sequential loop over tokens; on CPU the fastest form
measured here is a numba function called once per sweep through ``jax.pure_callback``
(``notes/ecosystem.md``). Everything in this module is exact: each token's topic is drawn from
its full conditional

    p(z_dn = k | rest)  propto  (n_dk + alpha) (n_wk + beta) / (n_k + V beta)
                                * prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2)

with all counts excluding token n and ``omega_td(k) = (eta_tk + sum_{m != n} eta_{t, z_m}) / N_d``
(DESIGN.md, "The one idea that unifies every response"). The supervised factor is a Gaussian
in the document's running score, so it factors into per-document exp tables updated when a token
changes topic: a few multiplications per topic and token instead of an exp (``_collapsed_sweep``;
documents whose exponents could leave the safe range of doubles are swept in log space). Every
loop over the K topics is written so that it vectorises: the weights in one pass, the draw from
block sums (``_draw``), the exps of the tables and of log space by a polynomial
(``_exp_in_place``) instead of libm's scalar exp.

Counts are stored word-major, ``n_wk`` with shape [V, K] (the transpose of the papers' n_kw),
because a token reads one row of it: one cache line instead of K.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np
from jax.scipy.special import gammaln


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


# Largest exponent the table form of the supervised factor may meet in a document (see
# ``_collapsed_sweep``); beyond it the document is swept in log space. Every table entry, every
# factor and every product of them then lies in [e^-300, e^300] ~ [5e-131, 2e130]: multiplied by
# the count weights (n_dk + alpha)(n_wk + beta) / (n_k + V beta), which lie in about
# [1e-20, 1e9] for any corpus this package can hold, and summed over K <= 1e6 topics, nothing
# comes near overflow (1.8e308) or the subnormal range (< 2.2e-308, inexact and slow), so the
# table form never loses a topic that log space would keep. Each exponent is rounded at most
# 300 * 2^-53 ~ 3e-14 in absolute terms, which is also the rounding of the log-space form.
_MAX_EXPONENT = 300.0
# Most entries of the per-document exp table (rows of K, one per topic met in the document) and
# of its reciprocal: 2^22 doubles = 32 MiB each, all K rows up to K = 2048. A document meeting
# more topics than fit is finished in log space.
_TABLE_ENTRIES = 1 << 22


# exp(x) in loops that vectorise (libm's exp does not: about 6 ns an entry here). Cody and
# Waite's reduction x = n ln 2 + r, |r| <= ln 2 / 2 (ln 2 split in two, so that n ln2_hi is
# exact for |n| < 2^21), e^r by its Taylor polynomial of degree 13 (truncation below 5e-18
# relative), 2^n added to the exponent bits. Within 1 ulp of np.exp for x in [-700, 700]
# (``tests/test_topics.py``); inputs are clamped to that range (below it the result is about
# 1e-304 instead of a subnormal or 0). NaN stays NaN (tested): the clamp keeps it, and x86-64
# converts a NaN n to the integer -2^63, whose shift into the exponent field is 0.
_ROUND = 6755399441055744.0  # 1.5 * 2^52: y + _ROUND - _ROUND rounds y to an integer
_INV_LN2 = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


@numba.njit(cache=True, nogil=True)
def _exp_in_place(x, num, scratch):
    """x[k] = exp(x[k]) for k < num (see above); scratch int64 [>= num]."""
    bits = x.view(np.int64)
    for k in range(num):
        y = min(max(x[k], -700.0), 700.0)
        n = (y * _INV_LN2 + _ROUND) - _ROUND
        r = (y - n * _LN2_HI) - n * _LN2_LO
        x[k] = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
                1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                    1.0 / 479001600 + r * (1.0 / 6227020800)))))))))))))
        scratch[k] = np.int64(n)
    for k in range(num):
        bits[k] += scratch[k] << 52


@numba.njit(cache=True, nogil=True, inline="always")
def _sum_quadratic(e_tk, lin, quad, out, num):
    """out[k] = sum_t e_tk (lin_t - quad_t e_tk) for k < num (e_tk [T, >= num]), summed over t
    in order for each k, in loops over k that vectorise: the exponent of a Gaussian-form factor
    (``lin`` and ``quad`` [T])."""
    for k in range(num):
        out[k] = 0.0
    for t in range(e_tk.shape[0]):
        lin_t = lin[t]
        quad_t = quad[t]
        for k in range(num):
            e = e_tk[t, k]
            out[k] += e * (lin_t - quad_t * e)


@numba.njit(cache=True, nogil=True)
def _fill_exp_row(table, inv_table, row, centred_j, centred, c, num, scratch):
    """table[row, k] = exp(sum_t c_t e_tj e_tk) for the topics k < num, inv_table its
    reciprocal; ``centred_j`` [T] = e_.j, ``centred`` [T, >= num] = e_.k. The sum runs over t
    in order for each k, in loops over k that vectorise; scratch int64 [>= num]."""
    for k in range(num):
        table[row, k] = 0.0
    for t in range(centred.shape[0]):
        ct = c[t] * centred_j[t]
        for k in range(num):
            table[row, k] += ct * centred[t, k]
    _exp_in_place(table[row], num, scratch)
    for k in range(num):
        inv_table[row, k] = 1.0 / table[row, k]


@numba.njit(cache=True, nogil=True, inline="always")
def _count_token(d, w, k, delta, n_dk, n_wk, n_k, inv_nk, v_beta):
    """Add ``delta`` (+1 or -1) tokens of word w in document d to topic k's counts, and keep
    inv_nk[k] = 1 / (n_k[k] + V beta) in step."""
    n_dk[d, k] += delta
    n_wk[w, k] += delta
    n_k[k] += delta
    inv_nk[k] = 1.0 / (n_k[k] + v_beta)


@numba.njit(cache=True, nogil=True, inline="always")
def _lda_weights(d, w, n_dk, n_wk, inv_nk, alpha, beta, weights):
    """LDA weights (n_dk + alpha)(n_wk + beta)/(n_k + V beta) of token (d, w) into
    ``weights`` [K], counts excluding the token."""
    for k in range(weights.shape[0]):
        weights[k] = (n_dk[d, k] + alpha) * (n_wk[w, k] + beta) * inv_nk[k]


@numba.njit(cache=True, nogil=True, inline="always")
def _log_space_weights(d, w, eta, psi, rho, score, quad, inv_n, n_dk, n_wk, inv_nk, alpha,
                       beta, lin, log_factor, weights, scratch):
    """Weights ``weights`` [K] of a token's topics, the supervised factor in log space.

    ``score`` [T] is the document's score without the token. The log factor, up to a
    k-independent constant, is sum_t eta_tk (psi/N - rho S/N^2) - rho eta_tk^2 / (2 N^2)
    (``quad`` [T] holds rho / (2 N^2); :func:`_sum_quadratic`); it is shifted by its maximum
    before exponentiating. ``lin``, ``log_factor`` and ``scratch`` (int64 [K]) are scratch.
    """
    num_tasks, num_topics = eta.shape
    for t in range(num_tasks):
        lin[t] = psi[t, d] * inv_n - rho[t, d] * score[t] * inv_n * inv_n
    _sum_quadratic(eta, lin, quad, log_factor, num_topics)
    top = -np.inf
    for k in range(num_topics):
        top = max(top, log_factor[k])
    for k in range(num_topics):
        log_factor[k] -= top
    _exp_in_place(log_factor, num_topics, scratch)
    for k in range(num_topics):
        weights[k] = (n_dk[d, k] + alpha) * (n_wk[w, k] + beta) * inv_nk[k] * log_factor[k]


@numba.njit(cache=True, nogil=True, inline="always")
def _cumulate(weights, cum):
    """cum[k] = weights[0] + ... + weights[k] (in order); returns the total."""
    total = 0.0
    for k in range(weights.shape[0]):
        total += weights[k]
        cum[k] = total
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _search(cum, u):
    """The first k with cum[k] > u (linear search; the last index if none): with u uniform on
    [0, cum[-1]) it is drawn with probability proportional to cum[k] - cum[k-1]."""
    k = 0
    while k < cum.shape[0] - 1 and cum[k] <= u:
        k += 1
    return k


# A draw from K weights (:func:`_block_totals`, :func:`_search_blocks`): the sums of blocks of
# _BLOCK consecutive weights, four blocks at a time (independent additions), then a walk over
# the block sums and within one block. A running cumulative sum (:func:`_cumulate`) chains K
# dependent additions and the linear search K / 2 dependent steps: at K = 400 the block form
# cut the exact multi-task sweep on 20news by about a quarter.
_BLOCK = 16


@numba.njit(cache=True, nogil=True, inline="always")
def _block_totals(weights, num, blocks):
    """blocks[b] = the sum of weights[b B : (b + 1) B] (B = _BLOCK, in order within the block)
    for the first ``num`` weights; returns the total, the block sums added in order."""
    size = _BLOCK
    b = 0
    while (b + 4) * size <= num:
        o = b * size
        s0 = s1 = s2 = s3 = 0.0
        for j in range(size):
            s0 += weights[o + j]
            s1 += weights[o + size + j]
            s2 += weights[o + 2 * size + j]
            s3 += weights[o + 3 * size + j]
        blocks[b] = s0
        blocks[b + 1] = s1
        blocks[b + 2] = s2
        blocks[b + 3] = s3
        b += 4
    while b * size < num:
        s = 0.0
        for k in range(b * size, min(num, (b + 1) * size)):
            s += weights[k]
        blocks[b] = s
        b += 1
    total = 0.0
    for j in range(b):
        total += blocks[j]
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _search_blocks(weights, num, blocks, u):
    """The first k < num whose cumulative weight exceeds u (the last if none), with the block
    sums of :func:`_block_totals`: with u uniform on [0, total) k is drawn with probability
    weights[k] / total. Within a block the weights are added in the order its sum was, so the
    walk that entered a block ends in it."""
    last = (num + _BLOCK - 1) // _BLOCK - 1
    acc = 0.0
    b = 0
    while b < last and acc + blocks[b] <= u:
        acc += blocks[b]
        b += 1
    k = b * _BLOCK
    end = min(num, k + _BLOCK)
    local = 0.0
    while k < end - 1 and acc + (local + weights[k]) <= u:
        local += weights[k]
        k += 1
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def _draw(weights, num, blocks, u):
    """The k < num that uniform u in [0, 1) draws with probability weights[k] /
    sum(weights[:num]) (weights non-negative with a positive finite sum)."""
    total = _block_totals(weights, num, blocks)
    return _search_blocks(weights, num, blocks, u * total)


@numba.njit(cache=True, nogil=True)
def _collapsed_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta, seed,
                     max_exponent=_MAX_EXPONENT):
    """One in-place sweep over all tokens (see module docstring). eta [T,K], psi/rho [T,D].

    Returns the number of tokens whose supervised factor was evaluated in log space (0 if T = 0).

    The supervised factor is built from per-document exp tables, not K exps per token. Let
    c_t = rho_td / N_d^2, m_t the midpoint of eta_t's range and e_tk = eta_tk - m_t (a shift
    common to all topics, so the conditional does not change), and S'_t = sum_n e_{t, z_n} the
    document's full centred score. For a token now in topic j, the log factor of topic k is, up
    to a constant in k,

        x_k + y_jk,  x_k = sum_t e_tk (a_t - c_t e_tk / 2),  a_t = (psi_td - rho_td m_t) / N_d
                                                                    - c_t S'_t,
                     y_jk = sum_t c_t e_tj e_tk

    (removing the token from the score gives the y term). So factor_k = AB_k E[j, k] with
    AB_k = exp(x_k), K exps per document, and E[j, k] = exp(y_jk), one row of K exps the first
    time topic j occurs in the document. When a token moves j -> l, S'_t grows by e_tl - e_tj,
    so AB_k is multiplied by E[j, k] / E[l, k]. With h_t = max_k |e_tk|, every |x_k| stays below
    X = sum_t h_t |a_t| + c_t h_t^2 / 2 and every |y_jk| below Y = sum_t c_t h_t^2; while
    X + 2 Y <= ``max_exponent`` (checked at the start of a document and after each move, as
    a_t changes) all these exps and their products are safe (``_MAX_EXPONENT``). Otherwise, or
    when the document meets more topics than the table holds (``_TABLE_ENTRIES``), the rest of
    the document is swept with the per-token log-space form of
    :func:`_collapsed_sweep_reference`. Both forms compute the same conditional and use the
    same uniform per token, so the draws agree up to floating rounding.
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    inv_nk = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    weights = np.empty(num_topics)
    blocks = np.empty((num_topics + _BLOCK - 1) // _BLOCK)
    scratch = np.empty(num_topics, np.int64)

    if num_tasks == 0:  # plain LDA
        for d in range(num_docs):
            for i in range(doc_offsets[d], doc_offsets[d + 1]):
                w = words[i]
                k_old = z[i]
                _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
                _lda_weights(d, w, n_dk, n_wk, inv_nk, alpha, beta, weights)
                k_new = _draw(weights, num_topics, blocks, np.random.random())
                z[i] = k_new
                _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
        return 0

    # centred weights e_tk = eta_tk - m_t and their largest magnitude h_t
    mid = np.empty(num_tasks)
    half = np.zeros(num_tasks)
    centred = np.empty((num_tasks, num_topics))
    for t in range(num_tasks):
        lo = eta[t, 0]
        hi = eta[t, 0]
        for k in range(num_topics):
            lo = min(lo, eta[t, k])
            hi = max(hi, eta[t, k])
        mid[t] = 0.5 * (lo + hi)
        for k in range(num_topics):
            centred[t, k] = eta[t, k] - mid[t]
            half[t] = max(half[t], abs(centred[t, k]))
    # table form: a document meets at most min(K, 2 N_d) topics (its own and one per move)
    max_len = 0
    for d in range(num_docs):
        max_len = max(max_len, doc_offsets[d + 1] - doc_offsets[d])
    capacity = min(num_topics, 2 * max_len, max(2, _TABLE_ENTRIES // num_topics))
    table = np.empty((capacity, num_topics))  # row slot[j]: E[j, k]
    inv_table = np.empty((capacity, num_topics))  # 1 / E[j, k]
    slot = np.full(num_topics, -1, np.int64)  # row of topic j in this document, -1 if none yet
    slot_topic = np.empty(capacity, np.int64)
    used = 0
    ab = np.empty(num_topics)  # AB_k = exp(x_k)
    dab = np.empty(num_topics)  # (n_dk + alpha) / (n_k + V beta) * AB_k
    c = np.empty(num_tasks)
    half_c = np.empty(num_tasks)
    lin0 = np.empty(num_tasks)
    a = np.empty(num_tasks)
    centred_score = np.empty(num_tasks)
    # log-space form
    score = np.zeros(num_tasks)
    lin = np.zeros(num_tasks)
    quad = np.zeros(num_tasks)
    log_factor = np.zeros(num_topics)
    num_log_space = 0
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        if end == start:
            continue
        inv_n = 1.0 / (end - start)
        y_bound = 0.0
        x_bound = 0.0
        for t in range(num_tasks):
            s = 0.0
            s_centred = 0.0
            for i in range(start, end):
                s += eta[t, z[i]]
                s_centred += centred[t, z[i]]
            score[t] = s
            quad[t] = 0.5 * rho[t, d] * inv_n * inv_n
            centred_score[t] = s_centred
            c[t] = rho[t, d] * inv_n * inv_n
            lin0[t] = (psi[t, d] - rho[t, d] * mid[t]) * inv_n
            a[t] = lin0[t] - c[t] * s_centred
            h2 = half[t] * half[t]
            y_bound += abs(c[t]) * h2
            x_bound += half[t] * abs(a[t]) + 0.5 * abs(c[t]) * h2
        fast = x_bound + 2.0 * y_bound <= max_exponent  # False for nan/inf too
        if fast:
            for r in range(used):
                slot[slot_topic[r]] = -1
            used = 0
            for t in range(num_tasks):
                half_c[t] = 0.5 * c[t]
            _sum_quadratic(centred, a, half_c, ab, num_topics)  # x_k
            _exp_in_place(ab, num_topics, scratch)
            for k in range(num_topics):
                dab[k] = (n_dk[d, k] + alpha) * inv_nk[k] * ab[k]
        for i in range(start, end):
            w = words[i]
            k_old = z[i]
            _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
            if fast and slot[k_old] < 0:
                if used < capacity:
                    _fill_exp_row(table, inv_table, used, centred[:, k_old], centred, c,
                                  num_topics, scratch)
                    slot[k_old] = used
                    slot_topic[used] = k_old
                    used += 1
                else:
                    fast = False
            if fast:
                row_old = slot[k_old]
                dab[k_old] = (n_dk[d, k_old] + alpha) * inv_nk[k_old] * ab[k_old]
                for k in range(num_topics):
                    weights[k] = dab[k] * (n_wk[w, k] + beta) * table[row_old, k]
            else:
                # log-space form, as _collapsed_sweep_reference
                num_log_space += 1
                for t in range(num_tasks):
                    score[t] -= eta[t, k_old]
                _log_space_weights(d, w, eta, psi, rho, score, quad, inv_n, n_dk, n_wk, inv_nk,
                                   alpha, beta, lin, log_factor, weights, scratch)
            k_new = _draw(weights, num_topics, blocks, np.random.random())
            z[i] = k_new
            _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
            if not fast:
                for t in range(num_tasks):
                    score[t] += eta[t, k_new]
                continue
            if k_new != k_old:
                for t in range(num_tasks):
                    score[t] += eta[t, k_new] - eta[t, k_old]
                if slot[k_new] < 0:
                    if used < capacity:
                        _fill_exp_row(table, inv_table, used, centred[:, k_new], centred, c,
                                      num_topics, scratch)
                        slot[k_new] = used
                        slot_topic[used] = k_new
                        used += 1
                    else:
                        fast = False
                        continue
                row_old = slot[k_old]
                row_new = slot[k_new]
                for k in range(num_topics):
                    r = table[row_old, k] * inv_table[row_new, k]
                    ab[k] *= r
                    dab[k] *= r
                dab[k_old] = (n_dk[d, k_old] + alpha) * inv_nk[k_old] * ab[k_old]
                x_bound = 0.0
                for t in range(num_tasks):
                    centred_score[t] += centred[t, k_new] - centred[t, k_old]
                    a[t] = lin0[t] - c[t] * centred_score[t]
                    x_bound += half[t] * abs(a[t]) + 0.5 * abs(c[t]) * half[t] * half[t]
                fast = x_bound + 2.0 * y_bound <= max_exponent
            dab[k_new] = (n_dk[d, k_new] + alpha) * inv_nk[k_new] * ab[k_new]
    return num_log_space


@numba.njit(cache=True, nogil=True)
def _collapsed_sweep_reference(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta,
                               seed):
    """The per-token log-space form of :func:`_collapsed_sweep` (K exps per token).

    The original sweep, kept as the reference of ``tests/test_topics.py``: same arguments and
    the same uniform per token, so it must draw the same topics up to floating rounding.
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    inv_nk = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    weights = np.empty(num_topics)
    scratch = np.empty(num_topics, np.int64)
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
            _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
            if num_tasks > 0:
                for t in range(num_tasks):
                    score[t] -= eta[t, k_old]
                _log_space_weights(d, w, eta, psi, rho, score, quad, inv_n, n_dk, n_wk, inv_nk,
                                   alpha, beta, lin, log_factor, weights, scratch)
            else:
                _lda_weights(d, w, n_dk, n_wk, inv_nk, alpha, beta, weights)
            total = _cumulate(weights, cum)
            k_new = _search(cum, np.random.random() * total)
            z[i] = k_new
            _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
            for t in range(num_tasks):
                score[t] += eta[t, k_new]


def _seed_from_key(key) -> jax.Array:
    """A uint32 host seed derived from a JAX key (reproducible per chain)."""
    return jax.random.bits(key, (), jnp.uint32)


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
            _collapsed_sweep(*out, words, doc_offsets, eta, psi, rho, alpha, beta, int(seed))
            return tuple(out)
        inputs = (words, doc_offsets, eta, psi, rho, seed)
        num = max(a.shape[0] for a in (*state, *inputs))
        out = [np.array(np.broadcast_to(a, (num, *a.shape[1:])), dtype=np.int32) for a in state]
        for chain in range(num):
            w, o, e, p, r, s = (a[min(chain, a.shape[0] - 1)] for a in inputs)
            _collapsed_sweep(*(a[chain] for a in out), w, o, e, p, r, alpha, beta, int(s))
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
    weights = np.empty(num_topics)
    blocks = np.empty((num_topics + _BLOCK - 1) // _BLOCK)
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
                for k in range(num_topics):
                    weights[k] = (n_k[k] + alpha) * phi_wk[w, k]
                k_new = _draw(weights, num_topics, blocks, np.random.random())
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


# ---------------------------------------------------------------------------------------------
# Monitor


def collapsed_log_likelihood(topics: TopicState, beta: float) -> jax.Array:
    """log p(W | Z) with Phi integrated out (label-invariant), in nats.

        sum_k [lgamma(V beta) - lgamma(n_k + V beta)] + sum_wk [lgamma(n_wk + beta) - lgamma(beta)]

    No count exceeds the number of tokens N (a static shape), so when N + 1 < V K the second
    sum reads its terms from a table of lgamma(n + beta) - lgamma(beta), n = 0..N: N + 1 lgamma
    evaluations instead of V K (at K = 50 on 20news-binary 114k instead of 699k: 1.3 ms, not 6).
    The table holds the very float32 values the direct formula computes, so the sum is the same.
    """
    vocab_size, num_topics = topics.n_wk.shape[-2:]
    num_tokens = topics.z.shape[-1]
    n_k = topics.n_k.astype(jnp.float32)
    per_topic = gammaln(vocab_size * beta) - gammaln(n_k + vocab_size * beta)
    if num_tokens + 1 < vocab_size * num_topics:
        table = gammaln(jnp.arange(num_tokens + 1, dtype=jnp.float32) + beta) - gammaln(beta)
        # the barrier keeps XLA from fusing the table into the gather (recomputing it per count)
        per_word = jnp.take(jax.lax.optimization_barrier(table), topics.n_wk)
    else:
        per_word = gammaln(topics.n_wk.astype(jnp.float32) + beta) - gammaln(beta)
    return per_topic.sum() + per_word.sum()
