"""The light Z sweep (LightMedLDA): Metropolis-Hastings per token, cost independent of K.

Target (counts excluding the token, ``omega_td(k) = (eta_tk + sum_{m != n} eta_{t, z_m}) / N_d``):

    pi(k)  propto  (n_dk + alpha) (n_wk + beta) / (n_k + V beta)
                   * prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2)

Up to a constant in k the supervised factor is exp(x_k) with

    x_k = sum_t eta_tk (a_t - c_t eta_tk / 2),   c_t = rho_td / N_d^2,
    a_t = psi_td / N_d - c_t S_t,                S_t = sum_{m != n} eta_{t, z_m},

computed as x_k = base_k + sum_t g_t eta_tk with base_k = sum_t eta_tk (psi_td / N_d -
c_t eta_tk / 2) once per document (O(K T), vectorised) and g_t = -c_t S_t per token: O(T) per
topic once the document's running score S is kept incrementally. Each token makes
``num_steps`` Metropolis-Hastings steps (default 6), each from one of three proposals, chosen
at random with equal odds (``cycle=False``, the paper's best) or in turn (``cycle=True``):

* **document**: q_D(k) = (n_dk + alpha) / (N_d - 1 + K alpha): with probability
  (N_d - 1) / (N_d - 1 + K alpha) the topic of a uniformly drawn OTHER token of the document,
  else a uniform topic (alpha is symmetric). Acceptance ratio
  [(n_wk' + beta) / (n_k' + V beta) e^{x_k'}] / [the same at k].
* **word**: q_W(k) = (n_wk + beta) / (N_w - 1 + K beta): the topic of a uniformly drawn other
  token of the same word (from :func:`word_token_index`, built once from the data), else a
  uniform topic. Acceptance ratio [(n_dk' + alpha) / (n_k' + V beta) e^{x_k'}] / [the same at k].
* **response**: q_R(k) from a per-document alias table (``kernels.alias``) of exp(xhat_k),
  xhat the supervised exponent with the document's score S replaced by an estimate Shat
  (below). Acceptance ratio pi(k') q_R(k) / (pi(k) q_R(k')), q_R the probabilities the built
  table draws with (gathered while it is built, rounding included).

With T = 0 (plain LDA) only the first two are used.

Why the chain is exact
----------------------
Each step is a Metropolis-Hastings step for z_n whose target is its full conditional pi given
every other current variable, and whose proposal depends only on variables that this step
does not change: current z_{-n} (the document and word proposals read current counts and the
current topics of other tokens), eta, psi, rho, the data, and, for the response proposal, the
current topics of tokens that stay frozen while its table is in use; which proposal is used and
all uniforms are drawn independently of the state. The acceptance ratio uses exactly the
probabilities the proposal draws with. So every step is reversible with respect to
p(z_n | everything else) and leaves the joint posterior invariant, and so does any cycle or
random mixture of such steps (the composition principle); the document proposal has full
support, so the chain on Z given eta, psi, rho is irreducible.

"A stale proposal is fine if the acceptance ratio uses the probabilities it drew with" is not
enough. LightLDA's word tables and the LightMedLDA paper's per-document exp tables are built
from the topics at the start of the sweep (or document) and reused: for a token they depend on
its own topic at build time and on the old topics of tokens updated since, i.e. on a past state
of the chain, which the acceptance ratio cannot account for. Exact transition matrices on the
7-token corpus of the tests (``tests/test_light.py``) put the stationary distribution of such
sweeps 0.11 (response table, 1 step per token) / 0.0077 (6 steps) and 0.038 / 0.0008 (stale
word table) in total variation from the target; this design's, 1e-15. So:

* the word proposal is not a stale per-word alias table but the token draw above, the exact
  analogue of the document proposal: current counts, O(1), nothing to build, and its
  probability at any topic is read from the current n_wk (the 1 / (n_k + V beta) factor moves
  into the acceptance ratio). It needs the data's word -> tokens index (O(N) memory, no V x K
  table);
* each document is swept in two halves: the first half's tokens use a response table built
  from the second half's topics (which do not move meanwhile), then the second half's tokens
  use a table built from the first half's new topics. Shat_t = (N_d - 1) / m sum_{frozen m
  tokens} eta_{t, z_m} (0 for a one-token document, which is then exact). Any function of
  frozen variables is a valid proposal; this one is close to the target when the document's
  topics are homogeneous.

No table outlives the call: nothing besides z (and n_dk) is carried, and a run resumes
exactly from (z, eta, psi, rho, key).

Cost
----
Per token O(num_steps T), independent of K; per document two tables of O(K T) each (the
O(K T) part vectorises; the K exps, the alias build and the max are O(K)), so O(K T / N_d) per
token: on 20news (N_d = 130 on average) about 6 table entries per token at K = 400, 13-16 ns
each. At large K the counts do not fit in any cache, so the sweep is a software pipeline
(``_light_sweep``): a token's proposals are drawn two tokens ahead and the counts they will
read prefetched one token ahead. In the random mixture no branch depends on a step's kind
(it would mispredict two times in three): every kind's candidate and count factor is computed
and the step's read by kind, which cut the sweep by about a fifth. ``benchmarks/light_scaling.py``
has the figures.

Numerics: the count factors of a ratio lie within about 1e+-30, so when e^{x_k' - x_k}
overflows (inf: accept) or underflows (0: reject) the decision is the one exact arithmetic
would make. Table weights are exp(max(xhat_k - max xhat, -600)) (vectorised,
``kernels.topics._exp_in_place``), so every q_R(k) is positive and q_R(k) / q_R(k') finite;
when |x_k' - x_k| > 600 the response ratio is formed in log space. Random numbers:
xoshiro256** (``kernels.random``) seeded from the JAX key.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from topiczoo.kernels.alias import alias_draw, build_alias_with_probabilities
from topiczoo.kernels.assignments import assignments_callback, host_assignments_step
from topiczoo.kernels.host import document_loop, seed_from_key
from topiczoo.kernels.random import seed_state, uniform
from topiczoo.kernels.response_table import exp_in_place, sum_quadratic
from topiczoo.kernels.topics import _count_token

DOC, WORD, RESPONSE = 0, 1, 2
_FLOOR = -600.0  # smallest log weight of a response-table entry relative to the largest
# Counts larger than this (bytes of n_wk and n_dk) are read one token ahead in the sweep; below
# it they mostly stay in cache and the read-ahead costs more than it saves (20news, 20 tasks,
# a 32 MB L3: about 50 ns a token more at K = 20 and 50, level at K = 100, 75 less at K = 400)
_READ_AHEAD_BYTES = 16 << 20

@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _exponent(eta_kt, k, base, g):
    """x_k = base_k + sum_t g_t eta_tk (module docstring), eta_kt topic-major [K, T]. The sum
    may be reassociated (``fastmath``: only rounding changes, no assumption about infinities
    or NaN), so LLVM computes it in SIMD lanes with fused multiply-adds: 20 tasks in about 3 ns
    instead of 7. The sweep computes num_steps + 1 of these per token: on 20news (20 tasks) it
    went from 389 to 357 ns a token at K = 400 and from 295 to 274 at K = 20 (direct calls of
    the two versions of the sweep on the same state, medians of 4)."""
    acc = 0.0
    for t in range(g.shape[0]):
        acc += g[t] * eta_kt[k, t]
    return base[k] + acc


@numba.njit(cache=True, nogil=True, inline="always")
def _max(x):
    """max(x) in four interleaved running maxima (no chain of dependent comparisons)."""
    m0 = m1 = m2 = m3 = x[0]
    n = x.shape[0]
    k = 0
    while k + 4 <= n:
        m0 = max(m0, x[k])
        m1 = max(m1, x[k + 1])
        m2 = max(m2, x[k + 2])
        m3 = max(m3, x[k + 3])
        k += 4
    while k < n:
        m0 = max(m0, x[k])
        k += 1
    return max(max(m0, m1), max(m2, m3))


@numba.njit(cache=True, nogil=True)
def _response_table(eta, base, g_hat, xhat, weights, prob, alias, work, q):
    """Alias table of q_R(k) propto exp(max(xhat_k - max xhat, _FLOOR)) (``_exp_in_place``),
    xhat_k = base_k + sum_t g_hat_t eta_tk, into prob/alias, and the probabilities it draws
    with into q. eta task-major [T, K] (the inner loop runs over topics, so it vectorises)."""
    num_tasks, num_topics = eta.shape
    for k in range(num_topics):
        xhat[k] = base[k]
    for t in range(num_tasks):
        gt = g_hat[t]
        for k in range(num_topics):
            xhat[k] += gt * eta[t, k]
    top = _max(xhat)
    for k in range(num_topics):
        weights[k] = max(xhat[k] - top, _FLOOR)
    exp_in_place(weights, num_topics, work)
    build_alias_with_probabilities(weights, num_topics, prob, alias, q)


@intrinsic
def _prefetch(typingctx, array, index):
    """Hint the CPU to fetch the cache line of array[index] (1-D or 2-D with a tuple index):
    LLVM's prefetch intrinsic; no effect on results."""
    if isinstance(index, types.BaseTuple):
        count = len(index)
    else:
        count = 1
    if not isinstance(array, types.Array) or array.ndim != count:
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        ary = context.make_array(array_type)(context, builder, args[0])
        if isinstance(index_type, types.BaseTuple):
            items = [context.cast(builder, builder.extract_value(args[1], n), index_type[n],
                                  types.intp) for n in range(count)]
        else:
            items = [context.cast(builder, args[1], index_type, types.intp)]
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, items,
                                       wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@numba.njit(cache=True, nogil=True, inline="always")
