"""The document-parallel, partially collapsed Z step: topics Phi drawn, then every document at
once.

Partially collapsed Gibbs (Magnusson, Jonsson, Villani and Broman, "Sparse partially collapsed
MCMC for parallel inference in topic models", JCGS 2018): theta is integrated out, the topics
are instantiated. One step draws

* Phi_k | Z ~ Dir(n_.k + beta) for every topic (:func:`_draw_topics`): G_wk ~ Gamma(n_wk + beta)
  and phi_wk = G_wk / S_k, S_k = sum_w G_wk;
* Z | Phi, eta, the augmentation: given Phi the documents are independent, so they are swept
  at the same time (:func:`_sweep_documents`), each token of a document in turn from

      p(z_dn = k | rest)  propto  (n_dk^-dn + alpha) phi_{w_dn k}
                                  * prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2),

  the response factor from the per-document tables of ``kernels.response_table``.

Each draw is from an exact conditional of the joint of (Z, Phi, eta, the augmentation) with
theta integrated out, and Phi is drawn afresh from its conditional before the Z it serves, so
the chain on (Z, eta, the augmentation) leaves the same posterior invariant as the collapsed
sampler's (its enumeration test is the collapsed sampler's: Phi integrates out).

Every random number that document d uses comes from its own stream (``kernels.random``:
stream 2 d + 1 of the step's seed) and every one of the Phi draw's block b of
:data:`WORD_BLOCK` words from stream 2 b; sums over words (the column sums S_k, the
log-likelihood) are taken block by block and the blocks' sums added in block order. So a step
draws the same z whatever the number of threads (numba ``prange``) it runs on.

The chain state holds z and n_dk alone (``kernels.assignments``), and the step holds no
word-topic counts [V, K]: the passes over the words (Phi's draw, then the new z's
log p(W | Z)) count one word's n_wk at a time from z, through the word -> tokens index, into a
[K] array of their block's. Phi's Gamma draws [V, K] are the step's one array of that size,
kept from one step to the next (``kernels.host.Scratch``).
"""

from __future__ import annotations

import numba
import numpy as np

from topiczoo.kernels import response_table as rt
from topiczoo.kernels.assignments import (_consume_word, _lgamma_table, _topic_terms,
                                          assignments_callback, chains_host, word_token_index)
from topiczoo.kernels.categorical import draw, num_blocks
from topiczoo.kernels.host import Scratch, document_loop, seed_words_from_key, threads_for
from topiczoo.kernels.random import (SMALL_SHAPE, _gamma_entry, gamma_row, row_scratch,
                                     seed_stream, small_shape_envelope, state_of, uniform)
from topiczoo.kernels.topics import (TABLE_ARGUMENTS, _after_draw, _begin_document,
                                      _token_leaves, table_capacity)

#: Words per block of the Phi draw and of the passes over the words (one random stream, one
#: partial sum each: the unit of work the threads share).
WORD_BLOCK = 64
#: Documents per piece of work of the sweep (its tables are allocated once per piece).
DOC_CHUNK = 16


# ---------------------------------------------------------------------------------------------
# Passes over the words: each block of WORD_BLOCK words is one piece of work, its counts n_wk
# of one word at a time made from z through the word -> tokens index (no [V, K] counts)


@numba.njit(cache=True, nogil=True, inline="always")
def _count_word(w, z, word_offsets, word_tokens, counts):
    """counts [K] (all zeros) += the counts n_wk of word w's tokens' assignments."""
    for p in range(word_offsets[w], word_offsets[w + 1]):
        counts[z[word_tokens[p]]] += 1


@numba.njit(cache=True, nogil=True)
def _draw_word_block(z, word_offsets, word_tokens, beta, seed, b, absent, g, partial):
    """Block b of words of :func:`_draw_topics`: g[w, k] for its words, from stream 2 b, and
    partial[b, k] = their sum (outside the parallel function: numba's parallel
    transformations must not see the generator's state tuple, which stays in registers
    through the loop, ``kernels.random``).

    At beta <= SMALL_SHAPE each word's row is drawn at once (``kernels.random.gamma_row``:
    every entry's Gamma(beta) variate, the tries together in loops the compiler vectorizes
    where it can, plus a Gamma(n_wk) variate where n_wk > 0); above it entry by entry. Every
    random number serves one entry, so the entries are independent, each with its exact
    law."""
    vocab_size, num_topics = g.shape
    counts = np.zeros(num_topics, np.int32)
    scratch = row_scratch(num_topics)
    rng = np.empty(4, np.uint64)
    seed_stream(seed, 2 * b, rng)
    state = state_of(rng)
    for w in range(b * WORD_BLOCK, min(vocab_size, (b + 1) * WORD_BLOCK)):
        _count_word(w, z, word_offsets, word_tokens, counts)
        row = g[w]
        if beta <= SMALL_SHAPE:
            state = gamma_row(state, beta, absent, counts, scratch, row)
        else:
            for k in range(num_topics):
                row[k], state = _gamma_entry(state, counts[k] + beta, absent)
        for k in range(num_topics):
            partial[b, k] += row[k]
            counts[k] = 0


