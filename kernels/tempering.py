"""Replica exchange (parallel tempering) of a topic model's chain: hot replicas, exact swaps.

Single-token moves do not cross between the modes of a topic model's posterior on long
documents. Replica exchange runs R copies ("replicas") of one chain side by side, replica r at
the tempered target

    pi_r(Z, eta, augmentation)  propto  p(W | Z)^tau_r  p(Z | alpha) p(eta)
                                        * g(y, augmentation | Z, eta)

(tau_0 = 1 > tau_1 > ... > tau_{R-1} > 0: only the word likelihood p(W | Z), topics integrated
out, is raised to a power; g is the response's augmented factor, untempered), and after every
cycle proposes to exchange the states of neighbouring replicas. The cold replica (r = 0)
targets the posterior; its draws are the chain's draws.

Why it is exact
---------------
* Every block of a hot replica draws from its conditional under pi_r. eta | rest and the
  augmentation | rest do not involve p(W | Z), so they are the untempered blocks. Each token's
  topic under pi_r is the collapsed conditional with its word factor raised to tau_r,

      p_r(z_dn = k | rest)  propto  (n_dk + alpha) [(n_wk + beta) / (n_k + V beta)]^tau_r
                                    * prod_t exp(psi_td omega_td(k) - rho_td omega_td(k)^2 / 2)

  (counts without the token): the ratio of pi_r at two values of one token's topic is the
  ratio of p(W | Z) to the power tau_r times the untempered ratios of the rest.
  :func:`tempered_assignments_step` sweeps every token so: the partially collapsed sweep's
  weights with phi_wk replaced by [(n_wk + beta) / (n_k + V beta)]^tau_r, kept up to date as
  the tokens move, and the response's tables of every sweep (``kernels.response_table``).
* A swap of replicas i and i + 1 is a Metropolis-Hastings move on the product target
  prod_r pi_r with a symmetric proposal; its ratio is
  pi_i(x_{i+1}) pi_{i+1}(x_i) / (pi_i(x_i) pi_{i+1}(x_{i+1}))
  = exp((tau_i - tau_{i+1}) (l_{i+1} - l_i)), l = log p(W | Z) of each state: every untempered
  factor appears once in the numerator and once in the denominator.
  Each swap move picks at random (probability 1/2 each) the pairs (0, 1), (2, 3), ... or
  (1, 2), (3, 4), ..., which do not overlap, and decides each pair on its own uniform: a
  random mixture of two exact kernels.

The product target's first marginal is the posterior, so the cold replica's states, taken
after each cycle and swap, are draws of the posterior (``tests/test_tempering.py``: its Z
frequencies against enumeration, and a hot replica's against the tempered target's).

:func:`replica_exchange` wraps any family's :class:`~topiczoo.kernels.gibbs.Sampler` given
its tempered cycle: a :class:`Tempering` of ``cycle(key, state, data, power)``, the tempered
log density ``log_density(state, data)`` (here log p(W | Z), float32; the monitors') and, for
the swaps, the differences l_{i+1} - l_i between neighbouring replicas as exactly as the family
can (``log_density_differences``; here summed in float64 on the host,
``kernels.assignments.log_likelihood_differences``: the difference of two float32 values of
5.6M nats can be off by 0.5 nats, the swap's log ratio by 0.02 at a power gap of 0.035).
The replicas live in one state with a leading replica axis, run by ``lax.map``, so the host
callbacks see the chain axis alone.

Annealed burn-in
----------------
Replica exchange needs neighbouring replicas within a few nats of each other; the log ratio of
a swap grows with the corpus (as the square of the powers' gap times the variance of l, about
proportional to the tokens), so a large corpus needs many replicas for a short ladder
(``topiczoo.modes.replica_words`` says how many). :func:`annealed` uses the same tempered
cycle the other way: one chain whose first ``iterations`` cycles target pi at a power rising
linearly from ``first`` to 1 (:func:`annealed_power`), and the family's own cycle, the exact
one, from then on. The annealed cycles are burn-in (their draws are not the posterior's;
``fit`` refuses a burn-in that does not cover them, ``Sampler.burn_in``): what they buy is the
start of the exact chain, which, with the words' pull weakened at first, can be in a better
mode than a chain started where the annealed one was would reach.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np

from topiczoo.kernels import response_table as rt
from topiczoo.kernels.assignments import (_consume_log_likelihood, _fill_counts,
                                          assignments_callback, chains_host, word_token_index)
from topiczoo.kernels.categorical import draw, num_blocks
from topiczoo.kernels.gibbs import Sampler, start_function
from topiczoo.kernels.host import document_loop, seed_from_key
from topiczoo.kernels.parallel import _phi_log_space_weights, _phi_table_weights, _phi_weights
from topiczoo.kernels.random import seed_state, uniform
from topiczoo.kernels.topics import (TABLE_ARGUMENTS, _after_draw, _begin_document,
                                     _token_leaves, table_capacity)


@numba.njit(cache=True, nogil=True, inline="always")
def _power_of(count, seen, offset, exponent):
    """(count + offset)^exponent, computed the first time a count is met in the sweep and kept
    in ``seen`` (float64, indexed by count, zeros: the value is never 0), the same bits: a
    word's count in a topic and a topic's total move by one token at a time, so a sweep meets
    few distinct ones. (n_wk + beta)^power and (n_k + V beta)^-power so: four pow calls a
    token fewer than computing each at each move."""
    value = seen[count]
    if value == 0.0:
        value = (count + offset) ** exponent
        seen[count] = value
    return value


@numba.njit(cache=True, nogil=True, inline="always")
def _tempered_count(d, w, k, delta, n_dk, n_wk, n_k, word_power, inv_nk_power, word_seen,
                    topic_seen, beta, v_beta, power):
    """Add ``delta`` (+1 or -1) tokens of word w in document d to topic k's counts, and keep
    word_power[w, k] = (n_wk + beta)^power and inv_nk_power[k] = (n_k + V beta)^-power in
    step."""
    n_dk[d, k] += delta
    n_wk[w, k] += delta
    n_k[k] += delta
    word_power[w, k] = _power_of(n_wk[w, k], word_seen, beta, power)
    inv_nk_power[k] = _power_of(n_k[k], topic_seen, v_beta, -power)


@document_loop
def _tempered_plain_document(d, z, n_dk, n_wk, n_k, words, doc_offsets, alpha, beta, v_beta,
                             power, word_seen, topic_seen, word_power, inv_nk_power, rng,
                             weights, blocks):
    """Document d's tokens in turn, without a response: weight of topic k = (n_dk + alpha)
    (n_wk + beta)^power (n_k + V beta)^-power."""
    num_topics = n_k.shape[0]
    for i in range(doc_offsets[d], doc_offsets[d + 1]):
        w, k_old = words[i], z[i]
        _tempered_count(d, w, k_old, -1, n_dk, n_wk, n_k, word_power, inv_nk_power, word_seen,
                        topic_seen, beta, v_beta, power)
        _phi_weights(d, w, n_dk, word_power, inv_nk_power, alpha, weights)
        k_new = draw(weights, num_topics, blocks, uniform(rng))
        z[i] = k_new
        _tempered_count(d, w, k_new, 1, n_dk, n_wk, n_k, word_power, inv_nk_power, word_seen,
                        topic_seen, beta, v_beta, power)


@document_loop
def _tempered_document(d, z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta,
                       v_beta, power, word_seen, topic_seen, word_power, inv_nk_power, rng,
                       weights, blocks, centred_old, tb, used, capacity, max_exponent):
    """Document d's tokens in turn with the response's factor: the partially collapsed
    sweep's weights (``kernels.parallel``) with phi_wk = G_wk / S_k replaced by (n_wk +
    beta)^power (n_k + V beta)^-power, kept up to date as the tokens move, and the response's
    tables of ``kernels.response_table`` (or log space where their bounds fail), as every
    sweep. Returns (the number of tokens whose weights were computed in log space, the table
    rows in use)."""
    num_topics = n_k.shape[0]
    start = doc_offsets[d]
    end = doc_offsets[d + 1]
    inv_n, y_bound, fast, used = _begin_document(d, start, end, z, eta, psi, rho, n_dk,
                                                 inv_nk_power, alpha, tb, used, max_exponent)
    num_log_space = 0
    for i in range(start, end):
        w = words[i]
        k_old = z[i]
        _tempered_count(d, w, k_old, -1, n_dk, n_wk, n_k, word_power, inv_nk_power, word_seen,
                        topic_seen, beta, v_beta, power)
        fast, used = _token_leaves(d, k_old, fast, eta, n_dk, inv_nk_power, alpha, tb, used,
                                   capacity)
        if fast:
            _phi_table_weights(w, tb.row_of[k_old], word_power, weights, tb)
        else:
            num_log_space += 1
            _phi_log_space_weights(d, w, eta, psi, rho, inv_n, n_dk, word_power, inv_nk_power,
                                   alpha, weights, tb)
        k_new = draw(weights, num_topics, blocks, uniform(rng))
        z[i] = k_new
        _tempered_count(d, w, k_new, 1, n_dk, n_wk, n_k, word_power, inv_nk_power, word_seen,
                        topic_seen, beta, v_beta, power)
        fast, used = _after_draw(d, k_old, k_new, fast, eta, n_dk, inv_nk_power, alpha, tb,
                                 used, capacity, centred_old, y_bound, max_exponent)
    return num_log_space, used


@numba.njit(cache=True, nogil=True)
def _tempered_sweep(z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta, power,
                    seed, max_exponent, table_entries):
    """One in-place sweep of every token from its tempered conditional (module docstring):
    weight of topic k = (n_dk + alpha) [(n_wk + beta) / (n_k + V beta)]^power times the
    response's factor, counts without the token. eta float64 [T, K]; psi, rho float64 [T, D];
    seed: an integer, the seed of the sweep's xoshiro256** stream (``kernels.random``: one
    uniform per token, in token order); ``max_exponent`` and ``table_entries`` as
    ``kernels.topics._collapsed_sweep``'s. Returns the number of tokens
    whose response factor was computed in log space (0 if T = 0)."""
    rng = np.empty(4, np.uint64)
    seed_state(seed, rng)
    num_docs = doc_offsets.shape[0] - 1
    vocab_size, num_topics = n_wk.shape
    num_tasks = eta.shape[0]
    v_beta = vocab_size * beta
    word_seen = np.zeros(np.max(n_wk.sum(axis=1)) + 1)  # no word's count can pass its tokens
    word_power = np.empty((vocab_size, num_topics))
    for w in range(vocab_size):
        for k in range(num_topics):
            word_power[w, k] = _power_of(n_wk[w, k], word_seen, beta, power)
    topic_seen = np.zeros(z.shape[0] + 1)
    inv_nk_power = np.empty(num_topics)
    for k in range(num_topics):
        inv_nk_power[k] = _power_of(n_k[k], topic_seen, v_beta, -power)
    weights = np.empty(num_topics)
    blocks = np.empty(num_blocks(num_topics))
    if num_tasks == 0:
        for d in range(num_docs):
            _tempered_plain_document(d, z, n_dk, n_wk, n_k, words, doc_offsets, alpha, beta,
                                     v_beta, power, word_seen, topic_seen, word_power,
                                     inv_nk_power, rng, weights, blocks)
        return 0
    capacity = table_capacity(doc_offsets, num_topics, table_entries)
    tb = rt.response_tables(num_tasks, num_topics, capacity, 0)
    rt.centre(eta, np.arange(num_topics).astype(np.uint32), num_topics, tb)
    centred_old = np.empty(num_tasks)
    num_log_space = 0
    used = 0
    for d in range(num_docs):
        if doc_offsets[d + 1] == doc_offsets[d]:
            continue
        in_log_space, used = _tempered_document(
            d, z, n_dk, n_wk, n_k, words, doc_offsets, eta, psi, rho, alpha, beta, v_beta,
            power, word_seen, topic_seen, word_power, inv_nk_power, rng, weights, blocks,
            centred_old, tb, used, capacity, max_exponent)
        num_log_space += in_log_space
    return num_log_space


def tempered_assignments_step(key, z, words, doc_offsets, eta, psi, rho, alpha: float,
                              beta: float, power, *, num_topics: int, vocab_size: int,
                              word_offsets=None, word_tokens=None):
    """One sweep of every token from its conditional under the target with p(W | Z) raised to
    ``power`` (module docstring), for a chain whose state holds the assignments alone (the
    counts rebuilt on the host from z, as ``kernels.assignments``).

    Args as ``kernels.assignments.collapsed_assignments_step``, with ``power`` in (0, 1]
    (float32 [], may be traced). Returns (z int32 [N], n_dk int32 [D, K], log p(W | Z)
    float32 [] of the new z, untempered). Works under jit and vmap (chains) and lax loops."""
    alpha, beta = float(alpha), float(beta)
    num_topics, vocab_size = int(num_topics), int(vocab_size)

    def one_chain(z, words, offsets, w_off, w_tok, eta, psi, rho, power, seed):
        if w_off.shape[0] == 0:
            w_off, w_tok = word_token_index(words, vocab_size)
        n_dk = np.zeros((offsets.shape[0] - 1, num_topics), np.int32)
        n_wk = np.zeros((vocab_size, num_topics), np.int32)
        n_k = np.zeros(num_topics, np.int32)
        _fill_counts(z, words, offsets, n_dk, n_wk, n_k)
        _tempered_sweep(z, n_dk, n_wk, n_k, words, offsets, eta, psi, rho, alpha, beta,
                        float(power), int(seed), *TABLE_ARGUMENTS)
        return n_dk, _consume_log_likelihood(z, w_off, w_tok, n_wk, n_k, beta)

    # n_wk int32 and the sweep's word_power float64, [V, K] each
    host = chains_host(one_chain, freed_bytes=12 * vocab_size * num_topics)
    return assignments_callback(host, seed_from_key(key), z, words, doc_offsets, eta, psi, rho,
                                num_topics, word_offsets, word_tokens,
                                more=(jnp.asarray(power, jnp.float32),))


# ---------------------------------------------------------------------------------------------
# Replica exchange around a family's sampler


class Tempering(NamedTuple):
    """What a family gives :func:`replica_exchange`: ``cycle(key, state, data, power)``, one
    Gibbs cycle of its blocks targeting its posterior with the tempered part raised to
    ``power`` (float32 [], traced; 1: the posterior), ``log_density(state, data)``, the log
    l of the tempered part at a state (float32 []; the ``swap_log_ratio`` monitor's), and
    ``log_density_differences(replicas, data)``, l_{r+1} - l_r (float32 [R - 1]) at the
    replicas' states (the family's state with a leading replica axis), which the swaps read:
    as exact as the family can make them (``jnp.diff`` of the ``log_density`` values at
    least)."""

    cycle: Callable
    log_density: Callable
    log_density_differences: Callable


class TemperedState(NamedTuple):
    """The state of one chain of replica exchange.

    replicas: the family's state with a leading replica axis [R, ...], replica 0 cold;
    attempted, accepted: int32 [R - 1], swaps of replicas (r, r + 1) proposed and accepted
    since the start.
    """

    replicas: object
    attempted: jax.Array
    accepted: jax.Array


def ladder(num_replicas: int, hottest: float) -> tuple:
    """The powers tau_r = hottest^(r / (R - 1)), r = 0..R-1: geometric from 1 (cold) to
    ``hottest``."""
    if num_replicas < 2 or not 0.0 < hottest < 1.0:
        raise ValueError(f"need at least 2 replicas and a hottest power in (0, 1), got "
                         f"{num_replicas} and {hottest}")
    return tuple(float(hottest ** (r / (num_replicas - 1))) for r in range(num_replicas))


def replica(state: TemperedState, r: int = 0):
    """Replica ``r``'s state (the cold one by default) of a :class:`TemperedState`."""
    return jax.tree.map(lambda a: a[r], state.replicas)


