"""The sHDP's topic sweep: z | rest by direct assignment (eq 13), births and deaths included.

With the token removed, an occupied topic k weighs

    (n_dk + alpha beta_k) (n_wk + beta) / (n_k + V beta) * response factor of k,

the response factor being the Gaussian form at omega_d(k) = (eta_k + sum_{m != n} eta_{z_m}) / N_d
(``kernels.response_table``), and a new topic weighs alpha beta_new / V times the response
factor at its own eta. That eta is not integrable in closed form for every response, so Neal's
algorithm 8: ``num_aux`` = m auxiliary topics, each of weight alpha beta_new / (m V), their eta
drawn from the prior N(0, nu2) afresh for every token, except that when the token was alone in
its topic the first one keeps that topic's eta. They are drawn lazily: only when a bound on
their total weight cannot settle the draw (:func:`_draw_topic`, an exact rejection step). A
topic emptied by the removal dies: its weight returns to beta_new (:func:`_death`: the block
(z_dn, beta_k) is drawn jointly given beta_k + beta_new, which integrates to the weights
above). A born topic takes b beta_new, b ~ Beta(1, gamma), leaving (1 - b) beta_new, and the eta
of the auxiliary topic chosen (:func:`_birth`).

Every decision reads the occupied topics only, never the capacity: the loops over the topics
run over the slots 0..S-1, S = 1 + the highest occupied slot, a free slot weighing 0 (contiguous
loops that vectorise; births take the lowest free slot, so few slots below S are free), and the
variates drawn are the same whatever the capacity. When a birth finds no free slot the token
goes back to its topic and the sweep stops with status 1 (``kernels.hdp`` then grows the
capacity and redoes the chunk).

The response factor comes from the per-document tables of ``kernels.response_table``, extended
to births and deaths: a born topic gets its AB entry and its column in every row of the
document's table by direct exps (:func:`_born_columns`), a row is keyed by the incarnation of
its topic (a slot that dies and is born again gets a new row), the auxiliary topics' factors are
exps of their exponents on the same scale. The bounds are checked at the start of each document
and after each move; when they fail, when an auxiliary exponent exceeds the largest safe one
(that token only) or the table is full, the per-token log-space form is used: the same
conditional and the same variates, so the draws agree up to floating rounding
(``max_exponent < 0`` forces log space: the reference of the tests).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numba
import numpy as np

from topiczoo.kernels import response_table as rt
from topiczoo.kernels.categorical import block_totals, draw, num_blocks, search_blocks
from topiczoo.kernels.host import (batched, document_loop, numba_seed, read_only,
                                   seed_words_from_key)
from topiczoo.kernels.topics import _count_token

# Rows of the per-document exp tables (one per topic incarnation met in a document); a document
# that needs more is finished in log space. A constant, so that nothing depends on the capacity.
_TABLE_ROWS = 2048

#: The sHDP sweep's (max_exponent, table_rows) as the package's step passes them (no defaults:
#: one signature, one compilation).
TABLE_ARGUMENTS = (rt.MAX_EXPONENT, _TABLE_ROWS)


@numba.njit(cache=True, nogil=True, inline="always")
def _insert_sorted(active, num_active, slot):
    """Add ``slot`` to the sorted list ``active[:num_active]``; returns the new length."""
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
    """Remove ``slot`` from the sorted list ``active[:num_active]``; returns the new length."""
    i = 0
    while active[i] != slot:
        i += 1
    for j in range(i, num_active - 1):
        active[j] = active[j + 1]
    return num_active - 1


@numba.njit(cache=True, nogil=True, inline="always")
def _document_count_factor(d, k, n_dk, inv_nk, alpha, beta_w, factor, tb):
    """dab_k = (n_dk + alpha beta_k) / (n_k + V beta) times ``factor`` (AB_k, or 1 without a
    response): the factor of topic k's weight that is the same for every token of document d."""
    tb.dab[k] = (n_dk[d, k] + alpha * beta_w[k]) * inv_nk[k] * factor