@numba.njit(cache=True, nogil=True, parallel=True)
def _draw_topics(z, word_offsets, word_tokens, beta, seed, g, inv_s):
    """Phi_k ~ Dir(n_.k + beta) given the assignments z [N] (word_offsets, word_tokens: the
    word -> tokens index): g [V, K] (overwritten) = G_wk ~ Gamma(n_wk + beta), inv_s [K] =
    1 / S_k, S_k = sum_w G_wk, so that phi_wk = g[w, k] * inv_s[k]. Block b of words draws
    from stream 2 b; S_k sums the blocks' sums in block order. The shapes at or below
    SMALL_SHAPE are those of the words absent from a topic, all beta: the small-shape
    sampler's envelope is computed once, for beta."""
    vocab_size, num_topics = g.shape
    num_word_blocks = (vocab_size + WORD_BLOCK - 1) // WORD_BLOCK
    partial = np.zeros((num_word_blocks, num_topics))
    absent = small_shape_envelope(beta)
    for b in numba.prange(num_word_blocks):
        _draw_word_block(z, word_offsets, word_tokens, beta, seed, b, absent, g, partial)
    for k in range(num_topics):
        total = 0.0
        for b in range(num_word_blocks):
            total += partial[b, k]
        inv_s[k] = 1.0 / total


@numba.njit(cache=True, nogil=True)
def _block_log_likelihood(z, word_offsets, word_tokens, num_topics, beta, table, b):
    """Block b of words' terms of :func:`_log_likelihood` (``kernels.assignments._consume_word``
    of each word, its counts made from z)."""
    counts = np.zeros(num_topics, np.int32)
    acc = 0.0
    for w in range(b * WORD_BLOCK, min(word_offsets.shape[0] - 1, (b + 1) * WORD_BLOCK)):
        _count_word(w, z, word_offsets, word_tokens, counts)
        acc = _consume_word(acc, w, z, word_offsets, word_tokens, counts, table, beta)
    return acc


@numba.njit(cache=True, nogil=True, parallel=True)
def _log_likelihood(z, word_offsets, word_tokens, n_k, beta):
    """log p(W | Z) (nats, float64) of the assignments z [N] (word_offsets, word_tokens: the
    word -> tokens index; n_k [K]: the topics' token counts), as
    ``kernels.assignments._consume_log_likelihood`` computes it from counts, word block by word
    block, the blocks' sums added in block order."""
    vocab_size = word_offsets.shape[0] - 1
    num_word_blocks = (vocab_size + WORD_BLOCK - 1) // WORD_BLOCK
    table = _lgamma_table(beta)
    partial = np.zeros(num_word_blocks)
    for b in numba.prange(num_word_blocks):
        partial[b] = _block_log_likelihood(z, word_offsets, word_tokens, n_k.shape[0], beta,
                                           table, b)
    total = _topic_terms(n_k, vocab_size * beta)
    for b in range(num_word_blocks):
        total += partial[b]
    return total


# ---------------------------------------------------------------------------------------------
# The documents


# phi_wk = g[w, k] inv_s[k] below: G_wk / S_k here, [(n_wk + beta) / (n_k + V beta)]^tau in the
# tempered sweep (``kernels.tempering``), which shares these weights


@numba.njit(cache=True, nogil=True, inline="always")
def _phi_weights(d, w, n_dk, g, inv_s, alpha, weights):
    """Without a response: weight of topic k = (n_dk + alpha) phi_wk."""
    for k in range(weights.shape[0]):
        weights[k] = (n_dk[d, k] + alpha) * g[w, k] * inv_s[k]


@numba.njit(cache=True, nogil=True, inline="always")
def _phi_table_weights(w, row_old, g, weights, tb):
    """Table form: weight of topic k = dab_k G_wk E[j, k] (dab_k = (n_dk + alpha) AB_k / S_k),
    j the token's topic."""
    for k in range(weights.shape[0]):
        weights[k] = tb.dab[k] * g[w, k] * tb.table[row_old, k]