def _draw_ahead(rng, i, words, word_offsets, place, z, z_word, n_wk, num_kinds, cycle, k_beta,
                beta, num_topics, kinds, uniforms, places):
    """Stage 1 of the pipeline, two tokens ahead: draw token i's proposal kinds and uniforms and
    where its word proposals read z_word (-1 - topic for the uniform part); prefetch those
    places and the count token i will decrement first. None of this depends on the state:
    which topics are read at those places is (at the token's turn)."""
    w = words[i]
    w_lo = word_offsets[w]
    n_w = word_offsets[w + 1] - w_lo
    _prefetch(n_wk, (w, z[i]))
    _prefetch(z_word, place[i])
    for step in range(kinds.shape[0]):
        if cycle:
            kind = step % num_kinds
        else:
            kind = min(int(uniform(rng) * num_kinds), num_kinds - 1)
        kinds[step] = kind
        u = uniform(rng)
        uniforms[step] = u
        # the word proposal's place for every kind (so that the candidates are read without a
        # branch on the kind, :func:`_candidates`); used by word steps only
        u *= n_w - 1 + k_beta
        in_word = u < n_w - 1
        p = w_lo + (int(u) if in_word else 0)
        p = w_lo + n_w - 1 if p == place[i] else p
        uniform_topic = -1 - min(int(max(u - (n_w - 1), 0.0) / beta), num_topics - 1)
        places[step] = p if in_word else uniform_topic
        _prefetch(z_word, p)