@numba.njit(cache=True, nogil=True, inline="always")
def _death(k_old, beta_w, beta_new, active, num_active, num_slots, eta, eta_old, tb):
    """Topic k_old lost its last token: its stick weight returns to beta_new, its slot leaves
    the occupied list (S shrinks if it was the highest), its row and dab are dropped and its eta
    moves to ``eta_old`` (the first auxiliary topic's, Neal's algorithm 8). Returns (beta_new,
    the number of occupied topics, S)."""
    beta_new += beta_w[k_old]
    beta_w[k_old] = 0.0
    num_active = _remove_sorted(active, num_active, k_old)
    if k_old == num_slots - 1:
        num_slots = _num_slots(active, num_active)
    tb.row_of[k_old] = -1
    tb.dab[k_old] = 0.0
    for t in range(eta.shape[0]):
        eta_old[t] = eta[t, k_old]
        eta[t, k_old] = 0.0
    return beta_new, num_active, num_slots


@numba.njit(cache=True, nogil=True, inline="always")
def _log_space_existing(d, w, active, num_active, num_slots, eta, psi, rho, inv_n, n_dk, n_wk,
                        inv_nk, beta_w, alpha, beta, weights, tb):
    """Log-space weights of the occupied topics for token (d, w), by slot (0 on free slots
    below S); log_factor holds their exponents by position in ``active``. Returns the shift
    (the largest exponent, 0 if there is no topic)."""
    top = rt.log_space_factors_of(d, eta, psi, rho, inv_n, active, num_active, tb)
    for k in range(num_slots):
        weights[k] = 0.0
    for idx in range(num_active):
        kk = active[idx]
        weights[kk] = ((n_dk[d, kk] + alpha * beta_w[kk]) * (n_wk[w, kk] + beta) * inv_nk[kk]
                       * tb.shifted[idx])
    return top


@numba.njit(cache=True, nogil=True, inline="always")
def _auxiliary_etas(aux, num_aux, sd, died, eta_old):
    """Neal's algorithm 8: the auxiliary topics' eta, fresh prior draws N(0, nu2) (rounded to
    float32, as eta is stored); the first is the emptied topic's own when the token was alone."""
    for j in range(num_aux):
        for t in range(aux.shape[1]):
            aux[j, t] = np.float32(sd * np.random.standard_normal())
    if died:
        for t in range(aux.shape[1]):
            aux[0, t] = eta_old[t]


