"""The collapsed Z sweep of the parametric family, and the held-out test chain.

The collapsed sampler of the papers is a sequential loop over tokens; on CPU the fastest form
measured here is a numba function called once per sweep through ``jax.pure_callback``
(``kernels.assignments``: about 110 ns a token at K = 50, against 1,200 for a JAX scan). It is
exact: each token's topic is drawn from its full conditional

    p(z_dn = k | rest)  propto  (n_dk + alpha) (n_wk + beta) / (n_k + V beta)
                                * prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2)

with all counts excluding token n and ``omega_td(k) = (eta_tk + sum_{m != n} eta_{t, z_m}) / N_d``
(the Gaussian form of every response, ``models.responses``). The response factor comes from the
per-document tables of ``kernels.response_table`` (a few multiplications per topic and token
instead of an exp), or, for a document whose exponents could leave the safe range of doubles,
from the log-space form; the draw from the weights is ``kernels.categorical.draw``.

Counts are stored word-major, ``n_wk`` with shape [V, K] (the transpose of the papers' n_kw),
because a token reads one row of it: one cache line instead of K.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numba
import numpy as np
from jax.scipy.special import gammaln

from topiczoo.kernels import response_table as rt
from topiczoo.kernels.categorical import draw, num_blocks
from topiczoo.kernels.host import batched, document_loop, seed_words_from_key


def topic_proportions(n_dk):
    """``zbar``: float32 [D, K] empirical topic proportions n_dk / N_d (zero rows for empty
    documents), from int [D, K] counts (a JAX array; jittable)."""
    n_d = n_dk.sum(axis=-1, keepdims=True)
    return n_dk.astype(jnp.float32) / jnp.maximum(n_d, 1).astype(jnp.float32)


#: Counts below this take lgamma(n + alpha) - lgamma(alpha) from a table in
#: :func:`log_rising_factorial`; larger ones Stirling's series.
_RISING_TABLE = 1024


def log_rising_factorial(counts, alpha: float):
    """lgamma(n + alpha) - lgamma(alpha), float32 (nats), for int counts n >= 0 (a JAX array;
    jittable) and a static alpha > 0: the log of alpha (alpha + 1) ... (alpha + n - 1).

    Counts below :data:`_RISING_TABLE` read a table computed in float64 and rounded once;
    larger ones take Stirling's series (x - 1/2) log x - x + log(2 pi) / 2 + 1 / (12 x) at
    x = n + alpha >= 1024, whose next term is below 3e-12. XLA's float32 gammaln costs about
    37 ns an entry on this CPU: over the [D, K] counts of 20news at K = 400 it took 0.12-0.17 s
    an iteration for the log_joint monitor, the table 19 ms."""
    table = np.array([math.lgamma(n + alpha) for n in range(_RISING_TABLE)]) - math.lgamma(alpha)
    small = jnp.take(jnp.asarray(table, jnp.float32), jnp.minimum(counts, _RISING_TABLE - 1))
    x = jnp.maximum(counts, _RISING_TABLE).astype(jnp.float32) + jnp.float32(alpha)
    large = ((x - 0.5) * jnp.log(x) - x + (0.5 * math.log(2.0 * math.pi) - math.lgamma(alpha))
             + 1.0 / (12.0 * x))
    return jnp.where(counts < _RISING_TABLE, small, large)


def assignments_log_prior(n_dk, alpha: float):
    """log p(Z | alpha) with theta_d ~ Dir(alpha 1_K) integrated out, in nats (float32 [];
    jittable): sum_d [lgamma(K alpha) - lgamma(N_d + K alpha) + sum_k (lgamma(n_dk + alpha) -
    lgamma(alpha))], from the document-topic counts int [D, K] of Z and the per-topic alpha
    (static); the inner sum by :func:`log_rising_factorial`. Label-invariant (a permutation of
    the topics permutes the terms of each document)."""
    total = n_dk.shape[-1] * alpha
    lengths = n_dk.sum(axis=-1).astype(jnp.float32)
    per_doc = (gammaln(jnp.float32(total)) - gammaln(lengths + total)
               + jnp.sum(log_rising_factorial(n_dk, alpha), axis=-1))
    return jnp.sum(per_doc)


def prior_assignments(key, doc_offsets, num_tokens: int, num_topics: int, alpha: float):
    """Topic assignments drawn from their prior, Z ~ p(Z | alpha): theta_d ~ Dir(alpha 1_K)
    for each document, then z_dn ~ Cat(theta_d) for each token (documents ``doc_offsets``
    int32 [D+1] over ``num_tokens`` tokens; alpha per topic). Returns int32 [N]. With a small
    alpha (the papers' alpha / K) each document's tokens fall on one or a few topics, chosen
    at random: the dispersed start of a chain.

    Drawn on the host in float64 (numpy's Dirichlet, exact for alpha far below 1; each token
    by the inverse of its document's cumulative theta, O(N log(DK)), no [N, K] array), seeded
    from ``key``; works under jit and vmap (chains)."""
    alpha, num_topics = float(alpha), int(num_topics)

    def one(offsets, seed):
        rng = np.random.default_rng(np.asarray(seed, np.uint32))
        num_docs = offsets.shape[0] - 1
        theta = rng.dirichlet(np.full(num_topics, alpha), size=num_docs)  # [D, K]
        # cumulative theta of every document, offset by its index: increasing over (d, k)
        steps = (np.arange(num_docs)[:, None] + np.cumsum(theta, axis=1)).ravel()
        steps[num_topics - 1::num_topics] = np.arange(1, num_docs + 1)  # each row ends at d + 1
        doc_ids = np.repeat(np.arange(num_docs), np.diff(offsets))
        index = np.searchsorted(steps, doc_ids + rng.random(doc_ids.shape[0]), side="right")
        return (index - doc_ids * num_topics).astype(np.int32),

    out = jax.ShapeDtypeStruct((int(num_tokens),), jnp.int32)
    return jax.pure_callback(batched(one, 1), (out,), doc_offsets, seed_words_from_key(key),
                             vmap_method="expand_dims")[0]


# Most entries of the per-document exp table (rows of K, one per topic met in the document) and
# of its reciprocal: 2^22 doubles = 32 MiB each, all K rows up to K = 2048. A document meeting
# more topics than fit is finished in log space.
_TABLE_ENTRIES = 1 << 22

#: The sweeps' (max_exponent, table_entries) as the package's steps pass them: every caller
#: passes them (they have no defaults), so that a sweep is compiled for one signature.
TABLE_ARGUMENTS = (rt.MAX_EXPONENT, _TABLE_ENTRIES)


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
def _document_count_factor(d, k, n_dk, inv_nk, alpha, tb):
    """dab_k = (n_dk + alpha) / (n_k + V beta) AB_k: the factor of topic k's weight that is the
    same for every token of document d (the word's n_wk + beta and the token's table row
    complete it)."""
    tb.dab[k] = (n_dk[d, k] + alpha) * inv_nk[k] * tb.ab[k]


@numba.njit(cache=True, nogil=True, inline="always")
def _table_row(tb, k, used, capacity, num_topics):
    """Gives topic k a row of the document's table if it has none (``response_table.new_row``).
    Returns (whether the table form goes on: False when the table is full, the rows in use)."""
    if tb.row_of[k] >= 0:
        return True, used
    if used < capacity:
        rt.new_row(tb, used, k, tb.cen[:, k], num_topics)
        return True, used + 1
    return False, used


@numba.njit(cache=True, nogil=True, inline="always")
def _begin_document(d, start, end, z, eta, psi, rho, n_dk, inv_nk, alpha, tb, used,
                    max_exponent):
    """Document d's tables (``response_table.begin_document``: its scores S_t and the bounds
    of the tables' exponents) and, where the bounds allow the table form, its document factors
    and every topic's count factor, the previous document's rows forgotten. The same for the
    collapsed, the partially collapsed and the tempered sweeps (``inv_nk``: what
    :func:`_document_count_factor` reads). Returns (1 / N_d, the exponent's bound y, whether
    the table form holds, the rows in use)."""
    num_topics = n_dk.shape[1]
    inv_n = 1.0 / (end - start)
    rt.begin_document(d, start, end, inv_n, z, eta, psi, rho, tb)
    x_bound, y_bound = rt.exponent_bounds(tb)
    fast = x_bound + 2.0 * y_bound <= max_exponent  # False for nan/inf too
    if fast:
        rt.forget_rows(tb, used)
        used = 0
        rt.document_factors(tb, num_topics)
        for k in range(num_topics):
            _document_count_factor(d, k, n_dk, inv_nk, alpha, tb)
    return inv_n, y_bound, fast, used


@numba.njit(cache=True, nogil=True, inline="always")
def _token_leaves(d, k_old, fast, eta, n_dk, inv_nk, alpha, tb, used, capacity):
    """The document's tables once its token has left topic k_old (n_dk no longer counts it):
    in table form, k_old's row (made if it has none, :func:`_table_row`) and count factor;
    in log space (or once the table is full), the scores S_t without the token. The same for
    the collapsed, the partially collapsed and the tempered sweeps. Returns (whether the table
    form goes on, the rows in use)."""
    if fast:
        fast, used = _table_row(tb, k_old, used, capacity, n_dk.shape[1])
    if fast:
        _document_count_factor(d, k_old, n_dk, inv_nk, alpha, tb)
    else:
        for t in range(eta.shape[0]):
            tb.score[t] -= eta[t, k_old]
    return fast, used


@numba.njit(cache=True, nogil=True)
def table_capacity(doc_offsets, num_topics, table_entries):
    """The rows of a document's table: a document meets at most min(K, 2 N_d) topics (its
    own and one per move), and a table holds at most ``table_entries`` entries (at least two
    rows)."""
    max_len = 0
    for d in range(doc_offsets.shape[0] - 1):
        max_len = max(max_len, doc_offsets[d + 1] - doc_offsets[d])
    return min(num_topics, 2 * max_len, max(2, table_entries // num_topics))


@numba.njit(cache=True, nogil=True, inline="always")
def _after_draw(d, k_old, k_new, fast, eta, n_dk, inv_nk, alpha, tb, used, capacity,
                centred_old, y_bound, max_exponent):
    """The document's running state after a token moved from k_old to k_new (n_dk already
    counts it in k_new): its score S_t, and in table form its rows (the new topic's row, the
    moved factors, the count factors of both topics) and whether the table's exponent bound
    still holds. The same for the collapsed, the partially collapsed and the tempered sweeps
    (``inv_nk``: what ``_document_count_factor`` reads). Returns (fast, the rows in use)."""
    num_tasks = eta.shape[0]
    if not fast:
        for t in range(num_tasks):
            tb.score[t] += eta[t, k_new]
        return False, used
    if k_new != k_old:
        for t in range(num_tasks):
            tb.score[t] += eta[t, k_new] - eta[t, k_old]
        fast, used = _table_row(tb, k_new, used, capacity, n_dk.shape[1])
        if not fast:
            return False, used
        rt.move_factors(tb, tb.row_of[k_old], tb.row_of[k_new], n_dk.shape[1])
        _document_count_factor(d, k_old, n_dk, inv_nk, alpha, tb)
        for t in range(num_tasks):
            centred_old[t] = tb.cen[t, k_old]
        x_bound = rt.moved_score(tb, k_new, centred_old)
        fast = x_bound + 2.0 * y_bound <= max_exponent
    _document_count_factor(d, k_new, n_dk, inv_nk, alpha, tb)
    return fast, used


@numba.njit(cache=True, nogil=True)
def _lda_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, alpha, beta, inv_nk, v_beta):
    """The sweep without a response (plain LDA): the count weights alone."""
    num_topics = n_k.shape[0]
    weights = np.empty(num_topics)
    blocks = np.empty(num_blocks(num_topics))
    for d in range(doc_offsets.shape[0] - 1):
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            w = words[i]
            k_old = z[i]
            _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
            _lda_weights(d, w, n_dk, n_wk, inv_nk, alpha, beta, weights)
            k_new = draw(weights, num_topics, blocks, np.random.random())
            z[i] = k_new
            _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)


@numba.njit(cache=True, nogil=True, inline="always")
def _table_weights(d, w, row_old, n_wk, beta, weights, tb):
    """Table form: weight of topic k = dab_k (n_wk + beta) E[j, k], j the token's topic."""
    for k in range(weights.shape[0]):
        weights[k] = tb.dab[k] * (n_wk[w, k] + beta) * tb.table[row_old, k]