@numba.njit(cache=True, nogil=True, inline="always")
def _candidates(i, start, end, z, z_word, kinds, uniforms, places, prob, alias, with_table,
                k_alpha, alpha, num_topics, cycle, cand, by_kind):
    """The proposed topics of token i (document [start, end)) from its drawn uniforms, read
    from the current z: cand[step], or -1 for a response proposal when ``with_table`` is False
    (used for prefetching, one token ahead, before the table exists). by_kind: int64 [3]
    scratch.

    In a random mixture (``cycle`` False) a branch on the kind mispredicts about two times in
    three. Each step then reads the candidate of every kind from its one uniform and picks the
    one of its kind through memory (by_kind[kind]): a select between loaded values would be
    compiled back into a branch. Kinds in turn are predicted, and there reading only the
    step's own candidate is cheaper."""
    length = end - start
    for step in range(kinds.shape[0]):
        kind = kinds[step]
        u = uniforms[step]
        if not cycle:
            by_kind[DOC] = _doc_candidate(i, start, end, length, z, u, k_alpha, alpha,
                                          num_topics)
            by_kind[WORD] = _word_candidate(z_word, places[step])
            by_kind[RESPONSE] = alias_draw(prob, alias, num_topics, u) if with_table else -1
            cand[step] = by_kind[kind]
        elif kind == DOC:
            cand[step] = _doc_candidate(i, start, end, length, z, u, k_alpha, alpha, num_topics)
        elif kind == WORD:
            cand[step] = _word_candidate(z_word, places[step])
        else:
            cand[step] = alias_draw(prob, alias, num_topics, u) if with_table else -1