@numba.njit(cache=True, nogil=True, inline="always")
def _new_topic_weights(d, w, active, num_active, num_slots, num_new, new_weight, aux, fast,
                       top, centred_old, eta, psi, rho, inv_n, n_dk, n_wk, inv_nk, beta_w, alpha,
                       beta, weights, tb):
    """The auxiliary topics' weights new_weight * exp(their exponent), after the existing ones
    (positions S..S+m-1), on the scale of the existing weights. When an exponent would exceed
    the largest safe one, every weight is recomputed in log space, shifted by the maximum."""
    num_tasks = eta.shape[0]
    safe = True
    for j in range(num_new):
        acc = 0.0
        for t in range(num_tasks):
            if fast:
                e = aux[j, t] - tb.mid[t]
                acc += e * (tb.a[t] - 0.5 * tb.c[t] * e) + tb.c[t] * centred_old[t] * e
            else:
                e = aux[j, t]
                acc += e * (tb.lin[t] - tb.quad[t] * e)
        tb.log_factor[num_slots + j] = acc - top
        if acc - top > rt.MAX_EXPONENT:
            safe = False
    if safe:
        for j in range(num_new):
            weights[num_slots + j] = new_weight * np.exp(tb.log_factor[num_slots + j])
        return
    # (only when the bound exceeded the existing total) everything in log space
    top = _log_space_existing(d, w, active, num_active, num_slots, eta, psi, rho, inv_n, n_dk,
                              n_wk, inv_nk, beta_w, alpha, beta, weights, tb)
    top_all = top
    for j in range(num_new):
        acc = 0.0
        for t in range(num_tasks):
            e = aux[j, t]
            acc += e * (tb.lin[t] - tb.quad[t] * e)
        tb.log_factor[num_slots + j] = acc
        top_all = max(top_all, acc)
    for idx in range(num_active):
        kk = active[idx]
        weights[kk] = ((n_dk[d, kk] + alpha * beta_w[kk]) * (n_wk[w, kk] + beta) * inv_nk[kk]
                       * np.exp(tb.log_factor[idx] - top_all))
    for j in range(num_new):
        weights[num_slots + j] = new_weight * np.exp(tb.log_factor[num_slots + j] - top_all)


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_topic(d, w, active, num_active, num_slots, num_new, new_weight, aux, sd, died,
                eta_old, fast, row_old, centred_old, eta, psi, rho, inv_n, n_dk, n_wk, inv_nk,
                beta_w, alpha, beta, weights, blocks, tb):
    """The token's topic among the occupied ones (their slot) and the new (S + j for auxiliary
    topic j), supervised.

    The existing topics' weights come first. The auxiliary topics' exponent
    g(e) = sum_t A_t e_t - c_t e_t^2 / 2 (on the scale of the existing weights) is at most
    G = sum_t A_t^2 / (2 c_t), so their total weight is at most B = m new_weight e^G. When
    B <= the existing total W, u is drawn on [0, W + B): below W it picks an existing topic
    without drawing the auxiliaries; otherwise they are drawn (their actual total V <= B) and u
    is accepted if u < W + V, else the topic is drawn again from the exact conditional given
    them (rejection sampling given the auxiliaries, which are independent of u: exact). When
    B > W, the auxiliaries are drawn first and the draw is direct.
    """
    num_tasks = eta.shape[0]
    gmax = 0.0
    top = 0.0
    if fast:
        for k in range(num_slots):
            weights[k] = tb.dab[k] * (n_wk[w, k] + beta) * tb.table[row_old, k]
        for t in range(num_tasks):
            at = tb.a[t] + tb.c[t] * centred_old[t]
            gmax += at * at / (2.0 * tb.c[t]) if tb.c[t] > 0 else np.inf
    else:
        top = _log_space_existing(d, w, active, num_active, num_slots, eta, psi, rho, inv_n,
                                  n_dk, n_wk, inv_nk, beta_w, alpha, beta, weights, tb)
        for t in range(num_tasks):
            gmax += tb.lin[t] * tb.lin[t] / (4.0 * tb.quad[t]) if tb.quad[t] > 0 else np.inf
        gmax -= top
    existing = block_totals(weights, num_slots, blocks)
    bound = np.inf
    if gmax <= rt.MAX_EXPONENT - 1.0:
        bound = num_new * new_weight * np.exp(gmax)
    lazy = bound <= existing
    u = 0.0
    if lazy:
        u = np.random.random() * (existing + bound)
    if lazy and u < existing:
        return search_blocks(weights, num_slots, blocks, u)
    _auxiliary_etas(aux, num_new, sd, died, eta_old)
    _new_topic_weights(d, w, active, num_active, num_slots, num_new, new_weight, aux, fast, top,
                       centred_old, eta, psi, rho, inv_n, n_dk, n_wk, inv_nk, beta_w, alpha,
                       beta, weights, tb)
    num_options = num_slots + num_new
    total = block_totals(weights, num_options, blocks)
    if lazy and u < total:
        return search_blocks(weights, num_options, blocks, u)
    return search_blocks(weights, num_options, blocks, np.random.random() * total)


@numba.njit(cache=True, nogil=True, inline="always")
def _free_slot(n_k):
    """The lowest slot without tokens, -1 if every slot is taken."""
    for k in range(n_k.shape[0]):
        if n_k[k] == 0:
            return k
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def _birth(k_new, j, gamma, beta_w, beta_new, aux, eta, active, num_active, num_slots, tb):
    """Auxiliary topic j is born in the free slot k_new: it takes b beta_new, b ~ Beta(1, gamma)
    (1 - b = U^(1 / gamma)), and the auxiliary's eta. Returns (beta_new, the number of occupied
    topics, S)."""
    rest = np.exp(np.log(np.random.random()) / gamma)
    beta_w[k_new] = (1.0 - rest) * beta_new
    beta_new = rest * beta_new
    for t in range(eta.shape[0]):
        eta[t, k_new] = aux[j, t]
        tb.cen[t, k_new] = aux[j, t] - tb.mid[t]
    num_active = _insert_sorted(active, num_active, k_new)
    num_slots = max(num_slots, k_new + 1)
    return beta_new, num_active, num_slots