@numba.njit(cache=True, nogil=True, inline="always")
def _log_space_weights(d, w, eta, psi, rho, inv_n, n_dk, n_wk, inv_nk, alpha, beta, weights,
                       tb):
    """Log-space form: the count weights times the response factors of
    ``response_table.log_space_factors`` (relative to the largest); the score S_t is without
    the token."""
    num_topics = weights.shape[0]
    rt.log_space_factors(d, eta, psi, rho, inv_n, num_topics, tb)
    for k in range(num_topics):
        weights[k] = (n_dk[d, k] + alpha) * (n_wk[w, k] + beta) * inv_nk[k] * tb.shifted[k]


@document_loop
def _supervised_document(d, z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta,
                         inv_nk, v_beta, weights, blocks, centred_old, tb, used, capacity,
                         max_exponent):
    """One document's tokens in turn, with the response's factor. Returns (the number of
    tokens whose weights were computed in log space, the table rows in use)."""
    num_topics = n_k.shape[0]
    start = doc_offsets[d]
    end = doc_offsets[d + 1]
    inv_n, y_bound, fast, used = _begin_document(d, start, end, z, eta, psi, rho, n_dk,
                                                 inv_nk, alpha, tb, used, max_exponent)
    num_log_space = 0
    for i in range(start, end):
        w = words[i]
        k_old = z[i]
        _count_token(d, w, k_old, -1, n_dk, n_wk, n_k, inv_nk, v_beta)
        fast, used = _token_leaves(d, k_old, fast, eta, n_dk, inv_nk, alpha, tb, used, capacity)
        if fast:
            _table_weights(d, w, tb.row_of[k_old], n_wk, beta, weights, tb)
        else:
            num_log_space += 1
            _log_space_weights(d, w, eta, psi, rho, inv_n, n_dk, n_wk, inv_nk, alpha, beta,
                               weights, tb)
        k_new = draw(weights, num_topics, blocks, np.random.random())
        z[i] = k_new
        _count_token(d, w, k_new, 1, n_dk, n_wk, n_k, inv_nk, v_beta)
        fast, used = _after_draw(d, k_old, k_new, fast, eta, n_dk, inv_nk, alpha, tb, used,
                                 capacity, centred_old, y_bound, max_exponent)
    return num_log_space, used