@numba.njit(cache=True, nogil=True, inline="always")
def _doc_candidate(i, start, end, length, z, u, k_alpha, alpha, num_topics):
    """The document proposal of token i from uniform u: the topic of another token of the
    document, or a uniform topic (the alpha part)."""
    u *= length - 1 + k_alpha
    in_doc = u < length - 1
    j = start + (int(u) if in_doc else 0)
    j = end - 1 if j == i else j
    z_j = z[j]
    return z_j if in_doc else min(int(max(u - (length - 1), 0.0) / alpha), num_topics - 1)


@numba.njit(cache=True, nogil=True, inline="always")
def _word_candidate(z_word, p):
    """The word proposal at place p drawn two tokens ahead (:func:`_draw_ahead`): the topic of
    that token of the word, or for p < 0 the uniform topic -1 - p."""
    z_p = z_word[max(p, 0)]
    return z_p if p >= 0 else -1 - p


class _Work(NamedTuple):
    """The light sweep's scratch (allocated once per sweep; T tasks, K topics, S steps).

    rng: xoshiro256** state, uint64 [4]. The pipeline: kinds, uniforms, places [3, S] (token i's
    draws in row i % 3), cand [S] (its proposed topics), by_kind int64 [3]. The acceptance
    ratios' parts: c_count [S, 3] (the proposals' count factors by kind), c_q [S, 3] (their q_R,
    1 for the other kinds), c_x [S] (their exponents), k_count [3] and k_q [3] (the same for the
    token's current topic). z_word [N] (z in word order) and place [N] (each token's place in
    it). The response: score, frozen, g, half_c, lin0, g_hat [T] (the document's score S, the
    frozen half's, g_t = -c_t S_t, c_t / 2, psi / N_d, the table's g); base, xhat, weights,
    prob, q [K] float64 and alias, work [K] int64 (the document's base_k and its response
    table).
    """

    rng: np.ndarray
    kinds: np.ndarray
    uniforms: np.ndarray
    places: np.ndarray
    cand: np.ndarray
    by_kind: np.ndarray
    c_count: np.ndarray
    c_q: np.ndarray
    c_x: np.ndarray
    k_count: np.ndarray
    k_q: np.ndarray
    z_word: np.ndarray
    place: np.ndarray
    score: np.ndarray
    frozen: np.ndarray
    g: np.ndarray
    half_c: np.ndarray
    lin0: np.ndarray
    g_hat: np.ndarray
    base: np.ndarray
    xhat: np.ndarray
    weights: np.ndarray
    prob: np.ndarray
    alias: np.ndarray
    work: np.ndarray
    q: np.ndarray