@numba.njit(cache=True, nogil=True, inline="always")
def _born_columns(k_new, used, tb):
    """A born topic's AB entry (before the move) and its column in every row of the document's
    table, by direct exps."""
    num_tasks = tb.c.shape[0]
    acc = 0.0
    for t in range(num_tasks):
        e = tb.cen[t, k_new]
        acc += e * (tb.a[t] - 0.5 * tb.c[t] * e)
    tb.ab[k_new] = np.exp(acc)
    for r in range(used):
        acc = 0.0
        for t in range(num_tasks):
            acc += tb.c[t] * tb.row_cen[r, t] * tb.cen[t, k_new]
        tb.table[r, k_new] = np.exp(acc)
        tb.inv_table[r, k_new] = 1.0 / tb.table[r, k_new]


@numba.njit(cache=True, nogil=True, inline="always")
def _widened(k_new, tb):
    """Whether a born topic widened some h_t (the range of the centred weights)."""
    widened = False
    for t in range(tb.c.shape[0]):
        if abs(tb.cen[t, k_new]) > tb.half[t]:
            tb.half[t] = abs(tb.cen[t, k_new])
            widened = True
    return widened


@numba.njit(cache=True, nogil=True, inline="always")
def _plain_weights(w, num_slots, new_weight, n_wk, beta, weights, tb):
    """Without a response: weights of the occupied topics (by slot) dab_k (n_wk + beta), then
    the new topic's."""
    for k in range(num_slots):
        weights[k] = tb.dab[k] * (n_wk[w, k] + beta)
    weights[num_slots] = new_weight