@numba.njit(cache=True, nogil=True, inline="always")
def _phi_log_space_weights(d, w, eta, psi, rho, inv_n, n_dk, g, inv_s, alpha, weights, tb):
    """Log-space form: (n_dk + alpha) phi_wk times the response factors of
    ``response_table.log_space_factors`` (relative to the largest); the score S_t is without
    the token."""
    num_topics = weights.shape[0]
    rt.log_space_factors(d, eta, psi, rho, inv_n, num_topics, tb)
    for k in range(num_topics):
        weights[k] = (n_dk[d, k] + alpha) * g[w, k] * inv_s[k] * tb.shifted[k]


@document_loop
def _plain_document(d, z, n_dk, words, doc_offsets, g, inv_s, alpha, rng, weights, blocks):
    """Document d's tokens in turn, without a response."""
    num_topics = g.shape[1]
    for i in range(doc_offsets[d], doc_offsets[d + 1]):
        w = words[i]
        n_dk[d, z[i]] -= 1
        _phi_weights(d, w, n_dk, g, inv_s, alpha, weights)
        k_new = draw(weights, num_topics, blocks, uniform(rng))
        z[i] = k_new
        n_dk[d, k_new] += 1


@document_loop
def _supervised_document(d, z, n_dk, words, doc_offsets, g, inv_s, eta, psi, rho, alpha, rng,
                         weights, blocks, centred_old, tb, used, capacity, max_exponent):
    """Document d's tokens in turn with the response's factor (the tables of
    ``kernels.response_table``, or log space where their bounds fail). Returns (the number of
    tokens whose weights were computed in log space, the table rows in use)."""
    num_topics = g.shape[1]
    start = doc_offsets[d]
    end = doc_offsets[d + 1]
    inv_n, y_bound, fast, used = _begin_document(d, start, end, z, eta, psi, rho, n_dk, inv_s,
                                                 alpha, tb, used, max_exponent)
    num_log_space = 0
    for i in range(start, end):
        w = words[i]
        k_old = z[i]
        n_dk[d, k_old] -= 1
        fast, used = _token_leaves(d, k_old, fast, eta, n_dk, inv_s, alpha, tb, used, capacity)
        if fast:
            _phi_table_weights(w, tb.row_of[k_old], g, weights, tb)
        else:
            num_log_space += 1
            _phi_log_space_weights(d, w, eta, psi, rho, inv_n, n_dk, g, inv_s, alpha, weights,
                                   tb)
        k_new = draw(weights, num_topics, blocks, uniform(rng))
        z[i] = k_new
        n_dk[d, k_new] += 1
        fast, used = _after_draw(d, k_old, k_new, fast, eta, n_dk, inv_s, alpha, tb, used,
                                 capacity, centred_old, y_bound, max_exponent)
    return num_log_space, used


@numba.njit(cache=True, nogil=True)
def _sweep_chunk(first, last, z, n_dk, words, doc_offsets, g, inv_s, eta, psi, rho, alpha, seed,
                 cen, mid, half, capacity, max_exponent):
    """Documents [first, last) in turn, with tables of their own that share the sweep's
    centred weights (cen, mid, half); document d draws from stream 2 d + 1 of ``seed``.
    Returns the number of tokens whose response factor was computed in log space."""
    num_topics = g.shape[1]
    num_tasks = eta.shape[0]
    rng = np.empty(4, np.uint64)
    weights = np.empty(num_topics)
    blocks = np.empty(num_blocks(num_topics))
    centred_old = np.empty(num_tasks)
    tb = rt.sharing_centring(cen, mid, half, capacity if num_tasks > 0 else 0, 0)
    used = 0
    num_log_space = 0
    for d in range(first, last):
        for k in range(num_topics):
            n_dk[d, k] = 0
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            n_dk[d, z[i]] += 1
        if doc_offsets[d + 1] == doc_offsets[d]:
            continue
        seed_stream(seed, 2 * d + 1, rng)
        if num_tasks == 0:
            _plain_document(d, z, n_dk, words, doc_offsets, g, inv_s, alpha, rng, weights,
                            blocks)
        else:
            in_log_space, used = _supervised_document(
                d, z, n_dk, words, doc_offsets, g, inv_s, eta, psi, rho, alpha, rng, weights,
                blocks, centred_old, tb, used, capacity, max_exponent)
            num_log_space += in_log_space
    return num_log_space


@numba.njit(cache=True, nogil=True)
def _centring(eta):
    """(e_tk = eta_tk - m_t [T, K], m_t [T], h_t [T]) of ``response_table.centre`` over all
    K topics, computed once for the sweep and shared by its threads (outside the parallel
    function: numba's parallel transformations must not see the tables' tuple)."""
    shared = rt.response_tables(eta.shape[0], eta.shape[1], 0, 0)
    rt.centre(eta, np.arange(eta.shape[1]).astype(np.uint32), eta.shape[1], shared)
    return shared.cen, shared.mid, shared.half