def swap_log_ratios(differences, powers):
    """(tau_r - tau_{r+1}) (l_{r+1} - l_r) [R - 1] (nats, float32): the log ratio of the
    exchange of replicas r and r + 1 (module docstring), ``differences`` [R - 1] the
    differences l_{r+1} - l_r of the replicas' log densities of the tempered part
    (:attr:`Tempering.log_density_differences`) and tau [R] their powers."""
    powers = jnp.asarray(powers, jnp.float32)
    return (powers[:-1] - powers[1:]) * differences


def swap_replicas(key, replicas, differences, powers, parity):
    """One swap move (module docstring): the pairs (r, r + 1) with r = parity, parity + 2, ...
    each exchanged with probability min(1, exp((tau_r - tau_{r+1}) (l_{r+1} - l_r))),
    ``differences`` [R - 1] the l_{r+1} - l_r.
    Returns (replicas, attempted int32 [R - 1], accepted int32 [R - 1]) of this move."""
    powers = jnp.asarray(powers, jnp.float32)
    num = powers.shape[0]
    pairs = jnp.arange(num - 1)
    attempted = (pairs % 2) == parity
    log_ratio = swap_log_ratios(differences, powers)
    u = jax.random.uniform(key, (num - 1,))
    accepted = attempted & (jnp.log(u) < log_ratio)
    # the non-overlapping pairs as a permutation of the replicas
    up = jnp.concatenate([accepted, jnp.zeros(1, bool)])      # r swaps with r + 1
    down = jnp.concatenate([jnp.zeros(1, bool), accepted])    # r swaps with r - 1
    index = jnp.arange(num) + up.astype(jnp.int32) - down.astype(jnp.int32)
    swapped = jax.tree.map(lambda a: a[index], replicas)
    return swapped, attempted.astype(jnp.int32), accepted.astype(jnp.int32)