@document_loop
def _sweep_document(d, z, n_dk, n_wk, n_k, beta_w, globals_, eta, words, doc_offsets, psi, rho,
                    beta, sd, num_new, active, sizes, inv_nk, weights, blocks, aux, eta_old,
                    centred_old, tb, max_exponent, table_rows):
    """Document d's tokens in turn (module docstring). ``sizes`` int64 [3]: the number of
    occupied topics, S and the table rows in use, updated; ``globals_``: (alpha, gamma,
    beta_new), beta_new updated. Returns 1 if a birth found no free slot, else 0."""
    alpha, gamma, beta_new = globals_[0], globals_[1], globals_[2]
    num_active, num_slots, used = sizes[0], sizes[1], sizes[2]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    start = doc_offsets[d]
    end = doc_offsets[d + 1]
    inv_n = 1.0 / (end - start)
    rt.begin_document(d, start, end, inv_n, z, eta, psi, rho, tb)
    fast = False
    y_bound = 0.0
    if num_tasks > 0 and max_exponent >= 0:
        x_bound, y_bound = rt.exponent_bounds(tb)
        fast = x_bound + 2.0 * y_bound <= max_exponent  # False for nan/inf too
    if num_tasks == 0:
        for k in range(num_slots):
            _document_count_factor(d, k, n_dk, inv_nk, alpha, beta_w, 1.0, tb)
    if fast:
        rt.forget_rows(tb, used)
        used = 0
        rt.document_factors(tb, num_slots)
        for k in range(num_slots):
            _document_count_factor(d, k, n_dk, inv_nk, alpha, beta_w, tb.ab[k], tb)
    status = 0
    for i in range(start, end):
        w = words[i]
        k_old = z[i]
        _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
        for t in range(num_tasks):
            tb.score[t] -= eta[t, k_old]
            centred_old[t] = tb.cen[t, k_old]
        row_old = -1
        if fast:  # the row of the token's topic (before it may die)
            row_old = tb.row_of[k_old]
            if row_old < 0:
                if used < table_rows:
                    rt.new_row(tb, used, k_old, centred_old, num_slots)
                    row_old = used
                    used += 1
                else:
                    fast = False
        died = n_k[k_old] == 0
        if died:
            beta_new, num_active, num_slots = _death(k_old, beta_w, beta_new, active,
                                                     num_active, num_slots, eta, eta_old, tb)
        elif fast:
            _document_count_factor(d, k_old, n_dk, inv_nk, alpha, beta_w, tb.ab[k_old], tb)
        elif num_tasks == 0:
            _document_count_factor(d, k_old, n_dk, inv_nk, alpha, beta_w, 1.0, tb)
        new_weight = alpha * beta_new / (num_new * n_wk.shape[0])
        if num_tasks == 0:
            _plain_weights(w, num_slots, new_weight, n_wk, beta, weights, tb)
            pick = draw(weights, num_slots + 1, blocks, np.random.random())
        else:
            pick = _draw_topic(d, w, active, num_active, num_slots, num_new, new_weight, aux,
                               sd, died, eta_old, fast, row_old, centred_old, eta, psi, rho,
                               inv_n, n_dk, n_wk, inv_nk, beta_w, alpha, beta, weights, blocks,
                               tb)
        born = False
        if pick < num_slots:  # an occupied slot (a free one has weight 0)
            k_new = np.int64(pick)
        else:  # a birth, in the lowest free slot
            k_new = _free_slot(n_k)
            if k_new < 0:  # no free slot: put the token back and stop
                k_new = k_old
                status = 1
            else:
                born = True
                beta_new, num_active, num_slots = _birth(k_new, pick - num_slots, gamma, beta_w,
                                                         beta_new, aux, eta, active,
                                                         num_active, num_slots, tb)
        z[i] = k_new
        _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
        for t in range(num_tasks):
            tb.score[t] += eta[t, k_new]
        if num_tasks == 0:
            _document_count_factor(d, k_new, n_dk, inv_nk, alpha, beta_w, 1.0, tb)
        if status:
            break
        if born and num_tasks > 0:
            tb.row_of[k_new] = -1
            if _widened(k_new, tb):
                y_bound = rt.y_bound_of(tb)
            if fast:
                _born_columns(k_new, used, tb)
        if not fast:
            continue
        if k_new != k_old or born:  # a move (a reborn slot is another topic)
            row_new = tb.row_of[k_new]
            if row_new < 0:
                if used < table_rows:
                    rt.new_row(tb, used, k_new, tb.cen[:, k_new], num_slots)
                    row_new = used
                    used += 1
                else:
                    fast = False
                    continue
            rt.move_factors(tb, row_old, row_new, num_slots)
            x_bound = rt.moved_score(tb, k_new, centred_old)
            fast = x_bound + 2.0 * y_bound <= max_exponent
        _document_count_factor(d, k_new, n_dk, inv_nk, alpha, beta_w, tb.ab[k_new], tb)
    globals_[2] = beta_new
    sizes[0], sizes[1], sizes[2] = num_active, num_slots, used
    return status


