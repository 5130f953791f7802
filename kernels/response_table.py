"""The response's factor in a token's conditional, as per-document tables.

Every response enters a token's topic conditional through one Gaussian-form factor (see
``models.responses``): with the counts excluding token n of document d and
``omega_td(k) = (eta_tk + sum_{m != n} eta_{t, z_m}) / N_d``,

    response factor of topic k  =  prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2).

The collapsed sweep of the parametric family (``kernels.topics``), the sHDP's direct-assignment
sweep (``kernels.hdp.sweep``) and the document-parallel sweep (``kernels.parallel``) multiply
their count weights by it. Computed directly it costs K exps per token; here it costs a few
multiplications per topic and token, as follows.

Let c_t = rho_td / N_d^2, m_t the midpoint of eta_t's range over the topics and
e_tk = eta_tk - m_t (a shift common to all topics, so the conditional does not change), and
S'_t = sum_n e_{t, z_n} the document's full centred score. For a token now in topic j the log
factor of topic k is, up to a constant in k,

    x_k + y_jk,   x_k = sum_t e_tk (a_t - c_t e_tk / 2),   a_t = (psi_td - rho_td m_t) / N_d - c_t S'_t,
                  y_jk = sum_t c_t e_tj e_tk

(removing the token from the score gives the y term). So the factor is AB_k E[j, k] with
AB_k = exp(x_k), K exps per document (:func:`document_factors`), and E[j, k] = exp(y_jk), one
row of K exps the first time topic j occurs in the document (:func:`new_row`). When a token
moves j -> l, S'_t grows by e_tl - e_tj, so AB_k is multiplied by E[j, k] / E[l, k]
(:func:`move_factors`, :func:`moved_score`).

Range. With h_t = max_k |e_tk|, every |x_k| stays below X = sum_t h_t |a_t| + c_t h_t^2 / 2 and
every |y_jk| below Y = sum_t c_t h_t^2 (:func:`exponent_bounds`). While X + 2 Y <=
:data:`MAX_EXPONENT` every table entry, every factor and every product of them lies in
[e^-300, e^300] ~ [5e-131, 2e130]: multiplied by the count weights, which lie in about
[1e-20, 1e9] for any corpus this package can hold, and summed over K <= 1e6 topics, nothing
comes near overflow (1.8e308) or the subnormal range (< 2.2e-308, inexact and slow), so the
table form never loses a topic that log space would keep. Each exponent is rounded at most
300 * 2^-53 ~ 3e-14 in absolute terms, which is also the rounding of the log-space form. The
bound is checked at the start of a document and after each move (a_t changes); when it fails,
or when a document meets more topics than the table holds, the sweep finishes the document in
log space (:func:`log_space_factors`: the same conditional, shifted by its largest exponent),
with the same uniform per token, so the draws agree up to floating rounding.

Every loop over the topics is written so that it vectorises, and the exps are computed by a
polynomial (:func:`exp_in_place`) instead of libm's scalar exp.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

#: Largest exponent the table form may meet in a document (module docstring).
MAX_EXPONENT = 300.0

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
def exp_in_place(x, num, scratch):
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
def sum_quadratic(e_tk, lin, quad, out, num):
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


@numba.njit(cache=True, nogil=True, inline="always")
def sum_quadratic_of(e_tk, lin, quad, active, num_active, out):
    """out[idx] = sum_t e_tk (lin_t - quad_t e_tk) at k = active[idx] for idx < num_active:
    :func:`sum_quadratic` over the topics listed in ``active``."""
    for idx in range(num_active):
        out[idx] = 0.0
    for t in range(e_tk.shape[0]):
        lin_t = lin[t]
        quad_t = quad[t]
        for idx in range(num_active):
            e = e_tk[t, active[idx]]
            out[idx] += e * (lin_t - quad_t * e)


@numba.njit(cache=True, nogil=True)
def fill_exp_row(table, inv_table, row, centred_j, centred, c, num, scratch):
    """table[row, k] = exp(sum_t c_t e_tj e_tk) for the topics k < num, inv_table its
    reciprocal; ``centred_j`` [T] = e_.j, ``centred`` [T, >= num] = e_.k. The sum runs over t
    in order for each k, in loops over k that vectorise; scratch int64 [>= num]."""
    for k in range(num):
        table[row, k] = 0.0
    for t in range(centred.shape[0]):
        ct = c[t] * centred_j[t]
        for k in range(num):
            table[row, k] += ct * centred[t, k]
    exp_in_place(table[row], num, scratch)
    for k in range(num):
        inv_table[row, k] = 1.0 / table[row, k]


class ResponseTables(NamedTuple):
    """The workspace of the per-document tables (allocated once per sweep by
    :func:`response_tables`; T tasks, ``capacity`` topics, ``rows`` table rows).

    cen, mid, half:  e_tk = eta_tk - m_t float64 [T, capacity], m_t [T], h_t = max_k |e_tk| [T]
    table, inv_table: E[j, k] by row and its reciprocal, float64 [rows, capacity]
    row_cen:         e_.j of each row's topic j, float64 [rows, T]
    row_of:          the row of topic k in this document, -1 if none yet, int64 [capacity]
    row_topic:       the topic of each row, int64 [rows]
    ab, dab:         AB_k, and AB_k times the document part of the count weight, [capacity]
    c, half_c, lin0, a, centred_score: c_t, c_t / 2, (psi_td - rho_td m_t) / N_d, a_t, S'_t [T]
    score, quad, lin: the log-space form's running score S_t (without the token inside a
                     token), rho_td / (2 N_d^2), its linear coefficient [T]
    log_factor, shifted: the log-space exponents and their exps relative to the largest
    scratch:         int64 [capacity]
    """

    cen: np.ndarray
    mid: np.ndarray
    half: np.ndarray
    table: np.ndarray
    inv_table: np.ndarray
    row_cen: np.ndarray
    row_of: np.ndarray
    row_topic: np.ndarray
    ab: np.ndarray
    dab: np.ndarray
    c: np.ndarray
    half_c: np.ndarray
    lin0: np.ndarray
    a: np.ndarray
    centred_score: np.ndarray
    score: np.ndarray
    quad: np.ndarray
    lin: np.ndarray
    log_factor: np.ndarray
    shifted: np.ndarray
    scratch: np.ndarray


@numba.njit(cache=True, nogil=True)
def response_tables(num_tasks, capacity, rows, extra):
    """A :class:`ResponseTables` for ``num_tasks`` tasks, ``capacity`` topics and ``rows``
    table rows; ``log_factor`` has ``extra`` more entries (the sHDP's auxiliary topics)."""
    return sharing_centring(np.zeros((num_tasks, capacity)), np.zeros(num_tasks),
                            np.zeros(num_tasks), rows, extra)


@numba.njit(cache=True, nogil=True)
def sharing_centring(cen, mid, half, rows, extra):
    """A :class:`ResponseTables` whose centred weights are ``cen`` [T, capacity], ``mid`` and
    ``half`` [T] (those of another, :func:`centre`'d once for a sweep whose documents run on
    several threads), its other arrays its own."""
    num_tasks, capacity = cen.shape
    return ResponseTables(
        cen, mid, half,
        np.empty((rows, capacity)), np.empty((rows, capacity)), np.empty((rows, num_tasks)),
        np.full(capacity, -1, np.int64), np.empty(rows, np.int64),
        np.empty(capacity), np.empty(capacity),
        np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks),
        np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks),
        np.empty(capacity + extra), np.empty(capacity), np.empty(capacity, np.int64))