def _as_tempered(sampler: Sampler, start, upgrade, name: str, cycle_blocks, monitors,
                 snapshot, memory, burn_in=None) -> Sampler:
    """The :class:`Sampler` of a tempered chain built around ``sampler``: ``start(base_init)``
    wraps each of its starts, the rest as given."""
    starts = tuple((label, start(start_function(sampler, label)))
                   for label, _ in sampler.starts)
    return Sampler(name, start(sampler.init), cycle_blocks, monitors, snapshot,
                   sampler.label_invariant, upgrade=upgrade,
                   memory=memory if sampler.memory else None, starts=starts, burn_in=burn_in)


def replica_exchange(sampler: Sampler, tempering: Tempering, powers, name: str) -> Sampler:
    """``sampler``'s chain as replica exchange over the powers ``powers`` (1 first, then
    decreasing; :func:`ladder`), named ``name``: each replica runs ``tempering.cycle`` at its
    power, then one swap move. Monitors: the cold replica's (the family's own, under their
    names), ``replica_log_joint`` [R] (each replica's ``log_joint`` monitor, untempered, when
    the family has it), ``swap_rate`` [R - 1] (the share of proposed swaps of (r, r + 1)
    accepted so far) and ``swap_log_ratio`` [R - 1] (:func:`swap_log_ratios` of the draw's
    replicas' ``log_density`` values: what an exchange of (r, r + 1) would have as its log
    ratio, to float32's rounding of those values; a pair swaps often when it stays within a
    few nats of 0, ``topiczoo.modes.replica_words``). Snapshots are
    the cold replica's. The swap move is :func:`swap_replicas`, looked up when the step is
    traced.

    The replicas are a ``lax.map`` over the replica axis: the cycle is traced once, with its
    power a traced scalar (float32 []), and a host callback inside it sees the chain axis
    alone."""
    powers = tuple(float(p) for p in powers)
    if powers[0] != 1.0 or any(b >= a for a, b in zip(powers, powers[1:])) or powers[-1] <= 0:
        raise ValueError(f"powers must start at 1 and decrease, staying above 0: {powers}")
    num = len(powers)
    power_array = np.asarray(powers, np.float32)

    def start(base_init):
        def init(key, data):
            replicas = jax.lax.map(lambda k: base_init(k, data), jax.random.split(key, num))
            return TemperedState(replicas, jnp.zeros(num - 1, jnp.int32),
                                 jnp.zeros(num - 1, jnp.int32))
        return init

    def cycles(key, state, data):
        """Every replica's cycle at its own power."""
        def one(args):
            replica_key, replica_state, power = args
            return tempering.cycle(replica_key, replica_state, data, power)

        replicas = jax.lax.map(one, (jax.random.split(key, num), state.replicas,
                                     jnp.asarray(power_array)))
        return state._replace(replicas=replicas)

    def log_densities_of(replicas, data):
        """Each replica's log density of the tempered part, float32 [R]."""
        return jax.lax.map(lambda r: tempering.log_density(r, data), replicas)

    def swaps(key, state, data):
        """One swap move between neighbouring replicas."""
        parity_key, swap_key = jax.random.split(key)
        parity = jax.random.bernoulli(parity_key).astype(jnp.int32)
        differences = tempering.log_density_differences(state.replicas, data)
        replicas, attempted, accepted = swap_replicas(swap_key, state.replicas, differences,
                                                      power_array, parity)
        return TemperedState(replicas, state.attempted + attempted, state.accepted + accepted)

    def monitors(state, data) -> dict:
        per_replica = jax.lax.map(lambda r: sampler.monitors(r, data), state.replicas)
        out = {k: v[0] for k, v in per_replica.items()}
        if "log_joint" in out:
            out["replica_log_joint"] = per_replica["log_joint"]
        out["swap_rate"] = state.accepted / jnp.maximum(state.attempted, 1).astype(jnp.float32)
        out["swap_log_ratio"] = swap_log_ratios(
            jnp.diff(log_densities_of(state.replicas, data)), power_array)
        return out

    def snapshot(state) -> dict:
        return sampler.snapshot(replica(state))

    def memory(sizes: dict) -> dict:
        parts = sampler.memory(sizes) if sampler.memory is not None else {}
        return {f"{part}, x {num} replicas": size * num for part, size in parts.items()}

    def upgrade(named: dict, data) -> dict:
        """A state of the untempered chain (``keystr`` path -> array [C, ...]) as one of
        replica exchange: every replica a copy of it, no swaps yet (``fit(start=...)`` from a
        run of the family's sampler, or its checkpoint). A replica-exchange state written
        before the ``swap_log_ratio`` monitor (2026-11-30) gains it as zeros (the next draw
        computes it)."""
        if any(key.startswith(".state.replicas") for key in named):
            if ".info['swap_log_ratio']" not in named:
                named = {**named, ".info['swap_log_ratio']": np.zeros_like(
                    named[".info['swap_rate']"], np.float32)}
            return named
        if sampler.upgrade is not None:
            named = sampler.upgrade(named, data)
        out = {}
        for key, value in named.items():
            value = np.asarray(value)
            if key.startswith(".state."):
                key = ".state.replicas" + key[len(".state"):]
                value = np.repeat(value[:, None], num, axis=1)
            out[key] = value
        chains = next(iter(named.values())).shape[0]
        none = np.zeros((chains, num - 1), np.int32)
        out[".state.attempted"], out[".state.accepted"] = none, none
        out[".info['swap_rate']"] = none.astype(np.float32)
        out[".info['swap_log_ratio']"] = none.astype(np.float32)  # equal replicas: 0
        if ".info['log_joint']" in named:
            out[".info['replica_log_joint']"] = np.repeat(
                np.asarray(named[".info['log_joint']"])[:, None], num, axis=1)
        return out

    return _as_tempered(sampler, start, upgrade, name, (cycles, swaps), monitors, snapshot,
                        memory)