@numba.njit(cache=True, nogil=True)
def _work(z, word_tokens, num_tasks, num_topics, num_steps, seed):
    """The sweep's :class:`_Work`, its generator seeded and z copied in word order."""
    rng = np.empty(4, np.uint64)
    seed_state(seed, rng)
    num_tokens = z.shape[0]
    z_word = np.empty(num_tokens, np.int32)
    place = np.empty(num_tokens, np.int32)
    for p in range(num_tokens):
        tok = word_tokens[p]
        place[tok] = p
        z_word[p] = z[tok]
    return _Work(
        rng, np.empty((3, num_steps), np.int64), np.empty((3, num_steps)),
        np.empty((3, num_steps), np.int64), np.empty(num_steps, np.int64),
        np.empty(3, np.int64), np.empty((num_steps, 3)), np.ones((num_steps, 3)),
        np.empty(num_steps), np.empty(3), np.ones(3), z_word, place,
        np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_tasks),
        np.zeros(num_tasks), np.zeros(num_tasks), np.zeros(num_topics), np.empty(num_topics),
        np.empty(num_topics),
        np.zeros(num_topics),  # prob: read (not used) by _candidates before the first table
        np.zeros(num_topics, np.int64), np.empty(num_topics, np.int64), np.empty(num_topics))


@numba.njit(cache=True, nogil=True, inline="always")
def _read_ahead(i, d, start, end, hi, d_next, doc_offsets, words, z, n_dk, n_wk, k_alpha, alpha,
                num_topics, cycle, wk):
    """Stage 2 of the pipeline, one token ahead: read token i + 1's proposed topics from the
    current z (a hint only; its response proposals only while this half's table serves it) and
    prefetch the counts they will read."""
    r1 = (i + 1) % 3
    if i + 1 < end:
        s1, e1, d1 = start, end, d
    else:
        s1, e1, d1 = doc_offsets[d_next], doc_offsets[d_next + 1], d_next
    _candidates(i + 1, s1, e1, z, wk.z_word, wk.kinds[r1], wk.uniforms[r1], wk.places[r1],
                wk.prob, wk.alias, i + 1 < hi, k_alpha, alpha, num_topics, cycle, wk.cand,
                wk.by_kind)
    w1 = words[i + 1]
    for step in range(wk.cand.shape[0]):
        k2 = wk.cand[step]
        if k2 >= 0:
            _prefetch(n_wk, (w1, k2))
            _prefetch(n_dk, (d1, k2))


@numba.njit(cache=True, nogil=True, inline="always")
def _ratio_parts(d, w, k, n_dk, n_wk, inv_nk, alpha, beta, eta_kt, num_tasks, wk):
    """The parts of the acceptance ratios of the token's proposals wk.cand (from its current
    topic k), read in one pass: the count part of target / proposal by kind, up to what cancels
    in a ratio ((n_wk + beta) / (n_k + V beta) for the document proposal, (n_dk + alpha) /
    (n_k + V beta) for the word proposal, all three factors for the response proposal, whose
    q_R is in c_q, 1 for the others), kept for every kind and read by kind so that no branch
    depends on the random kind (:func:`_candidates`), and the exponents x. Returns x_k."""
    c_count, c_q, c_x, k_count, k_q, q = wk.c_count, wk.c_q, wk.c_x, wk.k_count, wk.k_q, wk.q
    for step in range(wk.cand.shape[0]):
        k2 = wk.cand[step]
        c_doc = n_dk[d, k2] + alpha
        c_word = n_wk[w, k2] + beta
        c_inv = inv_nk[k2]
        c_count[step, DOC] = c_word * c_inv
        c_count[step, WORD] = c_doc * c_inv
        c_count[step, RESPONSE] = c_doc * c_word * c_inv
        if num_tasks > 0:
            c_q[step, RESPONSE] = q[k2]
        c_x[step] = _exponent(eta_kt, k2, wk.base, wk.g)
    k_doc = n_dk[d, k] + alpha
    k_word = n_wk[w, k] + beta
    k_inv = inv_nk[k]
    k_count[DOC] = k_word * k_inv
    k_count[WORD] = k_doc * k_inv
    k_count[RESPONSE] = k_doc * k_word * k_inv
    if num_tasks > 0:
        k_q[RESPONSE] = q[k]
    return _exponent(eta_kt, k, wk.base, wk.g)


