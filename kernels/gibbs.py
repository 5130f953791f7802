"""One numpyro ``MCMCKernel`` that cycles through pure Gibbs update blocks.

A block is a pure function ``block(kernel, key, state, data) -> state`` that draws one group
of variables from its exact conditional. The kernel runs its model's blocks in order (a
deterministic-scan Gibbs sampler: each block leaves the posterior invariant, so their cycle
does) and then recomputes the small per-draw quantities that numpyro collects (``params``):
eta, the augmentation summaries and the label-invariant monitors. Z and the K x V counts
stay in the state and are never collected per draw.

It works with ``numpyro.infer.MCMC`` for ``chain_method="sequential"`` and ``"vectorized"``
(batched keys: the kernel vmaps itself; host callbacks loop over the chain axis), thinning,
``post_warmup_state`` continuation and ``arviz.from_numpyro``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln
import numpyro.infer
import numpyro.infer.initialization as _initialization
from numpyro.infer.mcmc import MCMCKernel

from topiczoo.kernels.eta import draw_eta
from topiczoo.kernels.topics import (
    TopicState,
    collapsed_topics_step,
    counts_from_assignments,
    topic_proportions,
)

# arviz_base.from_numpyro reads ``numpyro.infer.initialization`` as an attribute; it is missing
# when arviz (which lazy-loads numpyro) is imported before numpyro. Make it present.
numpyro.infer.initialization = _initialization


class CorpusData(NamedTuple):
    """The arrays a kernel reads (numpyro's ``model_args[0]``).

    words:       int32 [N]     word id of each token
    doc_ids:     int32 [N]     document of each token
    doc_offsets: int32 [D+1]   tokens of d are words[doc_offsets[d]:doc_offsets[d+1]]
    y:           float32 [T, D] responses coded by the model's response (T = 0 if none)
    """

    words: jax.Array
    doc_ids: jax.Array
    doc_offsets: jax.Array
    y: jax.Array


class GibbsState(NamedTuple):
    """State of one chain.

    params:       dict of the small per-draw quantities numpyro collects (see ``monitors``)
    topics:       :class:`~topiczoo.kernels.topics.TopicState` (z, n_dk, n_wk, n_k)
    eta:          float32 [T, K] classifier weights
    augmentation: float32 [T, D] the response's augmentation variables
    iteration:    int32 number of completed Gibbs cycles
    rng_key:      PRNG key
    """

    params: dict
    topics: TopicState
    eta: jax.Array
    augmentation: jax.Array
    iteration: jax.Array
    rng_key: jax.Array


def corpus_data(corpus, response=None) -> CorpusData:
    """Arrays of a :class:`topiczoo.corpus.Corpus` for the kernel, labels coded by ``response``.

    Raises ``ValueError`` for empty training documents or labels the response rejects.
    """
    corpus.require_nonempty("training")
    if response is None:
        y = np.zeros((0, corpus.num_docs), np.float32)
    else:
        if corpus.labels is None:
            raise ValueError("a supervised model needs a corpus with labels")
        labels = np.asarray(corpus.labels)
        # multi-label corpora store [D, L]; responses take tasks first, [T, D]
        y = response.encode(labels.T if labels.ndim == 2 else labels)
    return CorpusData(
        jnp.asarray(corpus.words, jnp.int32),
        jnp.asarray(corpus.doc_ids, jnp.int32),
        jnp.asarray(corpus.doc_offsets, jnp.int32),
        jnp.asarray(y, jnp.float32),
    )


# --------------------------------------------------------------------------------------------
# Blocks


def _gaussian_form(kernel, state, data):
    response = kernel.spec.response
    if response is None:
        empty = jnp.zeros((0, data.doc_offsets.shape[0] - 1), jnp.float32)
        return empty, empty
    return response.gaussian_form(data.y, state.augmentation)


def eta_block(kernel, key, state, data):
    """eta | Z, augmentation: Gaussian (``kernels.eta``)."""
    psi, rho = _gaussian_form(kernel, state, data)
    zbar = topic_proportions(state.topics.n_dk)
    return state._replace(eta=draw_eta(key, zbar, psi, rho, kernel.spec.nu2))


def topics_block(kernel, key, state, data):
    """Z | eta, augmentation: one collapsed sweep over all tokens."""
    psi, rho = _gaussian_form(kernel, state, data)
    model = kernel.spec
    topics = collapsed_topics_step(key, state.topics, data.words, data.doc_offsets, state.eta,
                                   psi, rho, model.alpha_per_topic, model.beta)
    return state._replace(topics=topics)


def augmentation_block(kernel, key, state, data):
    """augmentation | Z, eta: the response's own draw, document by document."""
    omega = state.eta @ topic_proportions(state.topics.n_dk).T
    aug = kernel.spec.response.draw_augmentation(key, data.y, omega, state.augmentation)
    return state._replace(augmentation=aug)


BLOCKS = {"eta": eta_block, "topics": topics_block, "augmentation": augmentation_block}


# --------------------------------------------------------------------------------------------
# Monitors


def collapsed_log_likelihood(topics: TopicState, beta: float) -> jax.Array:
    """log p(W | Z) with Phi integrated out (label-invariant), in nats.

        sum_k [lgamma(V beta) - lgamma(n_k + V beta)] + sum_wk [lgamma(n_wk + beta) - lgamma(beta)]

    No count exceeds the number of tokens N (a static shape), so when N + 1 < V K the second
    sum reads its terms from a table of lgamma(n + beta) - lgamma(beta), n = 0..N: N + 1 lgamma
    evaluations instead of V K (at K = 50 on 20news-binary 114k instead of 699k: 1.3 ms, not 6).
    The table holds the very float32 values the direct formula computes, so the sum is the same.
    """
    vocab_size, num_topics = topics.n_wk.shape[-2:]
    num_tokens = topics.z.shape[-1]
    n_k = topics.n_k.astype(jnp.float32)
    per_topic = gammaln(vocab_size * beta) - gammaln(n_k + vocab_size * beta)
    if num_tokens + 1 < vocab_size * num_topics:
        table = gammaln(jnp.arange(num_tokens + 1, dtype=jnp.float32) + beta) - gammaln(beta)
        # the barrier keeps XLA from fusing the table into the gather (recomputing it per count)
        per_word = jnp.take(jax.lax.optimization_barrier(table), topics.n_wk)
    else:
        per_word = gammaln(topics.n_wk.astype(jnp.float32) + beta) - gammaln(beta)
    return per_topic.sum() + per_word.sum()


def monitors(model, state: GibbsState, data: CorpusData) -> dict:
    """The per-draw quantities collected by numpyro.

    log_likelihood: log p(W | Z), nats.  For supervised models also
    eta [T, K]; eta_norm: ||eta||_F; omega_mean_abs: mean |omega_td|;
    train_loss: mean over documents and tasks of minus the log pseudo-likelihood (nats);
    augmentation_mean [T]: mean augmentation variable per task (s2 for the Gaussian);
    and the response's own (``response.monitors``): train_accuracy for classifiers,
    residual_norm and train_mse for regression.
    """
    params = {"log_likelihood": collapsed_log_likelihood(state.topics, model.beta)}
    response = model.response
    if response is not None:
        omega = state.eta @ topic_proportions(state.topics.n_dk).T
        num_tasks = state.eta.shape[0]
        params.update(
            eta=state.eta,
            eta_norm=jnp.sqrt(jnp.sum(state.eta**2)),
            omega_mean_abs=jnp.mean(jnp.abs(omega)),
            train_loss=-jnp.mean(response.log_pseudo_likelihood(data.y, omega)),
            augmentation_mean=jnp.mean(state.augmentation.reshape(num_tasks, -1), axis=-1),
            **response.monitors(data.y, omega),
        )
    return params


# --------------------------------------------------------------------------------------------
# The kernel


class GibbsKernel(MCMCKernel):
    """Exact Gibbs sampler of a :class:`topiczoo.models.TopicModel` for numpyro's ``MCMC``.

    Args:
      model: the model spec (its ``blocks`` say which updates run, in order).
      vocab_size: V of the corpus the kernel will be run on.

    Use: ``MCMC(GibbsKernel(model, V), num_warmup=..., num_samples=..., num_chains=4,
    chain_method="vectorized").run(key, corpus_data(corpus, model.response))``.
    """

    sample_field = "params"

    def __init__(self, model, vocab_size: int):
        self._model = model
        self.vocab_size = int(vocab_size)
        unknown = [b for b in model.blocks if b not in BLOCKS]
        if unknown:
            raise ValueError(f"unknown Gibbs blocks {unknown}; known: {sorted(BLOCKS)}")
        self.blocks = tuple(BLOCKS[b] for b in model.blocks)

    @property
    def model(self):
        """The model's numpyro declaration bound to the kernel's arguments: a function of the
        :class:`CorpusData` (lets ``arviz.from_numpyro`` and numpyro utilities see the model)."""
        spec, vocab_size = self._model, self.vocab_size

        def declaration(data: CorpusData):
            kwargs = dict(doc_ids=data.doc_ids, num_docs=data.doc_offsets.shape[0] - 1,
                          num_topics=spec.num_topics, vocab_size=vocab_size,
                          alpha=spec.alpha_per_topic, beta=spec.beta, words=data.words)
            if spec.response is not None:
                kwargs.update(nu2=spec.nu2, num_tasks=data.y.shape[0], y=data.y)
            return spec.declaration(**kwargs)

        return declaration

    @property
    def spec(self):
        return self._model

    @property
    def default_fields(self):
        return ("params",)

    def postprocess_fn(self, model_args, model_kwargs):
        return lambda params: params

    def init(self, rng_key, num_warmup, init_params, model_args, model_kwargs):
        data = model_args[0]
        self._check_data(data)
        if jnp.ndim(rng_key) > 1:
            return jax.vmap(lambda k: self._init_one(k, data))(rng_key)
        return self._init_one(rng_key, data)

    def _check_data(self, data):
        num_docs = data.doc_offsets.shape[0] - 1
        unsupervised = self._model.response is None
        if data.y.shape[-1] != num_docs or (unsupervised and data.y.shape[0] != 0):
            raise ValueError(f"responses y have shape {data.y.shape}; expected [T, D={num_docs}]")
        words = np.asarray(data.words)
        if words.size and (words.min() < 0 or words.max() >= self.vocab_size):
            raise ValueError(f"word ids must lie in [0, {self.vocab_size}); got "
                             f"[{words.min()}, {words.max()}]")

    def _init_one(self, key, data: CorpusData) -> GibbsState:
        # Z uniformly at random, lambda = 1, eta = 0 (drawn first in the cycle), as the papers.
        key, z_key = jax.random.split(key)
        num_docs = data.doc_offsets.shape[0] - 1
        model = self._model
        z = jax.random.randint(z_key, data.words.shape, 0, model.num_topics, jnp.int32)
        topics = counts_from_assignments(z, data.words, data.doc_ids, num_docs,
                                         model.num_topics, self.vocab_size)
        num_tasks = data.y.shape[0]
        response = model.response
        aug = response.init_augmentation(data.y) if response is not None else data.y
        state = GibbsState({}, topics, jnp.zeros((num_tasks, model.num_topics), jnp.float32),
                           aug, jnp.zeros((), jnp.int32), key)
        return state._replace(params=monitors(model, state, data))

    def sample(self, state, model_args, model_kwargs):
        data = model_args[0]
        if jnp.ndim(state.rng_key) > 1:
            return jax.vmap(self._sample_one, in_axes=(0, None))(state, data)
        return self._sample_one(state, data)

    def _sample_one(self, state: GibbsState, data: CorpusData) -> GibbsState:
        key, *block_keys = jax.random.split(state.rng_key, len(self.blocks) + 1)
        for block, block_key in zip(self.blocks, block_keys):
            state = block(self, block_key, state, data)
        state = state._replace(iteration=state.iteration + 1, rng_key=key)
        return state._replace(params=monitors(self._model, state, data))