@numba.njit(cache=True, nogil=True)
def _hdp_sweep(z, n_dk, n_wk, n_k, beta_w, globals_, eta, words, doc_offsets, psi, rho, beta,
               nu2, num_aux, seed, max_exponent, table_rows):
    """One in-place direct-assignment sweep over all tokens (module docstring, eq 13).

    z int32 [N]; n_dk [D, Kcap], n_wk [V, Kcap], n_k [Kcap] int32; beta_w float64 [Kcap];
    globals_ float64 [3] = (alpha, gamma, beta_new), beta_new updated in place; eta float64
    [T, Kcap]; psi, rho float64 [T, D]; ``max_exponent < 0`` sweeps every token in log space;
    ``table_rows``: the rows of a document's exp table (fewer make documents finish in log
    space sooner). Returns 1 if a birth found no free slot (the sweep then stopped with that
    token back in its topic), else 0.

    Variates per token: one uniform for the topic; the auxiliaries' ``num_aux * T`` normals
    only when the bound on their weight does not settle the draw without them
    (:func:`_draw_topic`), then possibly one more uniform; one more uniform at a birth (the
    Beta(1, gamma) split).
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    capacity = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
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
    # S, 1 + the highest occupied slot: a free slot below it weighs 0 (its n_dk and beta_k are
    # 0, its dab is set to 0 when it dies, its centred eta and so its table entries stay within
    # the bounds)
    sizes = np.array([num_active, _num_slots(active, num_active), 0], np.int64)
    inv_nk = np.empty(capacity)
    for k in range(capacity):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    weights = np.empty(capacity + num_new)  # of the occupied topics by slot, then the new
    blocks = np.empty(num_blocks(capacity + num_new))
    aux = np.zeros((num_new, num_tasks))
    eta_old = np.zeros(num_tasks)
    centred_old = np.zeros(num_tasks)
    tb = rt.response_tables(num_tasks, capacity, table_rows if num_tasks > 0 else 0, num_new)
    rt.centre(eta, active, num_active, tb)  # over the occupied topics, in slot order
    for d in range(num_docs):
        if doc_offsets[d + 1] == doc_offsets[d]:
            continue
        if _sweep_document(d, z, n_dk, n_wk, n_k, beta_w, globals_, eta, words, doc_offsets,
                           psi, rho, beta, sd, num_new, active, sizes, inv_nk, weights, blocks,
                           aux, eta_old, centred_old, tb, max_exponent, table_rows):
            return 1
    return 0


def _host_topics(beta, nu2, num_aux):
    def one(z, n_dk, n_wk, n_k, beta_w, beta_new, eta, alpha, gamma, words, doc_offsets, psi,
            rho, seed):
        z, n_dk, n_wk, n_k = (np.array(a, np.int32) for a in (z, n_dk, n_wk, n_k))
        beta_w = np.array(beta_w, np.float64)
        eta = np.array(eta, np.float64)
        globals_ = np.array([alpha, gamma, beta_new], np.float64)
        status = _hdp_sweep(z, n_dk, n_wk, n_k, beta_w, globals_, eta,
                            *read_only(words, doc_offsets),
                            np.asarray(psi, np.float64), np.asarray(rho, np.float64),
                            beta, nu2, num_aux, numba_seed(seed), *TABLE_ARGUMENTS)
        return (z, n_dk, n_wk, n_k, beta_w.astype(np.float32), np.float32(globals_[2]),
                eta.astype(np.float32), np.bool_(status))

    return batched(one, 1)


def topics_block(key, state, data, psi, rho, *, beta: float, nu2: float, num_aux: int = 1):
    """z | rest: one direct-assignment sweep over every token (eq 13, module docstring).

    Args:
      key: JAX key (the host seed is derived from it).
      state: ``kernels.hdp.SHDPState``; data: ``CorpusData`` (words, doc_offsets).
      psi, rho: float32 [T, D] the response's Gaussian form (T = 0: the plain HDP).
      beta: the topics' symmetric Dirichlet parameter; nu2: prior variance of eta.
      num_aux: Neal's m, the auxiliary new topics per token (supervised only).
    Returns the new state; ``overflow`` is set (and stays set) if a birth found no free slot.
    """
    if int(num_aux) < 1:
        raise ValueError(f"num_aux must be >= 1, got {num_aux}")
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
        _host_topics(float(beta), float(nu2), int(num_aux)), out_shape,
        state.z, state.n_dk, state.n_wk, state.n_k, state.beta_weights, state.beta_new,
        state.eta, state.alpha, state.gamma, data.words, data.doc_offsets, psi, rho,
        seed_words_from_key(key), vmap_method="expand_dims",
    )
    return state._replace(z=z, n_dk=n_dk, n_wk=n_wk, n_k=n_k, beta_weights=beta_w,
                          beta_new=beta_new, eta=eta, overflow=state.overflow | overflow)