@numba.njit(cache=True, nogil=True, inline="always")
def _accept(row, k, xk, stats, wk):
    """The token's Metropolis-Hastings steps in order, from its current topic k (exponent xk):
    each proposal of another topic is accepted with probability min(1, ratio). Returns the
    topic after the last step."""
    c_count, c_q, c_x, k_count, k_q = wk.c_count, wk.c_q, wk.c_x, wk.k_count, wk.k_q
    for step in range(wk.cand.shape[0]):
        k2 = wk.cand[step]
        if k2 == k:
            continue
        kind = wk.kinds[row, step]
        stats[kind, 0] += 1
        diff = c_x[step] - xk
        counts = c_count[step, kind] / k_count[kind]
        if abs(diff) < -_FLOOR:
            ratio = counts * np.exp(diff) * (k_q[kind] / c_q[step, kind])
        elif kind == RESPONSE:  # q_R(k) / q_R(k') may overflow
            ratio = counts * np.exp(diff + np.log(k_q[kind]) - np.log(c_q[step, kind]))
        else:
            ratio = counts * np.exp(diff)
        if ratio >= 1.0 or uniform(wk.rng) < ratio:
            k = k2
            xk = c_x[step]
            for a in range(3):
                k_count[a] = c_count[step, a]
            k_q[RESPONSE] = c_q[step, RESPONSE]
            stats[kind, 1] += 1
    return k


@numba.njit(cache=True, nogil=True, inline="always")
def _half_table(eta, eta_kt, z, f_lo, f_hi, length, wk):
    """The response table of one half of a document, from the other (frozen) half's current
    topics [f_lo, f_hi): Shat_t = (N_d - 1) / m sum of the m frozen tokens' eta_t (0 for a
    one-token document), g_hat_t = -c_t Shat_t."""
    num_tasks = eta.shape[0]
    scale = (length - 1.0) / (f_hi - f_lo) if f_hi > f_lo else 0.0
    for t in range(num_tasks):
        wk.frozen[t] = 0.0
    for i in range(f_lo, f_hi):
        for t in range(num_tasks):
            wk.frozen[t] += eta_kt[z[i], t]
    for t in range(num_tasks):
        wk.g_hat[t] = -2.0 * wk.half_c[t] * wk.frozen[t] * scale
    _response_table(eta, wk.base, wk.g_hat, wk.xhat, wk.weights, wk.prob, wk.alias, wk.work,
                    wk.q)


@numba.njit(cache=True, nogil=True, inline="always")
def _begin_document(d, start, end, z, eta, eta_kt, psi, rho, wk):
    """Document d's score S_t, c_t / 2 = rho_td / (2 N_d^2), psi_td / N_d and base_k =
    sum_t eta_tk (psi_td / N_d - c_t eta_tk / 2)."""
    num_tasks, num_topics = eta.shape
    inv_n = 1.0 / (end - start)
    for t in range(num_tasks):
        wk.score[t] = 0.0
        wk.half_c[t] = 0.5 * rho[t, d] * inv_n * inv_n
        wk.lin0[t] = psi[t, d] * inv_n
    for i in range(start, end):  # tasks innermost: independent additions
        for t in range(num_tasks):
            wk.score[t] += eta_kt[z[i], t]
    if num_tasks > 0:
        sum_quadratic(eta, wk.lin0, wk.half_c, wk.base, num_topics)


