"""The document-parallel Z step in JAX, for accelerators.

The same partially collapsed step as ``kernels.parallel`` (Phi | Z ~ Dir(n_.k + beta), then
every document given Phi, eta and the augmentation), written in JAX so that it runs where the
numba sweep cannot: on a GPU. Documents are sorted by length and cut into buckets of about equal
tokens (:func:`length_buckets`: a bucket pads its documents to its longest, so sorting keeps the
padding small); within a bucket the documents are vmapped and their tokens scanned in order.
Each token's weights are computed in log space (K T per token: on an accelerator the K topics are
lanes), from

    log p(z_dn = k | rest) = log(n_dk^-dn + alpha) + log phi_{w k}
                             + sum_t psi_td omega_td(k) - rho_td omega_td(k)^2 / 2 + const.

Random numbers: the step's key is split in two; the topics' Gamma draws come from the first
half (``jax.random.loggamma``, which keeps the tiny draws of a small shape), token i of document
d from ``fold_in(fold_in(second half, d), i)``: the
draws do not depend on the buckets, nor on how documents are spread over devices. They are not
the numba step's draws (another generator): a run is reproducible with the same engine.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln

from topiczoo.kernels.topics import log_rising_factorial


class Buckets(NamedTuple):
    """Documents by length: for each bucket, its documents (int32 [D_b]) and their tokens' places
    in the corpus (int32 [D_b, L_b], -1 past a document's end)."""

    docs: tuple
    places: tuple

    @property
    def padding(self) -> float:
        """Padded token slots per real token (1 = no padding)."""
        slots = sum(p.size for p in self.places)
        real = sum(int((p >= 0).sum()) for p in self.places)
        return slots / max(real, 1)


def length_buckets(doc_offsets, num_buckets: int = 32, num_shards: int = 1) -> Buckets:
    """Documents sorted by length and cut into up to ``num_buckets`` buckets of about equal
    tokens (empty documents left out: they have no token to draw). Each bucket's rows are
    padded to a multiple of ``num_shards`` (the devices that share it) with rows of no tokens
    (document 0, places -1)."""
    offsets = np.asarray(doc_offsets, np.int64)
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    order = order[lengths[order] > 0]
    cumulative = np.cumsum(lengths[order])
    total = cumulative[-1] if len(cumulative) else 0
    cuts = np.searchsorted(cumulative, np.linspace(0, total, num_buckets + 1)[1:-1], "right")
    docs, places = [], []
    for part in np.split(order, np.unique(cuts)):
        if not len(part):
            continue
        width = int(lengths[part].max())
        columns = np.arange(width)[None, :]
        grid = np.where(columns < lengths[part][:, None], offsets[part][:, None] + columns, -1)
        extra = -len(part) % num_shards
        docs.append(np.concatenate([part, np.zeros(extra, np.int64)]).astype(np.int32))
        places.append(np.concatenate([grid, np.full((extra, width), -1)]).astype(np.int32))
    return Buckets(tuple(docs), tuple(places))


def word_topic_counts(z, words, places, num_topics: int, vocab_size: int):
    """n_wk int32 [V, K]: the counts of the tokens at ``places`` (int32, any shape, -1 = none)."""
    valid = places >= 0
    where = jnp.maximum(places, 0)
    return jnp.zeros((vocab_size, num_topics), jnp.int32).at[words[where], z[where]].add(
        valid.astype(jnp.int32))


def collapsed_log_likelihood(n_wk, n_k, beta: float):
    """log p(W | Z) with Phi integrated out, in nats (float32), from n_wk int32 [V, K] and n_k
    int32 [K]:

        sum_k [lgamma(V beta) - lgamma(n_k + V beta)] + sum_wk [lgamma(n_wk + beta) - lgamma(beta)]

    the second sum by ``kernels.topics.log_rising_factorial`` (a table and Stirling's series,
    not V K gammaln evaluations)."""
    vocab_size = n_wk.shape[-2]
    per_topic = gammaln(vocab_size * beta) - gammaln(n_k.astype(jnp.float32) + vocab_size * beta)
    per_word = log_rising_factorial(n_wk, beta)
    return per_topic.sum(axis=-1) + per_word.sum(axis=(-2, -1))


def draw_log_topics(key, n_wk, beta: float):
    """log phi float32 [V, K] of Phi_k ~ Dir(n_.k + beta), from the counts n_wk int32 [V, K]
    (``jax.random.loggamma``, which keeps the tiny draws of a small shape)."""
    log_g = jax.random.loggamma(key, n_wk.astype(jnp.float32) + beta)
    return log_g - _log_sum_words(log_g)


def _log_sum_words(log_g):
    """log sum_w exp(log_g[w, k]), float32 [1, K], of log_g [V, K]: the sum of exp(log_g - max)
    over the words in a fixed pairwise order (V padded with zeros to a power of two, halves
    added elementwise), not a reduce, whose order of addition XLA may change with the program
    around it (see :func:`document_score`); the max is exact in any order."""
    top = log_g.max(axis=0, keepdims=True)
    terms = jnp.exp(log_g - top)
    size = 1 << (terms.shape[0] - 1).bit_length()
    terms = jnp.pad(terms, ((0, size - terms.shape[0]), (0, 0)))
    while terms.shape[0] > 1:
        half = terms.shape[0] // 2
        terms = terms[:half] + terms[half:]
    return top + jnp.log(terms)


def document_score(eta, topics, valid):
    """S_t = sum of eta_t,z over a document's tokens, float32 [T], from eta [T, K], the tokens'
    topics int32 [L] and which of the L places hold a token (bool [L]).

    Added in token order by a scan: XLA's reduce may add in any order, and the order it picks
    changes with the shape of the batch a vmap makes (measured: on bbc, a bucket's documents
    swept on one device and on two got S_t 1 ulp apart in 653 of 837 documents), so a reduce
    would make the draws depend on how the documents are spread over the devices."""
    def add(score, i):
        return score + jnp.where(valid[i], eta[:, topics[i]], 0.0), None

    start = jnp.zeros(eta.shape[0], jnp.float32)
    return jax.lax.scan(add, start, jnp.arange(topics.shape[0]))[0]


def token_log_weights(n_k, score, eta, inv_n, log_phi_w, psi_d, rho_d, alpha):
    """log p(z_dn = k | rest) + const, float32 [K], of a token of word w in document d:

        log(n_dk^-dn + alpha) + log phi_wk + sum_t psi_td omega_td(k) - rho_td omega_td(k)^2 / 2

    with omega_td(k) = (S_t^-dn + eta_tk) / N_d. n_k float32 [K] the document's other counts,
    score float32 [T] S_t^-dn, eta [T, K], inv_n 1 / N_d, log_phi_w float32 [K], psi_d, rho_d
    float32 [T] (the Gaussian form), alpha per topic. The tasks' terms are added in task order
    (not a reduce: see :func:`document_score`)."""
    omega = (score[:, None] + eta) * inv_n  # [T, K]: omega_td with the token in topic k
    log_document = jnp.log(n_k + alpha)
    terms = psi_d[:, None] * omega - 0.5 * rho_d[:, None] * omega ** 2
    log_response = jnp.zeros_like(log_document)
    for term in terms:  # T is static
        log_response = log_response + term
    return log_document + log_phi_w + log_response


def _sweep_document(key, places, z, words, log_phi, eta, psi_d, rho_d, alpha):
    """One document's tokens in turn (``places`` int32 [L], -1 past its end); returns their
    new topics int32 [L] (-1 past the end). The weights: :func:`token_log_weights`."""
    num_topics = log_phi.shape[1]
    valid = places >= 0
    where = jnp.maximum(places, 0)
    topics = jnp.where(valid, z[where], 0)
    inv_n = 1.0 / jnp.maximum(valid.sum(), 1).astype(jnp.float32)
    n_k = jnp.zeros(num_topics, jnp.float32).at[topics].add(valid.astype(jnp.float32))
    score = document_score(eta, topics, valid)

    def token(carry, i):
        n_k, score, topics = carry
        k_old = topics[i]
        keep = valid[i].astype(jnp.float32)
        n_k = n_k.at[k_old].add(-keep)
        score = score - keep * eta[:, k_old]
        log_w = token_log_weights(n_k, score, eta, inv_n, log_phi[words[where[i]]], psi_d,
                                  rho_d, alpha)
        cumulative = jnp.cumsum(jnp.exp(log_w - log_w.max()))
        u = jax.random.uniform(jax.random.fold_in(key, i))
        k_new = jnp.minimum(jnp.searchsorted(cumulative, u * cumulative[-1], side="right"),
                            num_topics - 1)
        k_new = jnp.where(valid[i], k_new, k_old).astype(topics.dtype)
        n_k = n_k.at[k_new].add(keep)
        score = score + keep * eta[:, k_new]
        return (n_k, score, topics.at[i].set(k_new)), None

    (_, _, topics), _ = jax.lax.scan(token, (n_k, score, topics), jnp.arange(places.shape[0]))
    return jnp.where(valid, topics, -1)


def _sweep_bucket(docs_key, docs, places, z, words, log_phi, eta, psi, rho, alpha):
    """The documents of one bucket (int32 [D_b], their places [D_b, L_b]), vmapped; document d
    draws from ``fold_in(docs_key, d)``. Returns their new topics [D_b, L_b]."""
    keys = jax.vmap(lambda d: jax.random.fold_in(docs_key, d))(docs)
    sweep = jax.vmap(_sweep_document, in_axes=(0, 0, None, None, None, None, 1, 1, None))
    return sweep(keys, places, z, words, log_phi, eta, psi[:, docs], rho[:, docs], alpha)


def jax_assignments_step(key, z, words, doc_ids, buckets: Buckets, eta, psi, rho, alpha: float,
                         beta: float, *, num_topics: int, vocab_size: int, mesh=None):
    """One partially collapsed step in JAX (module docstring) for a chain whose state holds z.

    Args:
      key: JAX PRNG key of the step (Phi from one half, document d from ``fold_in`` of d on
        the other).
      z, words, doc_ids: int32 [N] topic, word and document of every token.
      buckets: :func:`length_buckets` of the corpus, cut for ``mesh`` (its arrays may be traced).
      eta: float32 [T, K] (T = 0 for LDA); psi, rho: float32 [T, D] (the Gaussian form).
      alpha, beta: per-topic and per-word Dirichlet parameters (static floats).
      num_topics, vocab_size: K, V (static).
      mesh: a ``jax.sharding.Mesh`` with one axis ``"docs"``: every device sweeps its share of
        each bucket's documents, their word-topic counts are summed with ``psum`` (integers:
        exact) and their topics gathered. None: this device alone. The draws are the same.
    Returns (z int32 [N], n_dk int32 [D, K], log p(W | Z) float32 [], nats). Jittable; vmaps
    over chains.
    """
    num_docs = psi.shape[1]
    on_mesh = mesh is not None

    def step(keys, z, words, eta, psi, rho, docs, places):
        topics_key, docs_key = keys
        n_wk = sum(word_topic_counts(z, words, p, num_topics, vocab_size) for p in places)
        if on_mesh:
            n_wk = jax.lax.psum(n_wk, "docs")
        log_phi = draw_log_topics(topics_key, n_wk, beta)
        new_z = z
        for docs_b, places_b in zip(docs, places):
            topics = _sweep_bucket(docs_key, docs_b, places_b, z, words, log_phi, eta, psi, rho,
                                   alpha)
            if on_mesh:
                topics = jax.lax.all_gather(topics, "docs", tiled=True)
                places_b = jax.lax.all_gather(places_b, "docs", tiled=True)
            flat = places_b.reshape(-1)
            new_z = new_z.at[jnp.where(flat >= 0, flat, z.shape[0])].set(topics.reshape(-1),
                                                                          mode="drop")
        return new_z

    if on_mesh:
        whole, shard = jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec("docs")
        # every array but the buckets' documents is given whole to every device (passed in,
        # not closed over: a closed-over traced array would carry the caller's sharding), and
        # every device ends with the whole new z (its topics gathered): replicated, as the
        # check cannot infer through the gather
        step = jax.shard_map(step, mesh=mesh, out_specs=whole,
                             in_specs=(whole,) * 6 + (shard, shard), check_vma=False)
    new_z = step(jax.random.split(key), z, words, eta, psi, rho, buckets.docs, buckets.places)
    n_dk = jnp.zeros((num_docs, num_topics), jnp.int32).at[doc_ids, new_z].add(1)
    n_wk = jnp.zeros((vocab_size, num_topics), jnp.int32).at[words, new_z].add(1)
    log_lik = collapsed_log_likelihood(n_wk, n_dk.sum(axis=0), beta)
    return new_z, n_dk, log_lik
