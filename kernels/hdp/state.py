"""The sHDP's chain state with a static capacity of topic slots: start, growth, snapshot.

Arrays have a static number of topic slots ``Kcap`` (shapes are static inside a numpyro run).
Births take the lowest free slot; nothing any block computes or draws depends on Kcap, so a run
with a larger capacity gives identical draws. When a birth finds no free slot the sweep puts
the token back, stops, and sets the sticky ``overflow`` flag: the driver then grows the capacity
(:func:`grow`) of the state it started the chunk from and redoes the chunk with the same keys.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

from topiczoo.kernels.topics import log_rising_factorial, prior_assignments


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


def init_state(key, data, vocab_size: int, capacity: int, response=None, *,
               init_topics: int = 1, alpha: float = 1.0, gamma: float = 1.0,
               dispersed: bool = False) -> SHDPState:
    """A start: tokens uniformly among ``init_topics`` topics (slots 0..init_topics-1), or,
    ``dispersed``, each document's tokens from theta_d ~ Dir(alpha / init_topics) over them
    (``kernels.topics.prior_assignments``: on one or a few of them, at random), the
    occupied ones with equal stick weights 1 / (K + 1) for the occupied ones and the rest to beta_new, eta = 0
    (the cycle should draw eta, or run ``global_block``, first), alpha and gamma at the given
    values, the response's initial augmentation. Jittable; ``capacity`` and ``init_topics``
    static."""
    capacity, init_topics = int(capacity), int(init_topics)
    if not 1 <= init_topics <= capacity:
        raise ValueError(f"need 1 <= init_topics <= capacity, got {init_topics}, {capacity}")
    num_docs = data.doc_offsets.shape[0] - 1
    num_tasks = data.y.shape[0]
    if dispersed:
        z = prior_assignments(key, data.doc_offsets, data.words.shape[0], init_topics,
                              alpha / init_topics)
    else:
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


def log_likelihood(state: SHDPState, beta: float) -> jax.Array:
    """log p(W | Z) with the topics integrated out (label-invariant; empty slots add 0), float32
    [] nats; the [V, Kcap] sum of lgamma(n_wk + beta) - lgamma(beta) by
    ``kernels.topics.log_rising_factorial`` (a table and Stirling's series: 136 -> 16-20 ms at
    V = 53,666 and Kcap = 128, XLA's float32 gammaln taking about 37 ns an entry)."""
    vocab_size = state.n_wk.shape[-2]
    occupied = state.n_k > 0
    per_topic = jnp.where(occupied, gammaln(vocab_size * beta)
                          - gammaln(state.n_k.astype(jnp.float32) + vocab_size * beta), 0.0)
    per_word = log_rising_factorial(state.n_wk, beta)
    return per_topic.sum() + per_word.sum()


def _log_gamma_density(x, shape: float, rate: float):
    """log Gamma(x; shape, rate)."""
    return (shape * jnp.log(rate) - gammaln(jnp.float32(shape)) + (shape - 1.0) * jnp.log(x)
            - rate * x)


def log_prior(state: SHDPState, data, *, learn_alpha: bool = True, learn_gamma: bool = True,
              alpha_prior=(1.0, 1.0), gamma_prior=(1.0, 1.0)) -> jax.Array:
    """The log density of the partition z, the stick weights beta and the concentrations
    under the direct-assignment target (``kernels.hdp``'s docstring), float32 [] nats,
    label-invariant:

        log p(alpha) + log p(gamma) (Gamma(shape, rate) priors, when drawn)
        + K log gamma + (gamma - 1) log beta_new - sum_k log beta_k        (G0's sticks)
        + sum_d [lgamma(alpha) - lgamma(alpha + N_d)
                 + sum_k (lgamma(alpha beta_k + n_dk) - lgamma(alpha beta_k))]   (the G_d)

    over the K occupied topics (empty slots add 0); with log p(W | Z) (:func:`log_likelihood`)
    and the supervised terms it is the log joint the sampler targets (up to a constant)."""
    occupied = state.n_k > 0
    num_topics = jnp.sum(occupied)
    alpha, gamma = state.alpha, state.gamma
    safe_beta = jnp.where(occupied, state.beta_weights, 1.0)
    sticks = (num_topics * jnp.log(gamma) + (gamma - 1.0) * jnp.log(state.beta_new)
              - jnp.sum(jnp.where(occupied, jnp.log(safe_beta), 0.0)))
    ab = jnp.maximum(alpha * safe_beta, 1e-30)
    counts = state.n_dk.astype(jnp.float32)
    lengths = jnp.diff(data.doc_offsets).astype(jnp.float32)
    per_topic = jnp.where(occupied, gammaln(counts + ab) - gammaln(ab), 0.0)  # [D, Kcap]
    documents = jnp.sum(gammaln(alpha) - gammaln(alpha + lengths)) + jnp.sum(per_topic)
    out = sticks + documents
    if learn_alpha:
        out += _log_gamma_density(alpha, *alpha_prior)
    if learn_gamma:
        out += _log_gamma_density(gamma, *gamma_prior)
    return out


def document_scores(state: SHDPState, data) -> jax.Array:
    """omega [T, D]: sum over d's tokens of eta_{t, z_n}, divided by N_d (independent of Kcap:
    it reads eta at the tokens' topics only)."""
    num_docs = data.doc_offsets.shape[0] - 1
    per_token = state.eta[:, state.z]  # [T, N]
    sums = jax.ops.segment_sum(per_token.T, data.doc_ids, num_segments=num_docs).T
    lengths = jnp.diff(data.doc_offsets).astype(jnp.float32)
    return sums / jnp.maximum(lengths, 1.0)


def topic_monitors(state: SHDPState, beta: float) -> dict:
    """The monitors of the topics, label-invariant: num_topics (occupied), alpha, gamma,
    beta_new, num_tables (m.. of the last global block) and log_likelihood log p(W | Z)
    (nats)."""
    return {
        "num_topics": jnp.sum(state.n_k > 0).astype(jnp.int32),
        "alpha": state.alpha,
        "gamma": state.gamma,
        "beta_new": state.beta_new,
        "num_tables": jnp.sum(state.m_k).astype(jnp.int32),
        "log_likelihood": log_likelihood(state, beta),
    }


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