@numba.njit(cache=True, nogil=True, inline="always")
def centre(eta, active, num_active, tb):
    """m_t (the midpoint of eta_t over the topics ``active[:num_active]``, 0 if none), the
    centred weights e_tk = eta_tk - m_t of those topics and h_t = max |e_tk|."""
    for t in range(eta.shape[0]):
        if num_active > 0:
            lo = eta[t, active[0]]
            hi = lo
            for idx in range(num_active):
                lo = min(lo, eta[t, active[idx]])
                hi = max(hi, eta[t, active[idx]])
            tb.mid[t] = 0.5 * (lo + hi)
        for idx in range(num_active):
            k = active[idx]
            tb.cen[t, k] = eta[t, k] - tb.mid[t]
            tb.half[t] = max(tb.half[t], abs(tb.cen[t, k]))


@numba.njit(cache=True, nogil=True, inline="always")
def begin_document(d, start, end, inv_n, z, eta, psi, rho, tb):
    """Document d's (tokens [start, end), inv_n = 1 / N_d) per-task quantities: its score S_t
    and centred score S'_t, c_t = rho_td / N_d^2, the log-space quadratic coefficient
    c_t / 2, (psi_td - rho_td m_t) / N_d and a_t."""
    for t in range(eta.shape[0]):
        s = 0.0
        s_centred = 0.0
        for i in range(start, end):
            s += eta[t, z[i]]
            s_centred += tb.cen[t, z[i]]
        tb.score[t] = s
        tb.quad[t] = 0.5 * rho[t, d] * inv_n * inv_n
        tb.centred_score[t] = s_centred
        tb.c[t] = rho[t, d] * inv_n * inv_n
        tb.lin0[t] = (psi[t, d] - rho[t, d] * tb.mid[t]) * inv_n
        tb.a[t] = tb.lin0[t] - tb.c[t] * s_centred


@numba.njit(cache=True, nogil=True, inline="always")
def exponent_bounds(tb):
    """(X, Y): the bounds on |x_k| and |y_jk| of the module docstring at the document's
    start."""
    y_bound = 0.0
    x_bound = 0.0
    for t in range(tb.c.shape[0]):
        h2 = tb.half[t] * tb.half[t]
        y_bound += abs(tb.c[t]) * h2
        x_bound += tb.half[t] * abs(tb.a[t]) + 0.5 * abs(tb.c[t]) * h2
    return x_bound, y_bound


