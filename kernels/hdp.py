"""The supervised hierarchical Dirichlet process (sHDP): state, exact blocks, monitors.

Model (``topiczoo.models.shdp``, Dai and Storkey eqs 8-12): G0 ~ DP(gamma, H) with
H = Dir(beta 1_V) x N(0, nu2 I_T) (a topic's word distribution and its coefficient in each
task); G_d ~ DP(alpha, G0); each token draws a topic from G_d and a word from it; the response
of document d links y_d to omega_d = eta . zbar_d through ``response`` (any response of
``models/responses.py``: its Gaussian form exp(psi omega - rho omega^2 / 2) given the
augmentation). alpha and gamma are fixed, or Gamma(a, b) a priori (default Gamma(1, 1)).

Direct-assignment representation (Teh et al. 2006). The state holds the topic z of every
token with its counts, the stick weights beta_k of the occupied topics and the unrepresented
mass beta_new (so sum_k beta_k + beta_new = 1), eta of the occupied topics, alpha, gamma and
the response's augmentation. The target is

    pi(z, beta, eta, alpha, gamma)  propto  p(alpha) p(gamma) gamma^K beta_new^(gamma-1)
        prod_k beta_k^-1 N(eta_k; 0, nu2)
        prod_d [Gamma(alpha) / Gamma(alpha + N_d)
                prod_k Gamma(alpha beta_k + n_dk) / Gamma(alpha beta_k)]
        prod_k [Gamma(V beta) / Gamma(n_k + V beta) prod_w Gamma(n_wk + beta) / Gamma(beta)]
        x the response factors

(the first line is G0's stick-breaking law of the weights of K labelled topics and of the rest;
it integrates over beta to the Chinese-restaurant-franchise prior of the partition). Each block
below draws from an exact conditional of it (or of an extension by auxiliary variables):

* ``topics_block``: every z_dn in turn (eq 13): with the token removed, an existing topic k
  has weight (n_dk + alpha beta_k) (n_wk + beta) / (n_k + V beta) times the response factor
  with omega_d(k) = (eta_k + sum_{m != n} eta_{z_m}) / N_d; a new topic has weight
  alpha beta_new / V times the response factor at its own eta_new. The new topic's eta is not
  integrable in closed form for every response, so Neal's algorithm 8: ``num_aux`` = m
  auxiliary topics, each of weight alpha beta_new / (m V), with eta drawn from the prior
  N(0, nu2) afresh for every token, except that when the token was alone in its topic the
  first one keeps that topic's eta (drawn lazily: only when a bound on their weight cannot
  settle the draw, an exact rejection step; see ``_hdp_sweep``). A topic emptied by the
  removal dies: its weight returns to
  beta_new (the block (z_dn, beta_k) is drawn jointly given beta_k + beta_new, which integrates
  to the weights above). A born topic takes b beta_new, b ~ Beta(1, gamma), leaving
  (1 - b) beta_new, and the eta of the auxiliary topic chosen.
* ``global_block``: the table counts m_dk by the Antoniak scheme (eq 14; the seating of a
  Chinese restaurant given the counts); then, given m, (gamma, beta) jointly: gamma by
  Escobar and West's auxiliary variable given K and m.. (beta integrated out), and
  beta ~ Dir(m_.1, ..., m_.K, gamma) (eq 15); then alpha by Teh et al.'s auxiliary variables
  given m.. and the N_d. m is redrawn by this block every time it runs, so the block is valid
  on its own (in any order or mixture of blocks).
* ``eta_block``: eta_t | Z, augmentation, Gaussian with precision I / nu2 + sum_d rho_td
  zbar_d zbar_d^T over the occupied topics (the conditional of ``kernels/eta.draw_eta``);
  empty slots hold 0 (an empty slot's eta is no part of the state: a born topic takes its
  auxiliary's).
* ``augmentation_block``: the response's own draw given omega.

Static capacity. Arrays have a static number of topic slots ``Kcap`` (shapes are static
inside a numpyro run). Births take the lowest free slot; nothing any block computes or draws
depends on Kcap (the sweep loops over the slots up to the highest occupied one, a free slot
weighing 0, draws the same variates whatever the capacity, the eta draw works on the occupied
topics only), so a run with a larger capacity gives identical draws. When a birth finds no
free slot the sweep puts the token back, stops, and sets the sticky ``overflow`` flag: the
driver then grows the capacity (:func:`grow`) of the state it started the chunk from and
redoes the chunk with the same keys.

Host randomness: each host block seeds its generator from the JAX key; all work under jit,
lax loops and vmap (``vmap_method="expand_dims"``: one host call loops over the chains).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np
from jax.scipy.special import gammaln

from topiczoo.kernels.eta import _host_batched, _numba_seed, _seed_from_key, draw_eta_cholesky
from topiczoo.kernels.topics import (_BLOCK, _block_totals, _draw, _exp_in_place,
                                     _fill_exp_row, _search_blocks, _sum_quadratic)

# Test-only mutants (``_mutant=``): deliberately wrong rules that the tests must catch.
MUTANT_NONE = 0
MUTANT_NEW_TOPIC_ALPHA = 1  # topics_block: new-topic weight alpha instead of alpha beta_new
MUTANT_TABLES_MINIMAL = 2  # global_block: m_dk = 1 wherever n_dk > 0 ("minimal path")
MUTANT_TABLES_OFF_BY_ONE = 3  # global_block: customer i + 1 opens a table w.p. ab / (ab + i + 1)
MUTANT_GAMMA_AUXILIARY = 4  # global_block: gamma's auxiliary x ~ Beta(gamma, m..)
MUTANT_ALPHA_AUXILIARY = 5  # global_block: alpha's s_d ~ Bernoulli(alpha / (N_d + alpha))


class SHDPState(NamedTuple):
    """State of one sHDP chain with ``Kcap`` topic slots (occupied: n_k > 0).

    z:            int32 [N]          topic slot of each token
    n_dk:         int32 [D, Kcap]    tokens of document d in topic k
    n_wk:         int32 [V, Kcap]    tokens of word w in topic k (word-major)
    n_k:          int32 [Kcap]       tokens in topic k
    beta_weights: float32 [Kcap]     stick weight of each occupied topic, 0 on empty slots
    beta_new:     float32 []         the unrepresented mass, 1 - sum(beta_weights)
    eta:          float32 [T, Kcap]  coefficient of each occupied topic per task, 0 on empty slots
    alpha:        float32 []         document-level concentration
    gamma:        float32 []         top-level concentration
    augmentation: float32 [T, D] (the response's shape; [T, D, 2] epsilon-insensitive)
    m_k:          int32 [Kcap]       table counts m_.k of the last global block (diagnostic)
    overflow:     bool []            a birth found no free slot (sticky; see module docstring)
    """

    z: jax.Array
    n_dk: jax.Array
    n_wk: jax.Array
    n_k: jax.Array
    beta_weights: jax.Array
    beta_new: jax.Array
    eta: jax.Array
    alpha: jax.Array
    gamma: jax.Array
    augmentation: jax.Array
    m_k: jax.Array
    overflow: jax.Array

    @property
    def capacity(self) -> int:
        """Kcap: the topic slots of the state (occupied or free)."""
        return self.n_k.shape[-1]


# ---------------------------------------------------------------------------------------------
# Host plumbing: ``_seed_from_key``, ``_numba_seed``, ``_host_batched`` (from ``kernels.eta``,
# whose float64 eta draw this module shares)


# ---------------------------------------------------------------------------------------------
# The topic sweep (eq 13)


@numba.njit(cache=True, nogil=True, inline="always")
def _insert_sorted(active, num_active, slot):
    i = num_active
    while i > 0 and active[i - 1] > slot:
        active[i] = active[i - 1]
        i -= 1
    active[i] = slot
    return num_active + 1


@numba.njit(cache=True, nogil=True, inline="always")
def _num_slots(active, num_active):
    """S = 1 + the highest occupied slot (0 with none): the sweep's loops run over 0..S-1."""
    return np.int64(active[num_active - 1]) + 1 if num_active > 0 else np.int64(0)


@numba.njit(cache=True, nogil=True, inline="always")
def _remove_sorted(active, num_active, slot):
    i = 0
    while active[i] != slot:
        i += 1
    for j in range(i, num_active - 1):
        active[j] = active[j + 1]
    return num_active - 1


# Largest exponent the table form of the supervised factor may meet (as kernels/topics.py).
_MAX_EXPONENT = 300.0
# Rows of the per-document exp tables (one per topic incarnation met in a document); a document
# that needs more is finished in log space. A constant, so that nothing depends on the capacity.
_TABLE_ROWS = 2048


@numba.njit(cache=True, nogil=True, inline="always")
def _sum_quadratic_active(e_tk, lin, quad, active, num_active, out):
    """out[idx] = sum_t e_tk (lin_t - quad_t e_tk) at k = active[idx] for idx < num_active
    (``kernels.topics._sum_quadratic`` over the occupied slots)."""
    for idx in range(num_active):
        out[idx] = 0.0
    for t in range(e_tk.shape[0]):
        lin_t = lin[t]
        quad_t = quad[t]
        for idx in range(num_active):
            e = e_tk[t, active[idx]]
            out[idx] += e * (lin_t - quad_t * e)


@numba.njit(cache=True, nogil=True, inline="always")
def _log_space_existing(d, w, active, num_active, num_slots, eta, psi, rho, score, inv_n, quad,
                        lin, n_dk, n_wk, inv_nk, beta_w, alpha, beta, log_factor, weights,
                        shifted, scratch):
    """Log-space weights of the existing topics for token (d, w), the score ``score`` [T]
    without the token: fills lin [T], log_factor [:num_active] (by position in ``active``) and
    weights [:num_slots] (by slot, 0 on free slots) (``shifted`` and ``scratch`` int64 are
    scratch); returns the shift (the largest log factor, 0 if there is no topic). Each log
    factor is summed over t in order, in loops over the topics that vectorise
    (:func:`_sum_quadratic_active`)."""
    num_tasks = eta.shape[0]
    for t in range(num_tasks):
        lin[t] = psi[t, d] * inv_n - rho[t, d] * score[t] * inv_n * inv_n
    _sum_quadratic_active(eta, lin, quad, active, num_active, log_factor)
    top = -np.inf
    for idx in range(num_active):
        top = max(top, log_factor[idx])
    if num_active == 0:
        top = 0.0
    for idx in range(num_active):
        shifted[idx] = log_factor[idx] - top
    _exp_in_place(shifted, num_active, scratch)
    for k in range(num_slots):
        weights[k] = 0.0
    for idx in range(num_active):
        kk = active[idx]
        weights[kk] = ((n_dk[d, kk] + alpha * beta_w[kk]) * (n_wk[w, kk] + beta) * inv_nk[kk]
                       * shifted[idx])
    return top


@numba.njit(cache=True, nogil=True)
def _hdp_sweep(z, n_dk, n_wk, n_k, beta_w, globals_, eta, words, doc_offsets, psi, rho, beta,
               nu2, num_aux, seed, mutant, max_exponent=_MAX_EXPONENT):
    """One in-place direct-assignment sweep over all tokens (module docstring, eq 13).

    z int32 [N]; n_dk [D, Kcap], n_wk [V, Kcap], n_k [Kcap] int32; beta_w float64 [Kcap];
    globals_ float64 [3] = (alpha, gamma, beta_new), beta_new updated in place; eta float64
    [T, Kcap]; psi, rho float64 [T, D]. Returns 1 if a birth found no free slot (the sweep then
    stopped with that token back in its topic), else 0.

    Variates per token: one uniform for the topic; the auxiliaries' ``num_aux * T`` normals
    only when the bound on their weight does not settle the draw without them (see the comment
    at the draw), then possibly one more uniform; one more uniform at a birth (the
    Beta(1, gamma) split). Every decision reads the occupied topics only, never the capacity:
    the loops over the topics run over the slots 0..S-1, S = 1 + the highest occupied slot, a
    free slot weighing 0 (contiguous loops that vectorise; births take the lowest free slot,
    so few slots below S are free).

    The supervised factor uses the per-document exp tables of ``kernels/topics._collapsed_sweep``
    (same derivation: centred weights e_tk = eta_tk - m_t, the factor of topic k for a token
    now in topic j is AB_k E[j, k], AB_k = exp(sum_t e_tk (a_t - c_t e_tk / 2)) kept per
    document and updated by ratios of table rows when a token moves, E[j, k] =
    exp(sum_t c_t e_tj e_tk) one row per topic met in the document), extended to births and
    deaths: a born topic gets its AB entry and its column in every row of the document's table
    by direct exps, a row is keyed by the incarnation of its topic (a slot that dies and is born
    again gets a new row), the auxiliary topics' factors are exps of their exponents on the same
    scale. The bounds of ``_collapsed_sweep`` (X + 2 Y <= ``max_exponent``, with births widening
    the range of e) are checked at the start of each document and after each move; when they
    fail, when an auxiliary exponent exceeds ``max_exponent`` (that token only) or the table is
    full, the per-token log-space form is used: the same conditional and the same variates, so
    the draws agree up to floating rounding (``max_exponent < 0`` forces log space: the
    reference of the tests).
    """
    np.random.seed(seed)
    alpha = globals_[0]
    gamma = globals_[1]
    beta_new = globals_[2]
    num_docs = doc_offsets.shape[0] - 1
    capacity = n_k.shape[0]
    num_tasks = eta.shape[0]
    vocab = n_wk.shape[0]
    v_beta = vocab * beta
    sd = math.sqrt(nu2)
    num_new = num_aux if num_tasks > 0 else 1
    # occupied slots in slot order; unsigned, so that indexing with them skips numba's
    # negative-index check in the loops over topics
    active = np.empty(capacity, np.uint32)
    num_active = 0
    for k in range(capacity):
        if n_k[k] > 0:
            active[num_active] = k
            num_active += 1
    # S = num_slots, 1 + the highest occupied slot: a free slot below it weighs 0 (its n_dk
    # and beta_k are 0, its dab is set to 0 when it dies, its centred eta and so its table
    # entries stay within the bounds)
    num_slots = _num_slots(active, num_active)
    inv_nk = np.empty(capacity)
    for k in range(capacity):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    weights = np.empty(capacity + num_new)  # of the occupied topics in order, then the new
    blocks = np.empty((capacity + num_new + _BLOCK - 1) // _BLOCK)
    shifted = np.empty(capacity)
    scratch = np.empty(capacity, np.int64)
    log_factor = np.empty(capacity + num_new)
    aux = np.zeros((num_new, num_tasks))
    eta_old = np.zeros(num_tasks)
    score = np.zeros(num_tasks)
    lin = np.zeros(num_tasks)
    quad = np.zeros(num_tasks)
    # table form (supervised): centring over the occupied topics, in slot order
    mid = np.zeros(num_tasks)
    half = np.zeros(num_tasks)
    cen = np.zeros((num_tasks, capacity))
    for t in range(num_tasks):
        if num_active > 0:
            lo = eta[t, active[0]]
            hi = lo
            for idx in range(num_active):
                lo = min(lo, eta[t, active[idx]])
                hi = max(hi, eta[t, active[idx]])
            mid[t] = 0.5 * (lo + hi)
        for idx in range(num_active):
            k = active[idx]
            cen[t, k] = eta[t, k] - mid[t]
            half[t] = max(half[t], abs(cen[t, k]))
    rows = _TABLE_ROWS if num_tasks > 0 else 0
    table = np.empty((rows, capacity))
    inv_table = np.empty((rows, capacity))
    row_cen = np.empty((rows, num_tasks))
    row_of = np.full(capacity, -1, np.int64)  # row of the current incarnation of slot k
    used = 0
    ab = np.empty(capacity)
    dab = np.empty(capacity)  # (n_dk + alpha beta_k) / (n_k + V beta) * AB_k
    c = np.zeros(num_tasks)
    half_c = np.zeros(num_tasks)
    lin0 = np.zeros(num_tasks)
    a = np.zeros(num_tasks)
    centred_score = np.zeros(num_tasks)
    cen_old = np.zeros(num_tasks)
    status = 0
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        if end == start:
            continue
        inv_n = 1.0 / (end - start)
        fast = False
        y_bound = 0.0
        for t in range(num_tasks):
            s = 0.0
            s_centred = 0.0
            for i in range(start, end):
                s += eta[t, z[i]]
                s_centred += cen[t, z[i]]
            score[t] = s
            quad[t] = 0.5 * rho[t, d] * inv_n * inv_n
            centred_score[t] = s_centred
            c[t] = rho[t, d] * inv_n * inv_n
            lin0[t] = (psi[t, d] - rho[t, d] * mid[t]) * inv_n
            a[t] = lin0[t] - c[t] * s_centred
        if num_tasks > 0 and max_exponent >= 0:
            x_bound = 0.0
            for t in range(num_tasks):
                h2 = half[t] * half[t]
                y_bound += abs(c[t]) * h2
                x_bound += half[t] * abs(a[t]) + 0.5 * abs(c[t]) * h2
            fast = x_bound + 2.0 * y_bound <= max_exponent  # False for nan/inf too
        if num_tasks == 0:  # plain HDP: dab_k = (n_dk + alpha beta_k) / (n_k + V beta)
            for k in range(num_slots):
                dab[k] = (n_dk[d, k] + alpha * beta_w[k]) * inv_nk[k]
        if fast:
            for r in range(capacity):
                row_of[r] = -1
            used = 0
            for t in range(num_tasks):
                half_c[t] = 0.5 * c[t]
            _sum_quadratic(cen, a, half_c, ab, num_slots)  # x_k
            _exp_in_place(ab, num_slots, scratch)
            for k in range(num_slots):
                dab[k] = (n_dk[d, k] + alpha * beta_w[k]) * inv_nk[k] * ab[k]
        for i in range(start, end):
            w = words[i]
            k_old = z[i]
            n_dk[d, k_old] -= 1
            n_wk[w, k_old] -= 1
            n_k[k_old] -= 1
            inv_nk[k_old] = 1.0 / (n_k[k_old] + v_beta)
            for t in range(num_tasks):
                score[t] -= eta[t, k_old]
                cen_old[t] = cen[t, k_old]
            row_old = -1
            if fast:  # the row of the token's topic (before it may die)
                row_old = row_of[k_old]
                if row_old < 0:
                    if used < rows:
                        for t in range(num_tasks):
                            row_cen[used, t] = cen_old[t]
                        _fill_exp_row(table, inv_table, used, row_cen[used], cen, c, num_slots,
                                      scratch)
                        row_old = used
                        row_of[k_old] = used
                        used += 1
                    else:
                        fast = False
            died = n_k[k_old] == 0
            if died:  # the topic dies: its weight returns to the unrepresented mass
                beta_new += beta_w[k_old]
                beta_w[k_old] = 0.0
                num_active = _remove_sorted(active, num_active, k_old)
                if k_old == num_slots - 1:
                    num_slots = _num_slots(active, num_active)
                row_of[k_old] = -1
                dab[k_old] = 0.0
                for t in range(num_tasks):
                    eta_old[t] = eta[t, k_old]
                    eta[t, k_old] = 0.0
            elif fast:
                dab[k_old] = (n_dk[d, k_old] + alpha * beta_w[k_old]) * inv_nk[k_old] * ab[k_old]
            elif num_tasks == 0:
                dab[k_old] = (n_dk[d, k_old] + alpha * beta_w[k_old]) * inv_nk[k_old]
            new_weight = alpha * beta_new / (num_new * vocab)
            if mutant == 1:
                new_weight = alpha / (num_new * vocab)
            if num_tasks == 0:
                for k in range(num_slots):
                    weights[k] = dab[k] * (n_wk[w, k] + beta)
                weights[num_slots] = new_weight
                pick = _draw(weights, num_slots + 1, blocks, np.random.random())
            else:
                # The existing topics' weights, then the auxiliary topics' lazily: their
                # exponent g(e) = sum_t A_t e_t - c_t e_t^2 / 2 (on the scale of the existing
                # weights) is at most G = sum_t A_t^2 / (2 c_t), so their total weight is at
                # most B = m new_weight e^G. When B <= the existing total W, draw u on
                # [0, W + B): below W it picks an existing topic without drawing the
                # auxiliaries; otherwise draw them (their actual total V <= B) and accept u if
                # u < W + V, else draw again from the exact conditional given them (rejection
                # sampling given the auxiliaries, which are independent of u: exact). When
                # B > W, the auxiliaries are drawn first and the draw is direct.
                gmax = 0.0
                top = 0.0
                if fast:
                    for k in range(num_slots):
                        weights[k] = dab[k] * (n_wk[w, k] + beta) * table[row_old, k]
                    for t in range(num_tasks):
                        at = a[t] + c[t] * cen_old[t]
                        gmax += at * at / (2.0 * c[t]) if c[t] > 0 else np.inf
                else:
                    top = _log_space_existing(d, w, active, num_active, num_slots, eta, psi,
                                              rho, score, inv_n, quad, lin, n_dk, n_wk,
                                              inv_nk, beta_w, alpha, beta, log_factor,
                                              weights, shifted, scratch)
                    for t in range(num_tasks):
                        gmax += lin[t] * lin[t] / (4.0 * quad[t]) if quad[t] > 0 else np.inf
                    gmax -= top
                existing = _block_totals(weights, num_slots, blocks)
                bound = np.inf
                if gmax <= _MAX_EXPONENT - 1.0:
                    bound = num_new * new_weight * np.exp(gmax)
                lazy = bound <= existing
                u = 0.0
                if lazy:
                    u = np.random.random() * (existing + bound)
                if lazy and u < existing:
                    pick = _search_blocks(weights, num_slots, blocks, u)
                else:
                    # Neal's algorithm 8: fresh prior draws (rounded to float32, as eta is
                    # stored); the first is the emptied topic's own when the token was alone
                    for j in range(num_aux):
                        for t in range(num_tasks):
                            aux[j, t] = np.float32(sd * np.random.standard_normal())
                    if died:
                        for t in range(num_tasks):
                            aux[0, t] = eta_old[t]
                    safe = True
                    for j in range(num_new):
                        acc = 0.0
                        for t in range(num_tasks):
                            if fast:
                                e = aux[j, t] - mid[t]
                                acc += e * (a[t] - 0.5 * c[t] * e) + c[t] * cen_old[t] * e
                            else:
                                e = aux[j, t]
                                acc += e * (lin[t] - quad[t] * e)
                        log_factor[num_slots + j] = acc - top
                        if acc - top > _MAX_EXPONENT:
                            safe = False
                    if safe:
                        for j in range(num_new):
                            weights[num_slots + j] = new_weight * np.exp(
                                log_factor[num_slots + j])
                    else:  # (B > W only) everything in log space, shifted by the maximum
                        top = _log_space_existing(d, w, active, num_active, num_slots, eta,
                                                  psi, rho, score, inv_n, quad, lin, n_dk,
                                                  n_wk, inv_nk, beta_w, alpha, beta,
                                                  log_factor, weights, shifted, scratch)
                        top_all = top
                        for j in range(num_new):
                            acc = 0.0
                            for t in range(num_tasks):
                                e = aux[j, t]
                                acc += e * (lin[t] - quad[t] * e)
                            log_factor[num_slots + j] = acc
                            top_all = max(top_all, acc)
                        for idx in range(num_active):
                            kk = active[idx]
                            weights[kk] = ((n_dk[d, kk] + alpha * beta_w[kk])
                                           * (n_wk[w, kk] + beta) * inv_nk[kk]
                                           * np.exp(log_factor[idx] - top_all))
                        for j in range(num_new):
                            weights[num_slots + j] = new_weight * np.exp(
                                log_factor[num_slots + j] - top_all)
                    num_options = num_slots + num_new
                    total = _block_totals(weights, num_options, blocks)
                    if lazy and u < total:
                        pick = _search_blocks(weights, num_options, blocks, u)
                    else:
                        pick = _search_blocks(weights, num_options, blocks,
                                              np.random.random() * total)
            born = False
            if pick < num_slots:  # an occupied slot (a free one has weight 0)
                k_new = np.int64(pick)
            else:  # a birth, in the lowest free slot
                j = pick - num_slots
                k_new = -1
                for k in range(capacity):
                    if n_k[k] == 0:
                        k_new = k
                        break
                if k_new < 0:  # no free slot: put the token back and stop
                    k_new = k_old
                    status = 1
                else:
                    born = True
                    # b ~ Beta(1, gamma): 1 - b = U^(1 / gamma)
                    rest = np.exp(np.log(np.random.random()) / gamma)
                    beta_w[k_new] = (1.0 - rest) * beta_new
                    beta_new = rest * beta_new
                    for t in range(num_tasks):
                        eta[t, k_new] = aux[j, t]
                        cen[t, k_new] = aux[j, t] - mid[t]
                    num_active = _insert_sorted(active, num_active, k_new)
                    num_slots = max(num_slots, k_new + 1)
            z[i] = k_new
            n_dk[d, k_new] += 1
            n_wk[w, k_new] += 1
            n_k[k_new] += 1
            inv_nk[k_new] = 1.0 / (n_k[k_new] + v_beta)
            for t in range(num_tasks):
                score[t] += eta[t, k_new]
            if num_tasks == 0:
                dab[k_new] = (n_dk[d, k_new] + alpha * beta_w[k_new]) * inv_nk[k_new]
            if status:
                globals_[2] = beta_new
                return status
            if born and num_tasks > 0:
                row_of[k_new] = -1
                widened = False
                for t in range(num_tasks):
                    if abs(cen[t, k_new]) > half[t]:
                        half[t] = abs(cen[t, k_new])
                        widened = True
                if widened:
                    y_bound = 0.0
                    for t in range(num_tasks):
                        y_bound += abs(c[t]) * half[t] * half[t]
                if fast:  # its AB entry (before the move) and its column in every row
                    acc = 0.0
                    for t in range(num_tasks):
                        e = cen[t, k_new]
                        acc += e * (a[t] - 0.5 * c[t] * e)
                    ab[k_new] = np.exp(acc)
                    for r in range(used):
                        acc = 0.0
                        for t in range(num_tasks):
                            acc += c[t] * row_cen[r, t] * cen[t, k_new]
                        table[r, k_new] = np.exp(acc)
                        inv_table[r, k_new] = 1.0 / table[r, k_new]
            if not fast:
                continue
            if k_new != k_old or born:  # a move (a reborn slot is another topic)
                row_new = row_of[k_new]
                if row_new < 0:
                    if used < rows:
                        for t in range(num_tasks):
                            row_cen[used, t] = cen[t, k_new]
                        _fill_exp_row(table, inv_table, used, row_cen[used], cen, c,
                                      num_slots, scratch)
                        row_new = used
                        row_of[k_new] = used
                        used += 1
                    else:
                        fast = False
                        continue
                for k in range(num_slots):
                    r = table[row_old, k] * inv_table[row_new, k]
                    ab[k] *= r
                    dab[k] *= r
                x_bound = 0.0
                for t in range(num_tasks):
                    centred_score[t] += cen[t, k_new] - cen_old[t]
                    a[t] = lin0[t] - c[t] * centred_score[t]
                    x_bound += half[t] * abs(a[t]) + 0.5 * abs(c[t]) * half[t] * half[t]
                fast = x_bound + 2.0 * y_bound <= max_exponent
            dab[k_new] = (n_dk[d, k_new] + alpha * beta_w[k_new]) * inv_nk[k_new] * ab[k_new]
    globals_[2] = beta_new
    return status


def _host_topics(beta, nu2, num_aux, mutant):
    def one(z, n_dk, n_wk, n_k, beta_w, beta_new, eta, alpha, gamma, words, doc_offsets, psi,
            rho, seed):
        z, n_dk, n_wk, n_k = (np.array(a, np.int32) for a in (z, n_dk, n_wk, n_k))
        beta_w = np.array(beta_w, np.float64)
        eta = np.array(eta, np.float64)
        globals_ = np.array([alpha, gamma, beta_new], np.float64)
        status = _hdp_sweep(z, n_dk, n_wk, n_k, beta_w, globals_, eta,
                            np.asarray(words), np.asarray(doc_offsets),
                            np.asarray(psi, np.float64), np.asarray(rho, np.float64),
                            beta, nu2, num_aux, _numba_seed(seed), mutant)
        return (z, n_dk, n_wk, n_k, beta_w.astype(np.float32), np.float32(globals_[2]),
                eta.astype(np.float32), np.bool_(status))

    return _host_batched(one, 1)


def _gaussian_form(response, state, data):
    if response is None:
        empty = jnp.zeros((0, data.doc_offsets.shape[0] - 1), jnp.float32)
        return empty, empty
    return response.gaussian_form(data.y, state.augmentation)


def topics_block(key, state: SHDPState, data, response, *, beta: float, nu2: float,
                 num_aux: int = 1, _mutant: int = MUTANT_NONE) -> SHDPState:
    """z | rest: one direct-assignment sweep over every token (eq 13, module docstring).

    Args:
      key: JAX key (the host seed is derived from it).
      state: :class:`SHDPState`; data: ``CorpusData`` (words, doc_ids, doc_offsets, y [T, D]).
      response: a response of ``models/responses.py`` or None (plain HDP, T = 0).
      beta: the topics' symmetric Dirichlet parameter; nu2: prior variance of eta.
      num_aux: Neal's m, the auxiliary new topics per token (supervised only).
      _mutant: TEST ONLY: a deliberately wrong rule (``MUTANT_*``) the tests must catch.
    Returns the new state; ``overflow`` is set (and stays set) if a birth found no free slot.
    """
    if int(num_aux) < 1:
        raise ValueError(f"num_aux must be >= 1, got {num_aux}")
    psi, rho = _gaussian_form(response, state, data)
    out_shape = (
        jax.ShapeDtypeStruct(state.z.shape, jnp.int32),
        jax.ShapeDtypeStruct(state.n_dk.shape, jnp.int32),
        jax.ShapeDtypeStruct(state.n_wk.shape, jnp.int32),
        jax.ShapeDtypeStruct(state.n_k.shape, jnp.int32),
        jax.ShapeDtypeStruct(state.beta_weights.shape, jnp.float32),
        jax.ShapeDtypeStruct((), jnp.float32),
        jax.ShapeDtypeStruct(state.eta.shape, jnp.float32),
        jax.ShapeDtypeStruct((), jnp.bool_),
    )
    z, n_dk, n_wk, n_k, beta_w, beta_new, eta, overflow = jax.pure_callback(
        _host_topics(float(beta), float(nu2), int(num_aux), int(_mutant)), out_shape,
        state.z, state.n_dk, state.n_wk, state.n_k, state.beta_weights, state.beta_new,
        state.eta, state.alpha, state.gamma, data.words, data.doc_offsets, psi, rho,
        _seed_from_key(key), vmap_method="expand_dims",
    )
    return state._replace(z=z, n_dk=n_dk, n_wk=n_wk, n_k=n_k, beta_weights=beta_w,
                          beta_new=beta_new, eta=eta, overflow=state.overflow | overflow)


# ---------------------------------------------------------------------------------------------
# Tables, stick weights, concentrations (eqs 14-15)


@numba.njit(cache=True, nogil=True)
def _hdp_global(z, doc_offsets, n_k, beta_w, globals_, m_k, learn_alpha, learn_gamma,
                alpha_a, alpha_b, gamma_a, gamma_b, seed, mutant):
    """m | z, beta, alpha; then (gamma, beta) | m; then alpha | m. In place: beta_w [Kcap],
    globals_ = (alpha, gamma, beta_new), m_k [Kcap] (table counts m_.k)."""
    np.random.seed(seed)
    alpha = globals_[0]
    gamma = globals_[1]
    capacity = n_k.shape[0]
    num_docs = doc_offsets.shape[0] - 1
    # Antoniak: seat the customers of dish k in document d one by one; customer i + 1 opens a
    # table with probability alpha beta_k / (alpha beta_k + i). One uniform per token that is
    # not its dish's first in the document.
    seated = np.zeros(capacity, np.int64)
    for k in range(capacity):
        m_k[k] = 0
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        for i in range(start, end):
            k = z[i]
            c = seated[k]
            ab = alpha * beta_w[k]
            if mutant == MUTANT_TABLES_MINIMAL:
                if c == 0:
                    m_k[k] += 1
            elif c == 0:
                m_k[k] += 1
            elif np.random.random() * (ab + c + (mutant == MUTANT_TABLES_OFF_BY_ONE)) < ab:
                m_k[k] += 1
            seated[k] = c + 1
        for i in range(start, end):
            seated[z[i]] = 0
    num_topics = 0
    tables = 0
    for k in range(capacity):
        if n_k[k] > 0:
            num_topics += 1
            tables += m_k[k]
    # gamma | K, m.. (Escobar and West 1995), beta integrated out
    if learn_gamma:
        x = np.random.beta(gamma + (mutant != MUTANT_GAMMA_AUXILIARY), tables)
        rate = gamma_b - np.log(x)
        odds = (gamma_a + num_topics - 1.0) / (tables * rate)
        shape = gamma_a + num_topics if np.random.random() * (1.0 + odds) < odds \
            else gamma_a + num_topics - 1.0
        gamma = np.random.gamma(shape, 1.0 / rate)
    # beta | m, gamma ~ Dir(m_.1, ..., m_.K, gamma), occupied slots in slot order
    total = 0.0
    for k in range(capacity):
        if n_k[k] > 0:
            g = np.random.gamma(m_k[k], 1.0)
            beta_w[k] = g
            total += g
        else:
            beta_w[k] = 0.0
    g_new = np.random.gamma(gamma, 1.0)
    total += g_new
    for k in range(capacity):
        beta_w[k] /= total
    beta_new = g_new / total
    # alpha | m.., N_d (Teh et al. 2006, appendix A): w_d ~ Beta(alpha + 1, N_d),
    # s_d ~ Bernoulli(N_d / (N_d + alpha)), alpha ~ Gamma(a + m.. - sum s, b - sum log w)
    if learn_alpha:
        shape = alpha_a + tables
        rate = alpha_b
        for d in range(num_docs):
            n = doc_offsets[d + 1] - doc_offsets[d]
            if n == 0:
                continue
            rate -= np.log(np.random.beta(alpha + 1.0, n))
            s_weight = alpha if mutant == MUTANT_ALPHA_AUXILIARY else n
            if np.random.random() * (n + alpha) < s_weight:
                shape -= 1.0
        alpha = np.random.gamma(shape, 1.0 / rate)
    globals_[0] = alpha
    globals_[1] = gamma
    globals_[2] = beta_new


def _host_global(learn_alpha, learn_gamma, alpha_prior, gamma_prior, mutant):
    def one(z, n_k, beta_w, alpha, gamma, doc_offsets, seed):
        beta_w = np.array(beta_w, np.float64)
        globals_ = np.array([alpha, gamma, 0.0], np.float64)
        m_k = np.zeros(n_k.shape, np.int32)
        _hdp_global(np.asarray(z), np.asarray(doc_offsets), np.asarray(n_k), beta_w, globals_,
                    m_k, learn_alpha, learn_gamma, alpha_prior[0], alpha_prior[1],
                    gamma_prior[0], gamma_prior[1], _numba_seed(seed), mutant)
        return (beta_w.astype(np.float32), np.float32(globals_[2]), np.float32(globals_[0]),
                np.float32(globals_[1]), m_k)

    return _host_batched(one, 1)


def global_block(key, state: SHDPState, data, *, learn_alpha: bool = True,
                 learn_gamma: bool = True, alpha_prior=(1.0, 1.0), gamma_prior=(1.0, 1.0),
                 _mutant: int = MUTANT_NONE) -> SHDPState:
    """Tables m | z, beta, alpha (eq 14); (gamma, beta) | m (eq 15); alpha | m.

    alpha / gamma are redrawn from their conditionals under Gamma(shape, rate) priors
    ``alpha_prior`` / ``gamma_prior`` (default Gamma(1, 1)) when ``learn_alpha`` /
    ``learn_gamma``, else kept fixed. ``_mutant``: TEST ONLY (``MUTANT_TABLES_*``,
    ``MUTANT_*_AUXILIARY``).
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
                        tuple(float(p) for p in gamma_prior), int(_mutant))
    beta_w, beta_new, alpha, gamma, m_k = jax.pure_callback(
        host, out_shape, state.z, state.n_k, state.beta_weights, state.alpha, state.gamma,
        data.doc_offsets, _seed_from_key(key), vmap_method="expand_dims",
    )
    return state._replace(beta_weights=beta_w, beta_new=beta_new, alpha=alpha, gamma=gamma,
                          m_k=m_k)


# ---------------------------------------------------------------------------------------------
# eta and the augmentation


def eta_block(key, state: SHDPState, data, response, *, nu2: float) -> SHDPState:
    """eta | Z, augmentation: per task N(P^-1 sum_d psi_td zbar_d, P^-1),
    P = I / nu2 + sum_d rho_td zbar_d zbar_d^T, over the occupied topics; 0 on empty slots.

    ``kernels.eta.draw_eta_cholesky`` (host, float64) on the occupied topics only, so that
    the draw does not depend on the capacity.
    """
    if response is None:
        return state
    psi, rho = _gaussian_form(response, state, data)
    eta = draw_eta_cholesky(key, state.z, data.doc_offsets, state.n_k, psi, rho, nu2,
                            skip_empty=True)
    return state._replace(eta=eta)


# Newton steps of the logistic MAP (from the last eta: a warm start; Newton converges
# quadratically on this strictly concave objective, see tests/test_hdp_baselines.py).
MAP_NEWTON_STEPS = 10


def _map_form(response, y, omega, augmentation):
    """(psi, rho) [T, D] whose Gaussian-form mean P^-1 b is the next Newton iterate of the MAP
    of eta given Z (and s2 for the Gaussian response)."""
    if response.name == "gaussian":  # the form is exact and independent of omega: one step
        return response.gaussian_form(y, augmentation)
    # logistic: log-likelihood c (y omega - log(1 + e^omega)), y in {0, 1}; the Newton step
    # from omega is the mean of the Gaussian form with rho = c s (1 - s), s = sigmoid(omega),
    # psi = c (y - s) + rho omega (gradient and Hessian of the log-likelihood at omega)
    s = jax.nn.sigmoid(omega)
    rho = response.c * s * (1.0 - s)
    return response.c * (y - s) + rho * omega, rho


def map_steps(response) -> int:
    """Newton steps :func:`eta_map_block` takes for ``response`` (``ValueError`` for a
    response it has no MAP for: only the Gaussian and the logistic)."""
    name = getattr(response, "name", None)
    if name == "gaussian":
        return 1
    if name == "logistic":
        return MAP_NEWTON_STEPS
    raise ValueError(f"the MAP of eta is implemented for the gaussian and logistic responses, "
                     f"not {name!r}")


def eta_map_block(key, state: SHDPState, data, response, *, nu2: float) -> SHDPState:
    """eta <- its MAP given Z (the sHDP paper's MAP-coefficient variant; not an exact Gibbs
    step): argmax of N(eta; 0, nu2 I) times the response's likelihood over the occupied
    topics, 0 on empty slots. Gaussian response: the conditional's mean at the current s2
    (exact in one solve); logistic: :data:`MAP_NEWTON_STEPS` Newton steps from the current eta,
    each the mean of a Gaussian form (:func:`_map_form`). ``key`` is unused (deterministic)."""
    del key

    def step(_, eta):
        omega = document_scores(state._replace(eta=eta), data)
        psi, rho = _map_form(response, data.y, omega, state.augmentation)
        return draw_eta_cholesky(None, state.z, data.doc_offsets, state.n_k, psi, rho, nu2,
                                 skip_empty=True, noise=False)

    return state._replace(eta=jax.lax.fori_loop(0, map_steps(response), step, state.eta))


def document_scores(state: SHDPState, data) -> jax.Array:
    """omega [T, D]: sum over d's tokens of eta_{t, z_n}, divided by N_d (independent of Kcap:
    it reads eta at the tokens' topics only)."""
    num_docs = data.doc_offsets.shape[0] - 1
    per_token = state.eta[:, state.z]  # [T, N]
    sums = jax.ops.segment_sum(per_token.T, data.doc_ids, num_segments=num_docs).T
    lengths = jnp.diff(data.doc_offsets).astype(jnp.float32)
    return sums / jnp.maximum(lengths, 1.0)


def augmentation_block(key, state: SHDPState, data, response) -> SHDPState:
    """augmentation | Z, eta: the response's own draw given omega."""
    if response is None:
        return state
    omega = document_scores(state, data)
    aug = response.draw_augmentation(key, data.y, omega, state.augmentation)
    return state._replace(augmentation=aug)


# ---------------------------------------------------------------------------------------------
# Init, growth, monitors, snapshot


def init_state(key, data, vocab_size: int, capacity: int, response=None, *,
               init_topics: int = 1, alpha: float = 1.0, gamma: float = 1.0) -> SHDPState:
    """A start: tokens uniformly among ``init_topics`` topics (slots 0..init_topics-1),
    equal stick weights 1 / (K + 1) for the occupied ones and the rest to beta_new, eta = 0
    (the cycle should draw eta, or run ``global_block``, first), alpha and gamma at the given
    values, the response's initial augmentation. Jittable; ``capacity`` and ``init_topics``
    static."""
    capacity, init_topics = int(capacity), int(init_topics)
    if not 1 <= init_topics <= capacity:
        raise ValueError(f"need 1 <= init_topics <= capacity, got {init_topics}, {capacity}")
    num_docs = data.doc_offsets.shape[0] - 1
    num_tasks = data.y.shape[0]
    z = jax.random.randint(key, data.words.shape, 0, init_topics, jnp.int32)
    n_dk = jnp.zeros((num_docs, capacity), jnp.int32).at[data.doc_ids, z].add(1)
    n_wk = jnp.zeros((vocab_size, capacity), jnp.int32).at[data.words, z].add(1)
    n_k = jnp.zeros((capacity,), jnp.int32).at[z].add(1)
    occupied = n_k > 0
    weight = 1.0 / (jnp.sum(occupied) + 1.0)
    beta_w = jnp.where(occupied, weight, 0.0).astype(jnp.float32)
    aug = response.init_augmentation(data.y) if response is not None else data.y
    return SHDPState(z, n_dk, n_wk, n_k, beta_w, (1.0 - beta_w.sum()).astype(jnp.float32),
                     jnp.zeros((num_tasks, capacity), jnp.float32), jnp.float32(alpha),
                     jnp.float32(gamma), aug, jnp.zeros((capacity,), jnp.int32),
                     jnp.zeros((), jnp.bool_))


def grow(state: SHDPState, new_capacity: int) -> SHDPState:
    """The same state with ``new_capacity`` slots: the new slots empty (pure zero padding of
    the slot axis; everything else, the overflow flag included, unchanged)."""
    extra = int(new_capacity) - state.capacity
    if extra < 0:
        raise ValueError(f"cannot shrink capacity {state.capacity} to {new_capacity}")

    def pad(a):
        widths = [(0, 0)] * (a.ndim - 1) + [(0, extra)]
        return jnp.pad(a, widths)

    return state._replace(n_dk=pad(state.n_dk), n_wk=pad(state.n_wk), n_k=pad(state.n_k),
                          beta_weights=pad(state.beta_weights), eta=pad(state.eta),
                          m_k=pad(state.m_k))


def collapsed_log_likelihood(state: SHDPState, beta: float) -> jax.Array:
    """log p(W | Z) with the topics integrated out (label-invariant; empty slots add 0)."""
    vocab_size = state.n_wk.shape[-2]
    occupied = state.n_k > 0
    per_topic = jnp.where(occupied, gammaln(vocab_size * beta)
                          - gammaln(state.n_k.astype(jnp.float32) + vocab_size * beta), 0.0)
    per_word = gammaln(state.n_wk.astype(jnp.float32) + beta) - gammaln(beta)
    return per_topic.sum() + per_word.sum()


def monitors(state: SHDPState, data, response, *, beta: float, task_monitors=None) -> dict:
    """Small label-invariant per-draw quantities.

    num_topics (occupied), alpha, gamma, beta_new, num_tables (m.. of the last global block),
    log_likelihood log p(W | Z) (nats); supervised: eta_norm ||eta||_F over occupied topics,
    train_loss (mean minus log pseudo-likelihood, nats), augmentation_mean [T], and those of
    ``task_monitors(y, omega)`` (the task's, ``Task.train_monitors``: train_accuracy for
    classifiers, residual_norm and train_mse for regression).
    """
    out = {
        "num_topics": jnp.sum(state.n_k > 0).astype(jnp.int32),
        "alpha": state.alpha,
        "gamma": state.gamma,
        "beta_new": state.beta_new,
        "num_tables": jnp.sum(state.m_k).astype(jnp.int32),
        "log_likelihood": collapsed_log_likelihood(state, beta),
    }
    if response is not None:
        omega = document_scores(state, data)
        num_tasks = state.eta.shape[0]
        out.update(
            eta_norm=jnp.sqrt(jnp.sum(state.eta**2)),
            train_loss=-jnp.mean(response.log_pseudo_likelihood(data.y, omega)),
            augmentation_mean=jnp.mean(state.augmentation.reshape(num_tasks, -1), axis=-1),
            **(task_monitors(data.y, omega) if task_monitors is not None else {}),
        )
    return out


def snapshot(state: SHDPState, *, beta: float) -> dict:
    """Globals for prediction (small but [V, Kcap]: thin before collecting).

    phi_wk float32 [V, Kcap]: (n_wk + beta) / (n_k + V beta) on occupied slots, 0 on empty;
    eta [T, Kcap]; beta_weights [Kcap]; beta_new, alpha, gamma; occupied bool [Kcap]; n_k
    int32 [Kcap] (tokens per topic, for ``topiczoo.topics``).
    """
    vocab_size = state.n_wk.shape[-2]
    occupied = state.n_k > 0
    phi = (state.n_wk + beta) / (state.n_k + vocab_size * beta)[..., None, :]
    return {"phi_wk": jnp.where(occupied[..., None, :], phi, 0.0).astype(jnp.float32),
            "eta": state.eta, "beta_weights": state.beta_weights, "beta_new": state.beta_new,
            "alpha": state.alpha, "gamma": state.gamma, "occupied": occupied, "n_k": state.n_k}


# ---------------------------------------------------------------------------------------------
# Test chains (prediction): topics fixed, no response term (eq 18)


@numba.njit(cache=True, nogil=True)
def _hdp_test_chain(words, doc_offsets, phi_wk, slots, beta_w, beta_new, alpha, gamma, beta,
                    num_burnin, num_draws, lag, seed, out):
    """Per document: the direct-assignment chain of eq 18 with the training topics fixed.

    A token goes to a training topic a (slot ``slots[a]``) with weight
    (n_da + alpha beta_a) phi_a(w), to a topic born in this document j with weight
    (n_dj + alpha beta_j) (n_jw + beta) / (n_j + V beta) (its word distribution integrated
    out given the document's own tokens), or to a new one with weight alpha beta_new / V;
    births split beta_new by Beta(1, gamma) and deaths return the weight, as in training. At
    most min(N_d, 64) topics live in a document at once (when all are taken the new-topic
    option is closed). out [num_draws, D, Kcap] (zeroed by the caller) receives n_da / N_d of
    the training topics: the born topics are ignored (their tokens count in N_d; their
    coefficient has prior mean 0).
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_global = slots.shape[0]
    vocab = phi_wk.shape[0]
    v_beta = vocab * beta
    local_id = np.full(vocab, -1, np.int64)
    for d in range(num_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        length = end - start
        if length == 0:
            continue
        num_unique = 0
        u = np.empty(length, np.int64)
        for i in range(length):
            w = words[start + i]
            if local_id[w] < 0:
                local_id[w] = num_unique
                num_unique += 1
            u[i] = local_id[w]
        local_cap = min(length, 64)
        local_words = np.zeros((local_cap, num_unique), np.int64)
        local_n = np.zeros(local_cap, np.int64)
        local_beta = np.zeros(local_cap)
        n_a = np.zeros(num_global)
        weights = np.empty(num_global + local_cap + 1)
        blocks = np.empty((num_global + local_cap + _BLOCK) // _BLOCK)
        pick_local = np.empty(local_cap + 1, np.int64)
        b_new = beta_new
        z = np.empty(length, np.int64)  # a >= 0: training topic a; -(j + 1): local topic j
        for i in range(length):
            a = np.random.randint(num_global) if num_global > 0 else 0
            z[i] = a
            n_a[a] += 1.0
        total_sweeps = num_burnin + num_draws * lag
        kept = 0
        for sweep in range(1, total_sweeps + 1):
            for i in range(length):
                w = words[start + i]
                old = z[i]
                if old >= 0:
                    n_a[old] -= 1.0
                else:
                    j = -old - 1
                    local_n[j] -= 1
                    local_words[j, u[i]] -= 1
                    if local_n[j] == 0:
                        b_new += local_beta[j]
                        local_beta[j] = 0.0
                for a in range(num_global):
                    weights[a] = (n_a[a] + alpha * beta_w[slots[a]]) * phi_wk[w, slots[a]]
                num_options = num_global
                free = -1
                for j in range(local_cap):
                    if local_n[j] > 0:
                        weights[num_options] = ((local_n[j] + alpha * local_beta[j])
                                                * (local_words[j, u[i]] + beta)
                                                / (local_n[j] + v_beta))
                        pick_local[num_options - num_global] = j
                        num_options += 1
                    elif free < 0:
                        free = j
                if free >= 0:
                    weights[num_options] = alpha * b_new / vocab
                    pick_local[num_options - num_global] = -1
                    num_options += 1
                pick = _draw(weights, num_options, blocks, np.random.random())
                if pick < num_global:
                    z[i] = pick
                    n_a[pick] += 1.0
                    continue
                j = pick_local[pick - num_global]
                if j < 0:
                    j = free
                    rest = np.exp(np.log(np.random.random()) / gamma)
                    local_beta[j] = (1.0 - rest) * b_new
                    b_new = rest * b_new
                z[i] = -(j + 1)
                local_n[j] += 1
                local_words[j, u[i]] += 1
            if sweep > num_burnin and (sweep - num_burnin) % lag == 0:
                for a in range(num_global):
                    out[kept, d, slots[a]] = n_a[a] / length
                kept += 1
        for i in range(length):
            local_id[words[start + i]] = -1


def sample_test_topics(words, doc_offsets, snapshot_, *, beta: float, num_burnin: int,
                       num_draws: int, lag: int = 1, seed: int = 0) -> np.ndarray:
    """Test-document topic proportions with the training topics of ``snapshot_`` fixed (eq 18).

    Args:
      words: int [N] test tokens (training-vocabulary ids); doc_offsets: int [D+1].
      snapshot_: one chain's :func:`snapshot` (numpy or jax arrays, no chain axis).
      beta: the topics' Dirichlet parameter (for the topics born in a test document).
      num_burnin, num_draws, lag: the test chain's burn-in, kept draws and sweeps between them.
      seed: host seed.
    Returns float32 [num_draws, D, Kcap]: zbar over the training slots (0 on empty slots; the
    tokens of topics born in the test chain count in N_d only); scores by
    :func:`score_test_documents`.
    """
    if num_draws < 1 or lag < 1 or num_burnin < 0:
        raise ValueError("need num_draws >= 1, lag >= 1 and num_burnin >= 0")
    phi = np.ascontiguousarray(snapshot_["phi_wk"], dtype=np.float64)
    slots = np.flatnonzero(np.asarray(snapshot_["occupied"])).astype(np.int64)
    out = np.zeros((num_draws, len(doc_offsets) - 1, phi.shape[1]), np.float32)
    _hdp_test_chain(np.asarray(words, np.int64), np.asarray(doc_offsets, np.int64), phi, slots,
                    np.asarray(snapshot_["beta_weights"], np.float64),
                    float(snapshot_["beta_new"]), float(snapshot_["alpha"]),
                    float(snapshot_["gamma"]), float(beta), int(num_burnin), int(num_draws),
                    int(lag), int(seed), out)
    return out


def score_test_documents(snapshot_, zbar_draws) -> np.ndarray:
    """omega [num_draws, T, D] = eta . zbar for each test draw (the prediction's S(i, j))."""
    return np.einsum("tk,jdk->jtd", np.asarray(snapshot_["eta"], np.float32), zbar_draws)


# ---------------------------------------------------------------------------------------------
# The family, bound to its hyperparameters (for the generic kernel)


class SHDPFamily(NamedTuple):
    """The sHDP's blocks bound to its hyperparameters: ``init(key, data)``, ``blocks``
    (name, ``fn(key, state, data) -> state``) in their cycle order, ``monitors(state, data)``,
    ``snapshot(state)``. Every block is exact on its own, so any order or random mixture of
    them leaves the posterior invariant; the cycle below draws eta first (the start has
    eta = 0)."""

    vocab_size: int
    capacity: int
    response: object = None
    beta: float = 0.01
    nu2: float = 1.0
    num_aux: int = 1
    learn_alpha: bool = True
    learn_gamma: bool = True
    alpha: float = 1.0  # start (or fixed) values
    gamma: float = 1.0
    alpha_prior: tuple = (1.0, 1.0)
    gamma_prior: tuple = (1.0, 1.0)
    init_topics: int = 1
    eta_map: bool = False  # eta set to its MAP given Z (eta_map_block) instead of drawn

    def init(self, key, data) -> SHDPState:
        """A start state (:func:`init_state`) with this family's settings."""
        return init_state(key, data, self.vocab_size, self.capacity, self.response,
                          init_topics=self.init_topics, alpha=self.alpha, gamma=self.gamma)

    @property
    def blocks(self):
        """The Gibbs cycle's (name, update) pairs in order: eta, topics, global,
        augmentation (unsupervised: topics and global)."""
        def eta(key, state, data):
            if self.eta_map:
                return eta_map_block(key, state, data, self.response, nu2=self.nu2)
            return eta_block(key, state, data, self.response, nu2=self.nu2)

        def topics(key, state, data):
            return topics_block(key, state, data, self.response, beta=self.beta, nu2=self.nu2,
                                num_aux=self.num_aux)

        def globals_(key, state, data):
            return global_block(key, state, data, learn_alpha=self.learn_alpha,
                                learn_gamma=self.learn_gamma, alpha_prior=self.alpha_prior,
                                gamma_prior=self.gamma_prior)

        def augmentation(key, state, data):
            return augmentation_block(key, state, data, self.response)

        named = [("eta", eta), ("topics", topics), ("global", globals_),
                 ("augmentation", augmentation)]
        if self.response is None:
            named = [b for b in named if b[0] in ("topics", "global")]
        return tuple(named)

    def monitors(self, state, data) -> dict:
        """The per-draw monitors (:func:`monitors`)."""
        return monitors(state, data, self.response, beta=self.beta)

    def snapshot(self, state) -> dict:
        """The globals prediction reads (:func:`snapshot`)."""
        return snapshot(state, beta=self.beta)
