"""The sampling side of the exactness tests: tiny corpora as the package's arrays, and runs of
its Gibbs kernel through numpyro's MCMC."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import MCMC

from topiczoo.corpus import Corpus
from topiczoo.kernels.gibbs import CorpusData, GibbsKernel


def tiny_data(docs, labels=None, response=None):
    """CorpusData from a list of word-id lists and optional labels (raw 0/1 or ratings)."""
    words = np.concatenate([np.asarray(d, np.int32) for d in docs])
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int32)
    doc_ids = np.repeat(np.arange(len(docs), dtype=np.int32), [len(d) for d in docs])
    if response is None:
        y = np.zeros((0, len(docs)), np.float32)
    else:
        y = response.encode(np.asarray(labels))
    return CorpusData(jnp.asarray(words), jnp.asarray(doc_ids), jnp.asarray(offsets),
                      jnp.asarray(y))


def small_corpus():
    """A deterministic Corpus of 12 short documents over 8 words, labels alternating 0/1."""
    rng = np.random.default_rng(0)
    docs = [rng.integers(0, 8, size=rng.integers(3, 9)) for _ in range(12)]
    lengths = [len(d) for d in docs]
    return Corpus(np.concatenate(docs).astype(np.int32),
                  np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                  tuple(f"w{i}" for i in range(8)), labels=np.arange(12) % 2)


def interrupt_at(iteration):
    """A ``fit`` callback that raises KeyboardInterrupt (as Ctrl-C) once ``iteration``
    iterations are done: an interrupted run, with its checkpoint written."""
    def callback(result):
        if result.iterations_done >= iteration:
            raise KeyboardInterrupt

    return callback


def sample_assignments(model, data, vocab_size, *, num_samples, seed, num_chains=4,
                       num_warmup=200, chain_method="vectorized", sampler="exact") -> np.ndarray:
    """Draws of Z ([draws, N], chains after one another) from ``MCMC`` with the kernel
    (``sampler``: a sampler name of the model's family, with options)."""
    kernel = GibbsKernel(model, vocab_size, sampler=sampler)
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_samples,
                num_chains=num_chains, chain_method=chain_method, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), kernel.prepare(data), extra_fields=("state.z",))
    return np.asarray(mcmc.get_extra_fields()["state.z"])