@numba.njit(cache=True, nogil=True)
def _collapsed_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta, seed,
                     max_exponent, table_entries):
    """One in-place sweep over all tokens (module docstring). eta [T,K], psi/rho [T,D] float64;
    seed: numba's generator (one uniform per token, in token order). ``max_exponent < 0``
    sweeps every token in log space (the tests' second form); ``table_entries``: the most
    entries of a document's exp table (fewer make documents finish in log space sooner).

    Returns the number of tokens whose response factor was computed in log space (0 if T = 0).
    """
    np.random.seed(seed)
    num_docs = doc_offsets.shape[0] - 1
    num_topics = n_k.shape[0]
    num_tasks = eta.shape[0]
    v_beta = n_wk.shape[0] * beta
    inv_nk = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk[k] = 1.0 / (n_k[k] + v_beta)
    if num_tasks == 0:
        _lda_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, alpha, beta, inv_nk, v_beta)
        return 0
    capacity = table_capacity(doc_offsets, num_topics, table_entries)
    tb = rt.response_tables(num_tasks, num_topics, capacity, 0)
    all_topics = np.arange(num_topics).astype(np.uint32)
    rt.centre(eta, all_topics, num_topics, tb)
    weights = np.empty(num_topics)
    blocks = np.empty(num_blocks(num_topics))
    centred_old = np.empty(num_tasks)
    num_log_space = 0
    used = 0
    for d in range(num_docs):
        if doc_offsets[d + 1] == doc_offsets[d]:
            continue
        in_log_space, used = _supervised_document(
            d, z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta, inv_nk,
            v_beta, weights, blocks, centred_old, tb, used, capacity, max_exponent)
        num_log_space += in_log_space
    return num_log_space


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
    blocks = np.empty(num_blocks(num_topics))
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
                k_new = draw(weights, num_topics, blocks, np.random.random())
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