# ---------------------------------------------------------------------------------------------
# Annealed burn-in


class AnnealedState(NamedTuple):
    """The state of one chain of an annealed burn-in (:func:`annealed`).

    chain: the family's state; cycles: int32 [], the cycles run since the anneal began (the
    next one's power is :func:`annealed_power` of it).
    """

    chain: object
    cycles: jax.Array


def annealed_power(cycle, iterations: int, first: float):
    """The power (float32 []) of the tempered part at the anneal's cycle number ``cycle``
    (int32 [], 0 first): ``first`` + (1 - ``first``) ``cycle`` / ``iterations``, rising
    linearly, and exactly 1 from cycle ``iterations`` on."""
    rising = first + (1.0 - first) * jnp.asarray(cycle, jnp.float32) / iterations
    return jnp.where(cycle >= iterations, jnp.float32(1.0), rising.astype(jnp.float32))


def annealed_chain(named: dict) -> dict:
    """The state leaves of an annealed run (``keystr`` path -> array [C, ...]) as its family's
    own chain's: the chain's leaves, without the anneal's counter and monitor, so that any
    sampler of the family can go on from it (``Sampler.upgrade``); ``named`` itself when it
    is not an annealed run's."""
    prefix = ".state.chain."
    if not any(key.startswith(prefix) for key in named):
        return named
    return {(".state." + key[len(prefix):] if key.startswith(prefix) else key): value
            for key, value in named.items()
            if key not in (".state.cycles", ".info['anneal_power']")}