@document_loop
def _light_document(d, z, n_dk, n_wk, n_k, words, doc_offsets, word_offsets, eta, eta_kt, psi,
                    rho, alpha, beta, inv_nk, cycle, read_ahead, stats, wk):
    """Document d's tokens, in two halves, each with the table of the other half's topics
    (module docstring); the pipeline reaches into the next non-empty document."""
    num_tokens = z.shape[0]
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    k_alpha = num_topics * alpha
    k_beta = num_topics * beta
    num_kinds = 3 if num_tasks > 0 else 2
    start = doc_offsets[d]
    end = doc_offsets[d + 1]
    length = end - start
    d_next = d + 1  # the next non-empty document (for reading ahead across the boundary)
    while d_next < num_docs and doc_offsets[d_next + 1] == doc_offsets[d_next]:
        d_next += 1
    mid = start + (length + 1) // 2
    _begin_document(d, start, end, z, eta, eta_kt, psi, rho, wk)
    for phase in range(2):
        lo, hi = (start, mid) if phase == 0 else (mid, end)
        if lo == hi:
            continue
        if num_tasks > 0:
            f_lo, f_hi = (mid, end) if phase == 0 else (start, mid)
            _half_table(eta, eta_kt, z, f_lo, f_hi, length, wk)
        for i in range(lo, hi):
            row = i % 3
            # the pipeline: draws two tokens ahead, proposed topics' counts one token ahead
            if i + 2 < num_tokens:
                r2 = (i + 2) % 3
                _draw_ahead(wk.rng, i + 2, words, word_offsets, wk.place, z, wk.z_word, n_wk,
                            num_kinds, cycle, k_beta, beta, num_topics, wk.kinds[r2],
                            wk.uniforms[r2], wk.places[r2])
            if read_ahead and i + 1 < num_tokens:
                _read_ahead(i, d, start, end, hi, d_next, doc_offsets, words, z, n_dk, n_wk,
                            k_alpha, alpha, num_topics, cycle, wk)
            w = words[i]
            k = z[i]
            _count_token(d, w, k, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
            for t in range(num_tasks):
                wk.score[t] -= eta_kt[k, t]
                wk.g[t] = -2.0 * wk.half_c[t] * wk.score[t]
            # z_{-n} does not change during the token's steps, so all its proposals are read
            # first and their counts in one pass; only the decisions are sequential
            _candidates(i, start, end, z, wk.z_word, wk.kinds[row], wk.uniforms[row],
                        wk.places[row], wk.prob, wk.alias, True, k_alpha, alpha, num_topics,
                        cycle, wk.cand, wk.by_kind)
            xk = _ratio_parts(d, w, k, n_dk, n_wk, inv_nk, alpha, beta, eta_kt, num_tasks, wk)
            k = _accept(row, k, xk, stats, wk)
            z[i] = k
            wk.z_word[wk.place[i]] = k
            _count_token(d, w, k, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
            for t in range(num_tasks):
                wk.score[t] += eta_kt[k, t]


@numba.njit(cache=True, nogil=True)
def _light_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, word_offsets, word_tokens, eta, psi,
                 rho, alpha, beta, seed, num_steps, cycle, stats):
    """One in-place light sweep over all tokens (see the module docstring).

    eta float64 [T, K]; psi, rho float64 [T, D]; num_steps MH steps per token; cycle: proposals
    in turn (else at random). stats int64 [3, 2] (zeroed by the caller) receives, per proposal
    kind (document, word, response), the number of proposals of a different topic and the
    number accepted.

    Memory: at large K the counts do not fit in any cache and each token would wait for several
    misses in turn (n_wk rows, the word's tokens). Since a token's proposals depend only on
    z_{-n}, which does not change during its steps, the sweep is a pipeline: two tokens ahead
    it draws the uniforms and prefetches the word proposals' places (:func:`_draw_ahead`); one
    token ahead it reads the proposed topics (from the current z: a hint only) and prefetches
    their counts (:func:`_read_ahead`); at the token's turn it reads the proposals again (now
    current), their counts in one pass (:func:`_ratio_parts`: the remaining misses overlap),
    then makes the accept / reject decisions in order (:func:`_accept`).
    """
    num_tokens = z.shape[0]
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    inv_nk = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    eta_kt = np.ascontiguousarray(eta.T)
    # reading the proposals' counts one token ahead only pays when they miss the cache
    read_ahead = n_wk.nbytes + n_dk.nbytes > _READ_AHEAD_BYTES
    wk = _work(z, word_tokens, num_tasks, num_topics, num_steps, seed)
    num_kinds = 3 if num_tasks > 0 else 2
    for i in range(min(2, num_tokens)):
        _draw_ahead(wk.rng, i, words, word_offsets, wk.place, z, wk.z_word, n_wk, num_kinds,
                    cycle, num_topics * beta, beta, num_topics, wk.kinds[i], wk.uniforms[i],
                    wk.places[i])
    for d in range(doc_offsets.shape[0] - 1):
        if doc_offsets[d + 1] > doc_offsets[d]:
            _light_document(d, z, n_dk, n_wk, n_k, words, doc_offsets, word_offsets, eta,
                            eta_kt, psi, rho, alpha, beta, inv_nk, cycle, read_ahead, stats, wk)


def _check_options(combination, num_steps):
    """The light steps' options, refused with a clear error when they are impossible."""
    if combination not in ("mixture", "cycle"):
        raise ValueError(f"combination must be 'mixture' or 'cycle', got {combination!r}")
    if int(num_steps) < 1:
        raise ValueError(f"num_steps must be >= 1, got {num_steps}")


# ---------------------------------------------------------------------------------------------
# The same sweep with Z alone in the chain state


def light_assignments_step(key, z, words, doc_offsets, eta, psi, rho, alpha: float,
                           beta: float, *, num_topics: int, vocab_size: int, word_offsets=None,
                           word_tokens=None, num_steps: int = 6, combination: str = "mixture",
                           log_likelihood: bool = False, num_threads: int = 1):
    """One light sweep over every token (module docstring) for a chain whose state holds the
    assignments alone.

    The counts are rebuilt from z on the host at every call (``kernels.assignments``: O(N),
    into arrays that numpy allocates with huge pages) and dropped after the sweep, so no V x K
    array lives in the chain state or passes through the callback: at K = 400 on 20news that
    is 86 MB less state and about 260 MB less peak than a step whose state held the counts,
    and far fewer page faults.

    Args:
      key: JAX PRNG key (the host seed is derived from it).
      z: int32 [N] topic assignments; words: int32 [N]; doc_offsets: int32 [D+1].
      eta: float32 [T, K] (T = 0 for LDA); psi, rho: float32 [T, D] (Gaussian form).
      alpha, beta: symmetric per-topic / per-word Dirichlet parameters (static floats).
      num_topics, vocab_size: K and V (static).
      word_offsets, word_tokens: the data's word index (``kernels.assignments``).
      num_steps, combination (static): Metropolis-Hastings steps per token and how the
        proposals combine ("mixture" or "cycle").
      log_likelihood (static): also return log p(W | Z) of the new z (nats), computed from the
        host's counts in O(N + K) before they are dropped
        (``kernels.assignments.assignments_log_likelihood``).
      num_threads (static): chains swept at once (the draws do not depend on it).
    Returns (z int32 [N], n_dk int32 [D, K]) after the sweep (n_dk for zbar; n_k is its
    column sum; n_wk, if a snapshot needs it, is a scatter of z), and float32 [] log p(W | Z)
    with ``log_likelihood``.
    """
    _check_options(combination, num_steps)  # the word index: by assignments_callback
    alpha, beta, num_steps, cycle = float(alpha), float(beta), int(num_steps), \
        combination == "cycle"

    def sweep(z, n_dk, n_wk, n_k, words, offsets, w_off, w_tok, eta, psi, rho, seed):
        _light_sweep(z, n_dk, n_wk, n_k, words, offsets, w_off, w_tok, eta, psi, rho, alpha,
                     beta, seed, num_steps, cycle, np.zeros((3, 2), np.int64))

    host = host_assignments_step(sweep, beta, int(num_topics), int(vocab_size), int(num_threads))
    out = assignments_callback(host, seed_from_key(key), z, words, doc_offsets, eta, psi, rho,
                               num_topics, word_offsets, word_tokens)
    return out if log_likelihood else out[:2]
