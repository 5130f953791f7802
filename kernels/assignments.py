"""Z steps for chains whose state holds the topic assignments alone.

A sweep of the parametric family needs the counts n_dk [D, K], n_wk [V, K] and n_k [K] of the
assignments z. Kept in the chain state, n_wk (at K = 400 on 20news 86 MB) is copied into the
host callback and back out to XLA at every call and held by the state besides. Here the chain
state holds z (and n_dk, which zbar needs) and the host rebuilds the counts from z at every call
(O(N) into fresh zeroed arrays), runs the sweep on them in place, computes log p(W | Z) of the
new z from those counts (O(N + K), :func:`_consume_log_likelihood`) and drops them. The sweep
is any in-place sweep over (z, n_dk, n_wk, n_k): the collapsed Gibbs sweep
(:func:`collapsed_assignments_step`, ``kernels.topics``) or the light Metropolis-Hastings sweep
(``kernels.light.light_assignments_step``). Counts are a function of z, so such a step draws
exactly what the same sweep draws from a state that carries them (same seed, same z).

Measured on 20news, 20 tasks, K = 400, one chain, 40 iterations in a fresh process
(``studies/light_20news.py --part rss``): the exact sampler's fit peaked at 1,747 MB (1,506 MB
with large blocks returned to the system) while its state held the counts, and
at 957 MB (845 MB) with this step; the light sampler's, which has used it from the start, at
967 MB (848 MB).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numba
import numpy as np

from topiczoo.kernels.host import (Scratch, chain_copies, over_chains, read_only, seed_from_key,
                                   threads_for, trim_after)
from topiczoo.kernels.topics import TABLE_ARGUMENTS, _collapsed_sweep


@numba.njit(cache=True, nogil=True)
def _word_token_index(words, vocab_size, word_offsets, word_tokens):
    """Counting sort of token indices by word: word_tokens[word_offsets[w]:word_offsets[w+1]]
    are the tokens of word w, in corpus order."""
    word_offsets[:] = 0
    for i in range(words.shape[0]):
        word_offsets[words[i] + 1] += 1
    for w in range(vocab_size):
        word_offsets[w + 1] += word_offsets[w]
    fill = word_offsets[:-1].copy()
    for i in range(words.shape[0]):
        w = words[i]
        word_tokens[fill[w]] = i
        fill[w] += 1


def word_token_index(words, vocab_size: int):
    """(word_offsets int32 [V+1], word_tokens int32 [N]): the tokens of each word, read-only
    (the kernels' inputs they only read all are: ``kernels.host.read_only``).

    A property of the data only: build it once per corpus (``kernels.gibbs.corpus_arrays``
    with V does, into the ``CorpusData``) and pass it to the steps; they rebuild it at every
    call otherwise (O(N + V), 6-8 ms on 20news).
    """
    words = np.ascontiguousarray(words, np.int32)
    word_offsets = np.zeros(int(vocab_size) + 1, np.int64)
    word_tokens = np.empty(words.shape[0], np.int32)
    _word_token_index(words, int(vocab_size), word_offsets, word_tokens)
    if word_offsets[-1] >= 2**31:
        raise ValueError("more than 2^31 - 1 tokens")
    return read_only(word_offsets.astype(np.int32), word_tokens)


@numba.njit(cache=True, nogil=True)
def _fill_counts(z, words, doc_offsets, n_dk, n_wk, n_k):
    """Counts of assignments z into zeroed n_dk, n_wk, n_k (O(N))."""
    for d in range(doc_offsets.shape[0] - 1):
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            k = z[i]
            n_dk[d, k] += 1
            n_wk[words[i], k] += 1
            n_k[k] += 1


_LGAMMA_TABLE = 1024  # counts below this get their log-gamma terms from a table


@numba.njit(cache=True, nogil=True, inline="always")
def _topic_terms(n_k, v_beta):
    """sum_k log Gamma(V beta) - log Gamma(n_k + V beta): log p(W | Z)'s terms of the topics'
    totals n_k [K]."""
    total = 0.0
    for k in range(n_k.shape[0]):
        total += math.lgamma(v_beta) - math.lgamma(n_k[k] + v_beta)
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _lgamma_table(beta):
    """table[c] = log Gamma(c + beta) - log Gamma(beta) for c < _LGAMMA_TABLE: most counts are
    small, and their terms from a table are the same values, 40 ns a call saved."""
    lgamma_beta = math.lgamma(beta)
    table = np.empty(_LGAMMA_TABLE)
    for count in range(_LGAMMA_TABLE):
        table[count] = math.lgamma(count + beta) - lgamma_beta
    return table


@numba.njit(cache=True, nogil=True, inline="always")
def _consume_word(total, w, z, word_offsets, word_tokens, counts, table, beta):
    """total + word w's terms of log p(W | Z), log Gamma(n_wk + beta) - log Gamma(beta) for each
    k with n_wk > 0 (counts [K]: its n_w., reached through its tokens in their order, each taken
    once and set to 0)."""
    for p in range(word_offsets[w], word_offsets[w + 1]):
        k = z[word_tokens[p]]
        count = counts[k]
        if count > 0:
            if count < _LGAMMA_TABLE:
                total += table[count]
            else:
                total += math.lgamma(count + beta) - math.lgamma(beta)
            counts[k] = 0
    return total


@numba.njit(cache=True, nogil=True)
def _consume_log_likelihood(z, word_offsets, word_tokens, n_wk, n_k, beta):
    """log p(W | Z) (``kernels.parallel_jax.collapsed_log_likelihood``, float64) from the
    counts of z in O(N + K): the nonzero entries of n_wk are reached through the tokens of
    each word (row by row), each counted once and then set to 0, so n_wk is all zeros on
    return."""
    total = _topic_terms(n_k, n_wk.shape[0] * beta)
    table = _lgamma_table(beta)
    for w in range(word_offsets.shape[0] - 1):
        total = _consume_word(total, w, z, word_offsets, word_tokens, n_wk[w], table, beta)
    return total


def host_assignments_step(sweep, beta: float, num_topics: int, vocab_size: int,
                          num_threads: int = 1):
    """The host side of an assignments step (module docstring): counts rebuilt from z, one
    ``sweep`` on them, log p(W | Z) of the new z from the counts before they are dropped.

    ``sweep(z, n_dk, n_wk, n_k, words, doc_offsets, word_offsets, word_tokens, eta, psi, rho,
    seed)`` updates z and the counts in place (eta, psi, rho float64; seed int); None computes
    the log-likelihood of z alone (:func:`assignments_log_likelihood`). Under
    ``vmap_method="expand_dims"`` every argument has a leading chain axis and the chains are
    swept on up to ``num_threads`` threads (each chain's sweep is its own: the same draws as
    one thread). Each chain's n_wk (int32 [V, K]) is kept from one step to the next
    (``kernels.host.Scratch``): all zeros between steps, as the log-likelihood pass leaves it."""
    n_wk_zeros = Scratch(lambda: np.zeros((vocab_size, num_topics), np.int32))

    def one_chain(z, words, offsets, w_off, w_tok, eta, psi, rho, seed):
        if w_off.shape[0] == 0:
            w_off, w_tok = word_token_index(words, vocab_size)
        n_dk = np.zeros((offsets.shape[0] - 1, num_topics), np.int32)
        n_k = np.zeros(num_topics, np.int32)
        with n_wk_zeros.borrow() as n_wk:
            _fill_counts(z, words, offsets, n_dk, n_wk, n_k)
            if sweep is not None:
                sweep(z, n_dk, n_wk, n_k, words, offsets, w_off, w_tok, eta, psi, rho, int(seed))
            return n_dk, _consume_log_likelihood(z, w_off, w_tok, n_wk, n_k, beta)

    return chains_host(one_chain, num_threads)


def chains_host(one_chain, num_threads: int = 1, freed_bytes: int = 0):
    """``host(z, words, doc_offsets, word_offsets, word_tokens, eta, psi, rho, *more, seed) ->
    (z, n_dk, log p(W | Z))`` of the assignments steps: ``one_chain(z, words, doc_offsets,
    word_offsets, word_tokens, eta, psi, rho, *more, seed) -> (n_dk, log_likelihood)`` updates
    one chain's z (int32, a copy of the input's) in place (eta, psi, rho and ``more``, a step's
    further numbers such as the tempered sweep's power, float64). Unbatched one chain; under
    ``vmap_method="expand_dims"`` every argument has a leading chain axis and the chains run on
    up to ``num_threads`` threads. After the call, glibc's free heap pages go back to the system
    when z, n_dk and the ``freed_bytes`` a chain's step allocated and dropped are large
    (``kernels.host.trim_after``); the [V, K] arrays a step needs but does not return are better
    kept for the next one (``kernels.host.Scratch``)."""

    def host(z, words, doc_offsets, word_offsets, word_tokens, *numbers):
        *numbers, seed = numbers
        inputs = read_only(words, doc_offsets, word_offsets, word_tokens)
        inputs += [np.asarray(a, np.float64) for a in numbers]
        seed = np.asarray(seed)
        z = np.asarray(z)
        if z.ndim == 1:
            z = np.array(z, dtype=np.int32)
            n_dk, log_lik = one_chain(z, *inputs, seed)
            out = z, n_dk, np.float32(log_lik)
        else:
            inputs.append(seed)
            num = max(a.shape[0] for a in (z, *inputs))
            z = chain_copies(z, num)
            chains = over_chains(
                lambda c: one_chain(z[c], *(a[min(c, a.shape[0] - 1)] for a in inputs)), num,
                threads_for(z.size, num_threads))
            out = (z, np.stack([n_dk for n_dk, _ in chains]),
                   np.array([log_lik for _, log_lik in chains], np.float32))
        num_chains = 1 if out[0].ndim == 1 else out[0].shape[0]
        trim_after(out[0].nbytes + out[1].nbytes + num_chains * freed_bytes)
        return out

    return host


def check_word_index(word_offsets, word_tokens) -> None:
    """A step's word index (:func:`word_token_index`) is given whole or not at all."""
    if (word_offsets is None) != (word_tokens is None):
        raise ValueError("pass both word_offsets and word_tokens, or neither")


def assignments_callback(host, seed, z, words, doc_offsets, eta, psi, rho, num_topics,
                         word_offsets=None, word_tokens=None, more=()):
    """(z int32 [N], n_dk int32 [D, K], log p(W | Z) float32 []) from ``host``
    (:func:`chains_host`) through ``jax.pure_callback``, handing it the arrays of ``more``
    after rho and ``seed`` (uint32 words from the step's key, ``kernels.host``) last; works
    under jit and vmap."""
    check_word_index(word_offsets, word_tokens)
    if word_offsets is None:
        word_offsets = word_tokens = jnp.zeros((0,), jnp.int32)
    num_docs = doc_offsets.shape[-1] - 1
    out_shape = (jax.ShapeDtypeStruct(z.shape, jnp.int32),
                 jax.ShapeDtypeStruct((num_docs, int(num_topics)), jnp.int32),
                 jax.ShapeDtypeStruct((), jnp.float32))
    return jax.pure_callback(host, out_shape, z, words, doc_offsets, word_offsets, word_tokens,
                             eta, psi, rho, *more, seed, vmap_method="expand_dims")


def collapsed_assignments_step(key, z, words, doc_offsets, eta, psi, rho, alpha: float,
                               beta: float, *, num_topics: int, vocab_size: int,
                               word_offsets=None, word_tokens=None,
                               log_likelihood: bool = False, num_threads: int = 1):
    """One collapsed Gibbs sweep over every token (``kernels.topics._collapsed_sweep``, the
    papers' sampler) for a chain whose state holds the assignments alone.

    Args:
      key: JAX PRNG key; the host seed is derived from it.
      z: int32 [N] topic assignments; words: int32 [N]; doc_offsets: int32 [D+1].
      eta: float32 [T, K] (T = 0 for LDA); psi, rho: float32 [T, D] (Gaussian form).
      alpha, beta: symmetric per-topic / per-word Dirichlet parameters (static floats).
      num_topics, vocab_size: K and V (static).
      word_offsets, word_tokens: the data's :func:`word_token_index` (int32 [V+1], int32 [N]),
        which the log-likelihood pass reads; computed on every call if omitted.
      log_likelihood (static): also return log p(W | Z) of the new z (nats), computed from the
        host's counts in O(N + K) before they are dropped.
      num_threads (static): chains swept at once (the draws do not depend on it).
    Returns (z int32 [N], n_dk int32 [D, K]) after the sweep, and float32 [] log p(W | Z) with
    ``log_likelihood`` (as ``kernels.light.light_assignments_step``). Works under jit, vmap
    (chains) and lax loops.
    """
    alpha, beta = float(alpha), float(beta)

    def sweep(z, n_dk, n_wk, n_k, words, offsets, w_off, w_tok, eta, psi, rho, seed):
        _collapsed_sweep(z, n_dk, n_wk, n_k, words, offsets, eta, psi, rho, alpha, beta, seed,
                         *TABLE_ARGUMENTS)

    host = host_assignments_step(sweep, beta, int(num_topics), int(vocab_size), int(num_threads))
    out = assignments_callback(host, seed_from_key(key), z, words, doc_offsets, eta, psi, rho,
                               num_topics, word_offsets, word_tokens)
    return out if log_likelihood else out[:2]


def log_likelihood_differences(zs, words, doc_offsets, beta: float, *, num_topics: int,
                               vocab_size: int, word_offsets=None, word_tokens=None):
    """l_{r+1} - l_r (nats, float32 [R - 1]), l_r = log p(W | Z_r) of assignments zs int32
    [R, N] (``words``, ``doc_offsets``, the word index as in
    :func:`assignments_log_likelihood`): each l_r summed in float64 on the host and the
    differences rounded once, so that each is exact to float32's relative precision of the
    difference itself. Differences of the float32 values would not be: rounding 5.6M nats to
    float32 errs by up to 0.25. Works under jit and vmap (a leading chain axis)."""
    check_word_index(word_offsets, word_tokens)
    if word_offsets is None:
        word_offsets = word_tokens = jnp.zeros((0,), jnp.int32)
    n_wk_zeros = Scratch(lambda: np.zeros((int(vocab_size), int(num_topics)), np.int32))

    def one_chain(zs, words, offsets, w_off, w_tok):
        if w_off.shape[0] == 0:
            w_off, w_tok = word_token_index(words, vocab_size)
        values = np.empty(zs.shape[0])
        with n_wk_zeros.borrow() as n_wk:
            for r, z in enumerate(zs):
                n_dk = np.zeros((offsets.shape[0] - 1, int(num_topics)), np.int32)
                n_k = np.zeros(int(num_topics), np.int32)
                _fill_counts(z, words, offsets, n_dk, n_wk, n_k)
                values[r] = _consume_log_likelihood(z, w_off, w_tok, n_wk, n_k, float(beta))
        return np.diff(values).astype(np.float32)

    def host(zs, words, doc_offsets, word_offsets, word_tokens):
        zs = np.asarray(zs, np.int32)
        if zs.ndim == 2:
            return one_chain(zs, *read_only(words, doc_offsets, word_offsets, word_tokens))
        inputs = [read_only(*(np.asarray(a)[min(c, a.shape[0] - 1)] for a in
                              (words, doc_offsets, word_offsets, word_tokens)))
                  for c in range(zs.shape[0])]
        return np.stack([one_chain(z, *args) for z, args in zip(zs, inputs)])

    out_shape = jax.ShapeDtypeStruct((zs.shape[-2] - 1,), jnp.float32)
    return jax.pure_callback(host, out_shape, zs, words, doc_offsets, word_offsets, word_tokens,
                             vmap_method="expand_dims")


def assignments_log_likelihood(z, words, doc_offsets, beta: float, *, num_topics: int,
                               vocab_size: int, word_offsets=None, word_tokens=None):
    """log p(W | Z) (nats, float32 []) of assignments z int32 [N] of tokens ``words`` int32
    [N] (documents ``doc_offsets`` int32 [D+1]), the value of
    ``kernels.parallel_jax.collapsed_log_likelihood`` computed on the host in O(N + K) from counts
    rebuilt there (no V x K array in XLA); ``word_offsets``, ``word_tokens``: the data's
    :func:`word_token_index`, computed if omitted. Works under jit and vmap."""
    host = host_assignments_step(None, float(beta), int(num_topics), int(vocab_size))
    empty = jnp.zeros((0, num_topics), jnp.float32)
    nothing = jnp.zeros((0, doc_offsets.shape[-1] - 1), jnp.float32)
    return assignments_callback(host, seed_from_key(jax.random.PRNGKey(0)), z, words,
                                doc_offsets, empty,
                                nothing, nothing, num_topics, word_offsets, word_tokens)[2]