def annealed(sampler: Sampler, tempering: Tempering, iterations: int, first: float,
             name: str) -> Sampler:
    """``sampler``'s chain with an annealed burn-in (module docstring), named ``name``: its
    first ``iterations`` cycles are ``tempering.cycle`` at the powers :func:`annealed_power`
    (``first`` in (0, 1), then up to 1 - (1 - ``first``) / ``iterations``), every later cycle
    ``tempering.cycle`` at power 1 (the family's own blocks). Monitors: the family's, and
    ``anneal_power``, the power of the cycle that made the draw (``first`` at the start; 1:
    a draw of the posterior's chain). ``Sampler.burn_in``: the annealed cycles still to come,
    which ``fit``'s burn-in must cover. A state of the family's own chain (``fit(start=...)``,
    its checkpoint) begins the anneal afresh; the family's ``upgrade`` takes an annealed run's
    state the other way (:func:`annealed_chain`)."""
    iterations, first = int(iterations), float(first)
    if iterations < 1 or not 0.0 < first < 1.0:
        raise ValueError(f"an anneal needs at least 1 iteration and a first power in (0, 1), "
                         f"got {iterations} and {first}")

    def start(base_init):
        def init(key, data):
            return AnnealedState(base_init(key, data), jnp.zeros((), jnp.int32))
        return init

    def cycle(key, state, data):
        """The family's cycle at this cycle's power."""
        power = annealed_power(state.cycles, iterations, first)
        return AnnealedState(tempering.cycle(key, state.chain, data, power), state.cycles + 1)

    def monitors(state, data) -> dict:
        return {**sampler.monitors(state.chain, data),
                "anneal_power": annealed_power(jnp.maximum(state.cycles - 1, 0), iterations,
                                               first)}

    def snapshot(state) -> dict:
        return sampler.snapshot(state.chain)

    def burn_in(state) -> int:
        """Annealed cycles still to come from ``state`` (one chain's or a batch's, numpy or
        jax; None: a fresh start)."""
        if state is None:
            return iterations
        return max(0, iterations - int(np.min(np.asarray(state.cycles))))

    def upgrade(named: dict, data) -> dict:
        """A state of the family's own chain (``keystr`` path -> array [C, ...]) as one
        about to begin the anneal."""
        if any(key.startswith(".state.chain") for key in named):
            return named
        if sampler.upgrade is not None:
            named = sampler.upgrade(named, data)
        out = {(".state.chain" + key[len(".state"):] if key.startswith(".state.") else key):
               value for key, value in named.items()}
        chains = np.asarray(next(iter(named.values()))).shape[0]
        out[".state.cycles"] = np.zeros(chains, np.int32)
        out[".info['anneal_power']"] = np.full(chains, first, np.float32)
        return out

    return _as_tempered(sampler, start, upgrade, name, (cycle,), monitors, snapshot,
                        sampler.memory, burn_in)
