"""Corpora simulated from gSLDA's own numpyro declaration, of any size, for the benchmarks.

``gslda(K, c=1)`` (logistic sLDA, its defaults otherwise: alpha = 1, beta = 0.01, nu2 = 1),
in blocks of documents so that a million documents fit in memory:

* phi and eta are drawn once from their priors (the declaration's own sites, on one
  document), then every block is drawn with them fixed (``numpyro.handlers.condition``);
* each block's theta, z and y are the declaration's sites, traced under ``jax.jit`` with the
  words observed (placeholders): its w site's [N, V] table ``phi[z]`` is then never computed;
* each word is drawn from that site's distribution, Categorical(phi_{z_dn}), by the inverse
  of its cumulative distribution (numpy, from the same seed).

Documents have Poisson(``mean_length``) tokens, at least one. The draw is determined by its
arguments (``block`` included).
"""

from __future__ import annotations

import os

import numpy as np


def simulation_model(num_topics: int):
    """The model the corpora are drawn from: ``gslda(num_topics, c=1)``."""
    from topiczoo.models import gslda
    return gslda(num_topics, c=1.0)


def simulate(num_docs: int, mean_length: float, vocab_size: int, num_topics: int,
             seed: int = 0, block: int = 20_000, progress: bool = True):
    """(words int32 [N], doc_offsets int64 [D + 1], labels int32 [D]): a corpus of
    ``num_docs`` documents over ``vocab_size`` words from :func:`simulation_model`."""
    import jax
    import jax.numpy as jnp
    from numpyro import handlers

    from topiczoo.kernels.gibbs import CorpusData

    declaration = simulation_model(num_topics).declaration_for(vocab_size)
    rng = np.random.default_rng(seed)
    lengths = np.maximum(rng.poisson(mean_length, num_docs), 1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    key = jax.random.PRNGKey(seed)

    def trace(key, doc_ids, num_block_docs, fixed):
        """The declaration's trace on tokens of documents ``doc_ids`` [N] of
        ``num_block_docs``: words observed (zeros), y drawn."""
        data = CorpusData(jnp.zeros(doc_ids.shape, jnp.int32), doc_ids,
                          jnp.zeros(num_block_docs + 1, jnp.int32),  # offsets: only D is read
                          jax.ShapeDtypeStruct((1, num_block_docs), jnp.float32), None, None)
        return handlers.trace(handlers.seed(handlers.condition(declaration, fixed), key)
                              ).get_trace(data)

    prior = trace(jax.random.fold_in(key, 2**31 - 1), jnp.zeros(1, jnp.int32), 1, {})
    fixed = {"phi": prior["phi"]["value"], "eta": prior["eta"]["value"]}

    # every block the same shape (one compilation): `block` documents and one more, which
    # takes the padding tokens; the last block's missing documents are empty
    block_tokens = max(int(offsets[min(s + block, num_docs)] - offsets[s])
                       for s in range(0, num_docs, block))

    @jax.jit
    def block_draw(key, doc_ids):
        t = trace(key, doc_ids, block + 1, fixed)
        return t["z"]["value"], t["y"]["value"][0]

    cdf = np.cumsum(np.asarray(fixed["phi"], np.float64), axis=1)
    cdf /= cdf[:, -1:]
    words = np.empty(offsets[-1], np.int32)
    labels = np.empty(num_docs, np.int32)
    for b, start in enumerate(range(0, num_docs, block)):
        stop = min(start + block, num_docs)
        n = int(offsets[stop] - offsets[start])
        doc_ids = np.full(block_tokens, block, np.int32)
        doc_ids[:n] = np.repeat(np.arange(stop - start, dtype=np.int32), lengths[start:stop])
        z, y = block_draw(jax.random.fold_in(key, b), jnp.asarray(doc_ids))
        z = np.asarray(z)[:n]
        labels[start:stop] = np.asarray(y)[:stop - start]
        u = rng.random(z.shape[0])
        block_words = words[offsets[start]:offsets[stop]]
        for k in np.unique(z):
            at = np.flatnonzero(z == k)
            block_words[at] = np.minimum(np.searchsorted(cdf[k], u[at], side="right"),
                                         vocab_size - 1)
        if progress:
            print(f"  simulated documents {start:,}-{stop:,}", end="\r", flush=True)
    if progress:
        print()
    return words, offsets, labels


def simulated_corpus(num_docs: int, mean_length: float, vocab_size: int, num_topics: int,
                     seed: int = 0, cache: str | None = None, **kwargs):
    """:func:`simulate`'s corpus as a :class:`topiczoo.corpus.Corpus` (words ``w0``, ``w1``,
    ...), kept in the ``.npz`` file ``cache`` and read from it when it exists."""
    from topiczoo.corpus import Corpus

    if cache is None or not os.path.exists(cache):
        words, offsets, labels = simulate(num_docs, mean_length, vocab_size, num_topics, seed,
                                          **kwargs)
        if cache is not None:
            np.savez(cache, words=words, doc_offsets=offsets, labels=labels)
    else:
        with np.load(cache) as f:
            words, offsets, labels = f["words"], f["doc_offsets"], f["labels"]
    return Corpus(words, offsets, tuple(f"w{i}" for i in range(vocab_size)), labels=labels)
