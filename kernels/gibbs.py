"""One numpyro ``MCMCKernel`` that composes a model family's pure Gibbs blocks.

The sampler contract (blackjax's style: pure functions over explicit NamedTuple states):

* a model family builds a :class:`Sampler`: ``init(key, data) -> state``; blocks
  ``(key, state, data) -> state``, each drawing one group of variables from its exact
  conditional (or leaving the posterior invariant, as a Metropolis-Hastings step does);
  ``monitors(state, data) -> dict`` of small label-invariant quantities; and
  ``snapshot(state) -> dict`` of the global arrays prediction needs;
* :class:`GibbsKernel` runs the blocks in order (a deterministic-scan Gibbs sampler: each block
  leaves the posterior invariant, so their cycle does) and keeps the family's state, the
  monitors of the last draw (``info``, what numpyro collects), the iteration count and the
  chain's key in a :class:`ChainState`, as numpyro's HMC keeps its diagnostics beside ``z``.

The kernel knows nothing of any model: which blocks, states and monitors exist is the
family's (``topiczoo.models``; the whole interface a family provides is
``topiczoo.models.family.ModelFamily``). It works with ``numpyro.infer.MCMC`` for
``chain_method="sequential"`` and ``"vectorized"`` (batched keys: the kernel vmaps itself;
host callbacks loop over the chain axis), thinning, ``post_warmup_state`` continuation and
``arviz.from_numpyro``. Its step is compiled once per sampler and data shape (a ``jax.jit``
with the sampler as static argument), so many runs of one model reuse one executable.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.infer
import numpyro.infer.initialization
from numpyro.infer.mcmc import MCMCKernel

from topiczoo.kernels import assignments

# arviz_base.from_numpyro reads ``numpyro.infer.initialization`` as an attribute of the package.
# Importing arviz before numpyro leaves the submodule in sys.modules but not as that attribute
# (a later ``import numpyro.infer.initialization`` then does not set it), so set it here.
if not hasattr(numpyro.infer, "initialization"):
    numpyro.infer.initialization = sys.modules["numpyro.infer.initialization"]


class CorpusData(NamedTuple):
    """The arrays a kernel reads (numpyro's ``model_args[0]``).

    words:       int32 [N]     word id of each token
    doc_ids:     int32 [N]     document of each token
    doc_offsets: int32 [D+1]   tokens of d are words[doc_offsets[d]:doc_offsets[d+1]]
    y:           float32 [T, D] responses coded by the model's response (T = 0 if none)
    word_offsets, word_tokens: int32 [V+1], int32 [N] the tokens of each word
                 (``kernels.assignments.word_token_index``), built once with the data for the
                 host sweeps that read it; None where the family does not use it (a sweep
                 then builds it at each call)
    """

    words: jax.Array
    doc_ids: jax.Array
    doc_offsets: jax.Array
    y: jax.Array
    word_offsets: jax.Array | None = None
    word_tokens: jax.Array | None = None
    buckets: Any = None


class Sampler(NamedTuple):
    """A family's sampler as pure functions (see the module docstring).

    name: what ``fit(..., sampler=name)`` calls it; init: ``(key, data) -> state``;
    blocks: tuple of ``(key, state, data) -> state``; monitors: ``(state, data) -> dict`` of
    per-draw quantities (collected by numpyro); snapshot: ``(state) -> dict`` of the global
    arrays kept for prediction (numpy-convertible, one chain); label_invariant: the names of
    the monitors whose value does not depend on how topics are labelled (comparable across
    chains: the ones R-hat, ESS and the convergence plots use). A family whose state has a
    capacity (the sHDP's topic slots) also gives ``overflowed(state) -> bool`` (the chunk ran
    out of capacity and must be redone) and ``grow(state) -> state`` (more capacity, the same
    chain: batched states grow too); :func:`topiczoo.fit.fit` then redoes the chunk from its
    grown start, so the draws are those of a run started with the larger capacity. A family
    whose state layout changed gives ``upgrade(named, data) -> named``: the state leaves of a
    checkpoint written in an earlier layout (``jax.tree_util.keystr`` path -> array with a
    leading chain axis) in the current one, ``named`` itself when they already are. A
    family that can say how much memory a run takes gives ``memory(sizes) -> {part: bytes}``
    (``sizes``: num_chains, num_docs, num_tokens, vocab_size, num_tasks, num_snapshots,
    num_draws): an estimate of its largest arrays, which ``fit`` checks against the machine's
    memory before anything large is allocated (``topiczoo.memory.check_memory``). A sampler
    whose blocks read more than the corpus's arrays gives ``prepare(data) -> data``: the
    :class:`CorpusData` with them added (host-side, once, before the run:
    :meth:`GibbsKernel.prepare`). A family whose chains can start in several ways names them
    in ``starts``: ``(name, init)`` pairs, the default (``init`` itself) first;
    :func:`start_function` picks one by name (``fit(init=...)``). A sampler whose first
    draws are not the posterior's by design (an annealed burn-in, ``kernels.tempering``) gives
    ``burn_in(state) -> int``: how many of the iterations to come from ``state`` (its own,
    with or without a leading chain axis; None: a fresh start) are such, which ``fit``
    refuses to keep as post-burn-in draws.

    Build a family's samplers through a cache (e.g. ``functools.lru_cache`` on the model and
    V): the kernel compiles its step once per ``Sampler`` object, so equal models then share
    one compiled step.
    """

    name: str
    init: Callable
    blocks: tuple
    monitors: Callable
    snapshot: Callable
    label_invariant: tuple = ()
    overflowed: Callable | None = None
    grow: Callable | None = None
    upgrade: Callable | None = None
    memory: Callable | None = None
    prepare: Callable | None = None
    starts: tuple = ()
    burn_in: Callable | None = None


def start_function(sampler: Sampler, start: str | None = None) -> Callable:
    """The ``(key, data) -> state`` of the named start of ``sampler`` (one of its ``starts``);
    ``sampler.init``, the family's default, for None. ``ValueError`` naming the starts the
    sampler has for any other name."""
    if start is None:
        return sampler.init
    named = dict(sampler.starts)
    if start not in named:
        offered = ", ".join(named) or "none but its default (init=None)"
        raise ValueError(f"sampler {sampler.name} has no start {start!r}; its starts: {offered}")
    return named[start]


class ChainState(NamedTuple):
    """What numpyro carries from draw to draw for one chain.

    state:     the family's own NamedTuple state (e.g. topics, eta, augmentation)
    info:      dict of the monitors of this draw (numpyro's ``sample_field``)
    iteration: int32 number of completed Gibbs cycles
    rng_key:   PRNG key
    """

    state: Any
    info: dict
    iteration: jax.Array
    rng_key: jax.Array


def corpus_arrays(words, doc_offsets, y, vocab_size: int | None = None) -> CorpusData:
    """:class:`CorpusData` from token word ids [N], offsets [D+1] and coded responses [T, D];
    with ``vocab_size`` (V) also the word -> tokens index (O(N + V), once)."""
    offsets = np.asarray(doc_offsets)
    doc_ids = np.repeat(np.arange(len(offsets) - 1, dtype=np.int32), np.diff(offsets))
    index = (None, None)
    if vocab_size is not None:
        index = tuple(jnp.asarray(a) for a in assignments.word_token_index(words, vocab_size))
    return CorpusData(jnp.asarray(words, jnp.int32), jnp.asarray(doc_ids, jnp.int32),
                      jnp.asarray(offsets, jnp.int32), jnp.asarray(y, jnp.float32), *index)


def init_chain(sampler: Sampler, key, data: CorpusData, start: str | None = None) -> ChainState:
    """One chain's start: the sampler's ``init`` (or its named ``start``,
    :func:`start_function`) and the monitors of that state."""
    key, init_key = jax.random.split(key)
    state = start_function(sampler, start)(init_key, data)
    return ChainState(state, sampler.monitors(state, data), jnp.zeros((), jnp.int32), key)


def step_chain(sampler: Sampler, chain: ChainState, data: CorpusData) -> ChainState:
    """One Gibbs cycle of one chain: every block in turn, then the monitors (pure; vmap it
    over chains, or over chains and data sets together)."""
    key, *block_keys = jax.random.split(chain.rng_key, len(sampler.blocks) + 1)
    state = chain.state
    for block, block_key in zip(sampler.blocks, block_keys):
        state = block(block_key, state, data)
    return ChainState(state, sampler.monitors(state, data), chain.iteration + 1, key)


@partial(jax.jit, static_argnums=(0, 3))
def _init(sampler, rng_key, data, start=None):
    if jnp.ndim(rng_key) > 1:
        return jax.vmap(lambda k: init_chain(sampler, k, data, start))(rng_key)
    return init_chain(sampler, rng_key, data, start)


@partial(jax.jit, static_argnums=0)
def _step(sampler, chain, data):
    if jnp.ndim(chain.rng_key) > 1:
        return jax.vmap(lambda c: step_chain(sampler, c, data))(chain)
    return step_chain(sampler, chain, data)


class GibbsKernel(MCMCKernel):
    """A model family's Gibbs sampler as a numpyro kernel.

    Args:
      model: a model of ``topiczoo.models`` (anything with ``sampler(name, vocab_size, task)``
        returning a :class:`Sampler`, and ``declaration_for(vocab_size)``).
      vocab_size: V of the corpus the kernel will be run on.
      sampler: which of the family's samplers (``model.samplers``; default ``"exact"``).
      task: the :class:`topiczoo.models.tasks.Task` of the labels (default: the model's own
        first task kind, enough for the tiny hand-made data of the tests).
      num_threads: threads of the sampler's host steps (default: the cores this process may
        use); the draws do not depend on it.
      start: how the chains start: one of the sampler's named ``starts`` (the families here:
        ``"dispersed"``, ``"uniform"``), or None for its default.

    Use: ``MCMC(GibbsKernel(model, V), num_warmup=..., num_samples=..., num_chains=4,
    chain_method="vectorized").run(key, kernel.prepare(data))`` with ``data`` from
    :func:`topiczoo.models.supervised.corpus_data`.
    """

    sample_field = "info"

    def __init__(self, model, vocab_size: int, *, sampler: str = "exact", task=None,
                 num_threads: int | None = None, start: str | None = None):
        self._model = model
        self.vocab_size = int(vocab_size)
        self.sampler = model.sampler(sampler, self.vocab_size, task, num_threads=num_threads)
        start_function(self.sampler, start)  # a start the sampler lacks: ValueError now
        self.start = start

    @property
    def model(self):
        """The model's numpyro declaration as a function of the :class:`CorpusData` (lets
        ``arviz.from_numpyro`` and numpyro utilities see the model)."""
        return self._model.declaration_for(self.vocab_size)

    @property
    def spec(self):
        """The model (``topiczoo.models``) this kernel samples."""
        return self._model

    @property
    def default_fields(self):
        """numpyro collects the ``info`` dict of each state (the monitors)."""
        return ("info",)

    def postprocess_fn(self, model_args, model_kwargs):
        """The identity: the monitors are already in the units they are reported in."""
        return lambda info: info

    def prepare(self, data: CorpusData) -> CorpusData:
        """``data`` with what the sampler's blocks read beyond the corpus's arrays
        (``Sampler.prepare``; ``data`` itself for most samplers). Host-side, once per corpus."""
        return data if self.sampler.prepare is None else self.sampler.prepare(data)

    def init(self, rng_key, num_warmup, init_params, model_args, model_kwargs):
        data = model_args[0]
        self._check_data(data)
        return _init(self.sampler, rng_key, data, self.start)

    def _check_data(self, data):
        num_docs = data.doc_offsets.shape[0] - 1
        if data.y.ndim != 2 or data.y.shape[-1] != num_docs:
            raise ValueError(f"responses y have shape {data.y.shape}; expected [T, D={num_docs}]")
        words = np.asarray(data.words)
        if words.size and (words.min() < 0 or words.max() >= self.vocab_size):
            raise ValueError(f"word ids must lie in [0, {self.vocab_size}); got "
                             f"[{words.min()}, {words.max()}]")

    def state_shapes(self, data: CorpusData, num_chains: int) -> ChainState:
        """Shapes and dtypes (``jax.ShapeDtypeStruct``) of a :class:`ChainState` with a
        leading chain axis of ``num_chains``, as :func:`topiczoo.fit.fit` stores it."""
        keys = jax.ShapeDtypeStruct((num_chains, 2), jnp.uint32)
        return jax.eval_shape(partial(_init, self.sampler, start=self.start), keys, data)

    def sample(self, state, model_args, model_kwargs):
        return _step(self.sampler, state, model_args[0])