@numba.njit(cache=True, nogil=True, parallel=True)
def _sweep_documents(z, n_dk, words, doc_offsets, g, inv_s, eta, psi, rho, alpha, seed,
                     max_exponent, table_entries):
    """Every document's tokens in turn, the documents in parallel (module docstring), pieces
    of :data:`DOC_CHUNK` documents at a time: z [N] updated in place, n_dk [D, K] filled (its
    rows are the documents' own). eta float64 [T, K]; psi, rho float64 [T, D]. Returns the
    number of tokens whose response factor was computed in log space."""
    num_docs = doc_offsets.shape[0] - 1
    capacity = table_capacity(doc_offsets, g.shape[1], table_entries)
    cen, mid, half = _centring(eta)
    num_log_space = 0
    for chunk in numba.prange((num_docs + DOC_CHUNK - 1) // DOC_CHUNK):
        num_log_space += _sweep_chunk(
            chunk * DOC_CHUNK, min(num_docs, (chunk + 1) * DOC_CHUNK), z, n_dk, words,
            doc_offsets, g, inv_s, eta, psi, rho, alpha, seed, cen, mid, half, capacity,
            max_exponent)
    return num_log_space


# ---------------------------------------------------------------------------------------------
# The step


def _host_step(alpha, beta, num_topics, vocab_size, num_threads):
    """The host side of :func:`parallel_assignments_step`: the chains one after another, each
    on up to ``num_threads`` numba threads (``kernels.assignments.chains_host``; fewer on small
    corpora, ``kernels.host.threads_for``, and never more than numba started:
    ``NUMBA_NUM_THREADS``), with Phi's [V, K] Gamma draws kept from step to step
    (``kernels.host.Scratch``: their contents are overwritten by each step)."""
    scratch = Scratch(lambda: np.empty((vocab_size, num_topics)))

    def one_chain(z, words, offsets, w_off, w_tok, eta, psi, rho, seed):
        if w_off.shape[0] == 0:
            w_off, w_tok = word_token_index(words, vocab_size)
        seed = np.uint64((int(seed[0]) << 32) | int(seed[1]))
        previous = numba.get_num_threads()
        numba.set_num_threads(min(threads_for(z.shape[0], num_threads),
                                  numba.config.NUMBA_NUM_THREADS))
        try:
            with scratch.borrow() as g:
                inv_s = np.empty(num_topics)
                _draw_topics(z, w_off, w_tok, beta, seed, g, inv_s)
                n_dk = np.empty((offsets.shape[0] - 1, num_topics), np.int32)
                _sweep_documents(z, n_dk, words, offsets, g, inv_s, eta, psi, rho, alpha, seed,
                                 *TABLE_ARGUMENTS)
                return n_dk, _log_likelihood(z, w_off, w_tok, n_dk.sum(axis=0), beta)
        finally:
            numba.set_num_threads(previous)

    # z and n_dk (the scratch's [V, K] draws stay): glibc's free pages go back
    return chains_host(one_chain)


def parallel_assignments_step(key, z, words, doc_offsets, eta, psi, rho, alpha: float,
                              beta: float, *, num_topics: int, vocab_size: int,
                              num_threads: int, word_offsets=None, word_tokens=None):
    """One partially collapsed step (module docstring): Phi | Z, then Z | Phi, eta, psi, rho
    with the documents on ``num_threads`` threads, for a chain whose state holds the
    assignments alone.

    Args:
      key: JAX PRNG key; the step's seed (64 bits) is derived from it, and every document's and
        every block of words' stream from the seed.
      z: int32 [N] topic assignments; words: int32 [N]; doc_offsets: int32 [D+1].
      eta: float32 [T, K] (T = 0 for LDA); psi, rho: float32 [T, D] (Gaussian form).
      alpha, beta: symmetric per-topic / per-word Dirichlet parameters (static floats).
      num_topics, vocab_size, num_threads: K, V and the threads (static; the draws do not
        depend on the threads).
      word_offsets, word_tokens: the data's word -> tokens index (int32 [V+1], int32 [N]).
    Returns (z int32 [N], n_dk int32 [D, K], log p(W | Z) float32 [], nats). Works under jit,
    vmap (chains) and lax loops.
    """
    alpha, beta = float(alpha), float(beta)
    host = _host_step(alpha, beta, int(num_topics), int(vocab_size), int(num_threads))
    return assignments_callback(host, seed_words_from_key(key), z, words, doc_offsets, eta, psi,
                                rho, num_topics, word_offsets, word_tokens)