@numba.njit(cache=True, nogil=True, inline="always")
def y_bound_of(tb):
    """Y = sum_t c_t h_t^2, after a birth widened some h_t."""
    y_bound = 0.0
    for t in range(tb.c.shape[0]):
        y_bound += abs(tb.c[t]) * tb.half[t] * tb.half[t]
    return y_bound


@numba.njit(cache=True, nogil=True, inline="always")
def document_factors(tb, num):
    """AB_k = exp(x_k) for the topics k < num, and forget the previous document's rows."""
    for t in range(tb.c.shape[0]):
        tb.half_c[t] = 0.5 * tb.c[t]
    sum_quadratic(tb.cen, tb.a, tb.half_c, tb.ab, num)
    exp_in_place(tb.ab, num, tb.scratch)


@numba.njit(cache=True, nogil=True, inline="always")
def forget_rows(tb, used):
    """No topic has a row (the ``used`` rows of the last document are dropped)."""
    for r in range(used):
        tb.row_of[tb.row_topic[r]] = -1


@numba.njit(cache=True, nogil=True, inline="always")
def new_row(tb, row, k, centred_k, num):
    """Row ``row`` of the table becomes topic k's: E[k, j] = exp(sum_t c_t e_tk e_tj) for the
    topics j < num, with e_.k = ``centred_k`` [T] (kept in row_cen)."""
    for t in range(tb.c.shape[0]):
        tb.row_cen[row, t] = centred_k[t]
    fill_exp_row(tb.table, tb.inv_table, row, tb.row_cen[row], tb.cen, tb.c, num, tb.scratch)
    tb.row_of[k] = row
    tb.row_topic[row] = k


@numba.njit(cache=True, nogil=True, inline="always")
def move_factors(tb, row_old, row_new, num):
    """A token moved from the topic of row ``row_old`` to that of ``row_new``: AB_k (and the
    count-weighted dab_k) times E[old, k] / E[new, k] for the topics k < num."""
    for k in range(num):
        r = tb.table[row_old, k] * tb.inv_table[row_new, k]
        tb.ab[k] *= r
        tb.dab[k] *= r


@numba.njit(cache=True, nogil=True, inline="always")
def moved_score(tb, k_new, centred_old):
    """S'_t and a_t after a token moved to topic ``k_new`` from a topic whose centred weights
    were ``centred_old`` [T]; returns the new X."""
    x_bound = 0.0
    for t in range(tb.c.shape[0]):
        tb.centred_score[t] += tb.cen[t, k_new] - centred_old[t]
        tb.a[t] = tb.lin0[t] - tb.c[t] * tb.centred_score[t]
        x_bound += tb.half[t] * abs(tb.a[t]) + 0.5 * abs(tb.c[t]) * tb.half[t] * tb.half[t]
    return x_bound


@numba.njit(cache=True, nogil=True, inline="always")
def _linear_terms(d, psi, rho, inv_n, tb):
    """lin_t = psi_td / N_d - rho_td S_t / N_d^2, S_t the score without the token."""
    for t in range(tb.lin.shape[0]):
        tb.lin[t] = psi[t, d] * inv_n - rho[t, d] * tb.score[t] * inv_n * inv_n


@numba.njit(cache=True, nogil=True, inline="always")
def _shift_and_exp(tb, num):
    """shifted[k] = exp(log_factor[k] - top) for k < num; returns top, the largest log factor
    (0 if num = 0)."""
    top = -np.inf
    for k in range(num):
        top = max(top, tb.log_factor[k])
    if num == 0:
        top = 0.0
    for k in range(num):
        tb.shifted[k] = tb.log_factor[k] - top
    exp_in_place(tb.shifted, num, tb.scratch)
    return top


@numba.njit(cache=True, nogil=True, inline="always")
def log_space_factors(d, eta, psi, rho, inv_n, num, tb):
    """The response factors of the topics k < num for a token of document d, in log space:
    log_factor[k] = sum_t eta_tk (lin_t - rho_td eta_tk / (2 N_d^2)) (up to a constant in k)
    and shifted[k] = exp(log_factor[k] - top). Returns top."""
    _linear_terms(d, psi, rho, inv_n, tb)
    sum_quadratic(eta, tb.lin, tb.quad, tb.log_factor, num)
    return _shift_and_exp(tb, num)


@numba.njit(cache=True, nogil=True, inline="always")
def log_space_factors_of(d, eta, psi, rho, inv_n, active, num_active, tb):
    """:func:`log_space_factors` of the topics ``active[:num_active]``, by position in
    ``active``."""
    _linear_terms(d, psi, rho, inv_n, tb)
    sum_quadratic_of(eta, tb.lin, tb.quad, active, num_active, tb.log_factor)
    return _shift_and_exp(tb, num_active)
